#!/usr/bin/env python3
"""Differential reference for the transformer architectures: tiny GGUF files with random
weights, one per architecture and RoPE scaling, and llama.cpp's logits at every position.

The files exercise what each architecture adds (fused projections, partial rotary, q/k norms,
soft-capping, sliding windows, Llama 3 frequency factors, linear and YaRN scaling), at a size
that is committed with the tests. tests/llm_architectures.rs runs Assay's runtime on the same
tokens and compares. Needs llama.cpp's Python binding (built from the llama-cpp-python source
package, which vendors llama.cpp and its gguf-py) and numpy:

    python3 -m venv ~/.cache/assay/llama-py
    ~/.cache/assay/llama-py/bin/pip install llama-cpp-python==0.3.36 numpy
    PYTHONPATH=PATH/llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py \
        ~/.cache/assay/llama-py/bin/python scripts/llm_arch_reference.py

writes tests/fixtures/llm/arch/*.gguf and tests/fixtures/llm/arch/reference.json.
"""
import hashlib
import json
import pathlib

import gguf
import numpy as np
from llama_cpp import Llama

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "llm" / "arch"
HIDDEN, HEADS, KV_HEADS, FF, LAYERS = 64, 4, 2, 96, 2
TOKENS = [1, 40, 7, 300, 12, 12, 99, 250, 5, 77, 180, 3, 64, 128, 200, 31, 9, 260, 45, 150]


