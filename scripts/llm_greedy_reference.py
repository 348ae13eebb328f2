#!/usr/bin/env python3
"""Reference greedy continuations from llama.cpp for the model-correctness test.

Build llama.cpp as RECIPES.md says (the `llama-cpp-python` source package vendors it), then:

    python3 scripts/llm_greedy_reference.py --llama-completion PATH/llama-completion \
        --model smollm2-135m-instruct=PATH/SmolLM2-135M-Instruct.Q4_1.gguf [--model ID=PATH ...]

writes tests/fixtures/llm/greedy_reference.json: for each model and prompt, the text llama.cpp
generates greedily (temperature 0) in N tokens. Prompts are complete chat prompts (ChatML for
the instruct models) or plain text for base models.
"""
import argparse
import hashlib
import json
import pathlib
import subprocess

CHATML = "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
SMOL_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
QWEN_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

QUESTIONS = [
    "What is the capital of France? Answer in one short English sentence.",
    "List three primary colors.",
    "How long should I hold the reset button of a water filter?",
    "Write a Python function that adds two numbers.",
]
PLAIN = [
    "The capital of France is",
    "Once upon a time, in a small village,",
    "def fibonacci(n):",
]


def prompts_for(model_id):
    if model_id.startswith("smollm2"):
        return [CHATML.format(system=SMOL_SYSTEM, user=q) for q in QUESTIONS]
    if model_id.startswith("qwen"):
        return [CHATML.format(system=QWEN_SYSTEM, user=q) for q in QUESTIONS]
    return PLAIN


def complete(binary, model, prompt, n):
    out = subprocess.run(
        [binary, "-m", model, "-p", prompt, "-n", str(n), "--temp", "0", "-no-cnv",
         "--no-display-prompt", "-t", "2", "--seed", "0", "-c", "2048", "--no-warmup"],
        check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    ).stdout
    # llama-completion ends its output with a blank line, and marks an end-of-text token.
    out = out.removesuffix("\n\n")
    eos = out.endswith(" [end of text]\n")
    return out.removesuffix(" [end of text]\n"), eos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-completion", required=True)
    ap.add_argument("--model", action="append", required=True, help="ID=PATH")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--out", default="tests/fixtures/llm/greedy_reference.json")
    args = ap.parse_args()
    result = {"tool": "llama.cpp llama-completion (vendored in llama-cpp-python 0.3.36), --temp 0",
              "tokens": args.tokens, "models": {}}
    for spec in args.model:
        model_id, path = spec.split("=", 1)
        sha = hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
        cases = []
        for p in prompts_for(model_id):
            text, eos = complete(args.llama_completion, path, p, args.tokens)
            cases.append({"prompt": p, "text": text, "end_of_text": eos})
        result["models"][model_id] = {"sha256": sha, "cases": cases}
    pathlib.Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
