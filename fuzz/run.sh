#!/usr/bin/env bash
# Fuzz each target for a fixed time, one after another (not in CI; see README "Fuzzing").
#   bash fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain RUSTC_BOOTSTRAP=1 lets
# it use the nightly-only sanitizer flags. Crashing inputs land in fuzz/artifacts/<target>/;
# keep each as a regression case in tests/ (with the input it crashed on).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-240}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(dataset_line gguf_metadata gguf_tokenizer pdf_text pdf_nested template_render)
export RUSTC_BOOTSTRAP=1

# Seeds: real inputs of each kind from the repository (copied, not committed twice).
mkdir -p corpus/dataset_line corpus/gguf_metadata corpus/gguf_tokenizer corpus/pdf_text corpus/pdf_nested corpus/template_render
cp ../prompts/*.md ../judges/*.md ../datasets/*/prompt.md corpus/template_render/ 2>/dev/null || true
split -l 1 ../datasets/trailgear/questions.jsonl corpus/dataset_line/q-
cp ../datasets/trailgear/pdf/*.pdf ../tests/fixtures/corpus/pdf/*.pdf ../tests/fixtures/corpus/bad/*.pdf corpus/pdf_text/
python3 - <<'PY'
# A small well-formed GGUF (v3): architecture, a tiny gpt2 vocabulary, one F32 tensor.
import struct
def s(x): b = x.encode(); return struct.pack('<Q', len(b)) + b
def kv_str(k, v): return s(k) + struct.pack('<I', 8) + s(v)
def kv_arr(k, items): return s(k) + struct.pack('<IIQ', 9, 8, len(items)) + b''.join(s(i) for i in items)
kvs = [kv_str('general.architecture', 'llama'), kv_str('tokenizer.ggml.model', 'gpt2'),
       kv_arr('tokenizer.ggml.tokens', ['a', 'b', 'ab']), kv_arr('tokenizer.ggml.merges', ['a b'])]
out = b'GGUF' + struct.pack('<IQQ', 3, 1, len(kvs)) + b''.join(kvs)
out += s('weight') + struct.pack('<IQQIQ', 2, 4, 2, 0, 0)
out += b'\0' * (-len(out) % 32) + b'\0' * 32
open('corpus/gguf_metadata/tiny.gguf', 'wb').write(out)

# A compressed-stream bomb: one page whose content stream is 2 GiB of zeros deflated to about
# 2 MB (lopdf used to inflate it whole, and the failed allocation aborted the process).
import zlib
z = zlib.compressobj(9)
block = b'\0' * (1 << 20)
data = b''.join(z.compress(block) for _ in range(2048)) + z.flush()
objs = [b'<< /Type /Catalog /Pages 2 0 R >>', b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
        b'<< /Length %d /Filter /FlateDecode >>\nstream\n' % len(data) + data + b'\nendstream']
pdf, offsets = b'%PDF-1.4\n', []
for i, body in enumerate(objs):
    offsets.append(len(pdf))
    pdf += b'%d 0 obj\n' % (i + 1) + body + b'\nendobj\n'
xref = len(pdf)
pdf += b'xref\n0 %d\n0000000000 65535 f \n' % (len(objs) + 1) + b''.join(b'%010d 00000 n \n' % o for o in offsets)
pdf += b'trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n' % (len(objs) + 1, xref)
open('corpus/pdf_text/inflate-bomb.pdf', 'wb').write(pdf)
PY

for target in "${targets[@]}"; do
  echo "== $target: ${seconds}s" >&2
  max_len=4096
  # pdf_text: large enough that the 2 MB bomb seed is read whole, not cut to a harmless prefix.
  [ "$target" = pdf_text ] && max_len=3145728
  # No sanitizer (safe Rust; panics and overflow checks are what we look for) keeps the
  # build and each execution fast; debug assertions turn arithmetic overflow into a finding.
  nice -n 10 cargo fuzz run --sanitizer none --debug-assertions "$target" -- \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    >"$target.log" 2>&1 || echo "$target: FOUND A CRASH, see fuzz/$target.log and fuzz/artifacts/$target/" >&2
  tail -n 12 "$target.log" >&2
done