def byte_vocab():
    """A GPT-2 byte-level vocabulary: 256 byte symbols, 60 merges, 4 specials (320 tokens)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    symbols = [chr(c) for c in cs]
    letters = "etaoinshrdlu"
    merges = [f"{a} {b}" for a in letters for b in letters[:5]]
    tokens = symbols + [m.replace(" ", "") for m in merges] + ["<s>", "</s>", "<pad>", "<unk>"]
    types = [gguf.TokenType.NORMAL] * (len(tokens) - 4) + [gguf.TokenType.CONTROL] * 4
    return tokens, types, merges


def rng_for(name):
    return np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))


def write(name, arch, extra_kv, build_tensors, head_dim=HIDDEN // HEADS):
    path = OUT / f"{name}.gguf"
    w = gguf.GGUFWriter(str(path), arch)
    tokens, types, merges = byte_vocab()
    w.add_context_length(4096)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(len(tokens) - 4)
    w.add_eos_token_id(len(tokens) - 3)
    for setter, value in extra_kv:
        getattr(w, setter)(value)
    rng = rng_for(name)

    def t(tname, shape, scale=0.25, around=0.0, values=None):
        if values is None:
            values = around + scale * rng.standard_normal(shape)
        w.add_tensor(tname, np.asarray(values, dtype=np.float32).reshape(shape))

    t("token_embd.weight", (len(tokens), HIDDEN), 1.0)
    t("output_norm.weight", (HIDDEN,), 0.1, 1.0)
    build_tensors(t, head_dim)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path, len(tokens)


def llama_like(q_norm=False, qkv_bias=False, post_norms=False, output=True):
    def build(t, hd):
        if output:
            t("output.weight", (320, HIDDEN), 0.25)
        for i in range(LAYERS):
            p = f"blk.{i}"
            t(f"{p}.attn_norm.weight", (HIDDEN,), 0.1, 1.0)
            t(f"{p}.attn_q.weight", (HEADS * hd, HIDDEN))
            t(f"{p}.attn_k.weight", (KV_HEADS * hd, HIDDEN))
            t(f"{p}.attn_v.weight", (KV_HEADS * hd, HIDDEN))
            if qkv_bias:
                t(f"{p}.attn_q.bias", (HEADS * hd,), 0.1)
                t(f"{p}.attn_k.bias", (KV_HEADS * hd,), 0.1)
                t(f"{p}.attn_v.bias", (KV_HEADS * hd,), 0.1)
            if q_norm:
                t(f"{p}.attn_q_norm.weight", (hd,), 0.1, 1.0)
                t(f"{p}.attn_k_norm.weight", (hd,), 0.1, 1.0)
            t(f"{p}.attn_output.weight", (HIDDEN, HEADS * hd))
            if post_norms:
                t(f"{p}.post_attention_norm.weight", (HIDDEN,), 0.1, 1.0)
                t(f"{p}.post_ffw_norm.weight", (HIDDEN,), 0.1, 1.0)
            t(f"{p}.ffn_norm.weight", (HIDDEN,), 0.1, 1.0)
            t(f"{p}.ffn_gate.weight", (FF, HIDDEN))
            t(f"{p}.ffn_up.weight", (FF, HIDDEN))
            t(f"{p}.ffn_down.weight", (HIDDEN, FF))
    return build


def with_rope_freqs(build, n):
    def b(t, hd):
        build(t, hd)
        # Llama 3's per-frequency divisors: 1 for the fast frequencies, up to 8 for the slow.
        t("rope_freqs.weight", (n,), values=np.geomspace(1.0, 8.0, n))
    return b


def phi3_build(t, hd):
    t("output.weight", (320, HIDDEN), 0.25)
    n_rot = 12
    t("rope_factors_short.weight", (n_rot // 2,), 0.2, 1.5)
    t("rope_factors_long.weight", (n_rot // 2,), 0.5, 4.0)
    for i in range(LAYERS):
        p = f"blk.{i}"
        t(f"{p}.attn_norm.weight", (HIDDEN,), 0.1, 1.0)
        t(f"{p}.attn_qkv.weight", (HEADS * hd + 2 * KV_HEADS * hd, HIDDEN))
        t(f"{p}.attn_output.weight", (HIDDEN, HEADS * hd))
        t(f"{p}.ffn_norm.weight", (HIDDEN,), 0.1, 1.0)
        t(f"{p}.ffn_up.weight", (2 * FF, HIDDEN))
        t(f"{p}.ffn_down.weight", (HIDDEN, FF))


CASES = [
    # name, architecture, metadata, tensors, head_dim
    ("llama", "llama", [], llama_like(), 16),
    ("llama-linear", "llama", [("add_rope_scaling_type", gguf.RopeScalingType.LINEAR),
                               ("add_rope_scaling_factor", 4.0)], llama_like(), 16),
    ("llama3-freqs", "llama", [("add_rope_freq_base", 500000.0)], with_rope_freqs(llama_like(), 8), 16),
    ("qwen2-yarn", "qwen2", [("add_rope_freq_base", 1000000.0),
                             ("add_rope_scaling_type", gguf.RopeScalingType.YARN),
                             ("add_rope_scaling_factor", 4.0),
                             ("add_rope_scaling_orig_ctx_len", 64)], llama_like(qkv_bias=True), 16),
    ("qwen3", "qwen3", [("add_key_length", 24), ("add_value_length", 24)], llama_like(q_norm=True), 24),
    ("phi3", "phi3", [("add_rope_dimension_count", 12),
                      ("add_rope_scaling_orig_ctx_len", 2048),
                      ("add_rope_scaling_attn_factors", 1.19)], phi3_build, 16),
    ("gemma2", "gemma2", [("add_sliding_window", 6),
                          ("add_attn_logit_softcapping", 5.0),
                          ("add_final_logit_softcapping", 15.0)], llama_like(post_norms=True, output=False), 16),
    ("gemma3", "gemma3", [("add_sliding_window", 6), ("add_rope_freq_base", 1000000.0)],
     llama_like(q_norm=True, post_norms=True, output=False), 16),
]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    reference = {"tokens": TOKENS, "models": {}}
    for name, arch, kv, build, hd in CASES:
        path, vocab = write(name, arch, kv, build, hd)
        llm = Llama(model_path=str(path), n_ctx=64, n_batch=64, logits_all=True, n_threads=2,
                    type_k=0, type_v=0, flash_attn=False, verbose=False)
        llm.eval(TOKENS)
        logits = np.array(llm.scores[: len(TOKENS)], dtype=np.float32)
        assert logits.shape == (len(TOKENS), vocab), logits.shape
        reference["models"][name] = {
            "file": path.name,
            "architecture": arch,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "logits": [[round(float(x), 5) for x in row] for row in logits],
        }
        print(f"{name}: {path.stat().st_size} bytes, logits std {logits.std():.3f}")
    (OUT / "reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
