#!/usr/bin/env bash
# On a CUDA machine, with the binaries from scripts/gpu_build.sh (docs/gpu.md):
# - agree: every architecture's differential test against llama.cpp on the GPU; then
#   `assay models check-device` (logits on the GPU against the CPU's, prompt and decode) on
#   synthetic weights of each default model's shapes in the matrix types GGUF files use, on
#   both CUDA paths (candle's quantized kernels, the default for the verified types; f16
#   weights, ASSAY_CUDA_QUANTIZED=0), and on every default model installed: both must agree;
# - synthetic: the synthetic Qwen2.5-1.5B benchmark on the GPU (batch 1 and 16) and the CPU;
# - greedy: greedy answers on the GPU against the CPU's, for each default model installed
#   (reported: rounding differences may part long greedy texts after a while).
#
# Usage: scripts/gpu_check.sh [BINARY]   (default .gpu/assay; the `integration` test binary beside it)
# Env: ASSAY_MODELS (models dir for the model checks), RESULTS (folder for the JSON figures),
#      ONLY=agree|synthetic|greedy to run one part.
set -uo pipefail
bin=${1:-.gpu/assay}
results=${RESULTS:-/tmp/assay-gpu}
mkdir -p "$results"
# The CUDA libraries of a PyTorch cu13 install (site-packages/nvidia/cu13/lib), if any.
libs=$(python3 -c 'import nvidia, os; print(":".join(os.path.join(p, "cu13", "lib") for p in nvidia.__path__))' 2>/dev/null || true)
export LD_LIBRARY_PATH=${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
status=0
models=(smollm2-135m-instruct qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct)
installed() { [ -n "$(ls "${ASSAY_MODELS:-/nonexistent}/$1/"*.gguf 2>/dev/null)" ]; }

if [ "${ONLY:-agree}" == agree ]; then
  echo "== architectures against llama.cpp, on cuda"
  ASSAY_TEST_DEVICE=cuda "$(dirname "$bin")/integration" llm_architectures:: 2>&1 | grep -E 'max \||test result|FAILED|panicked' || status=1
  # The default models' shapes in the types their files hold (and the CPU runs as Q8_0):
  # SmolLM2 Q4_1 (width 576), Qwen2.5-0.5B Q5_0/Q8_0 (896), Qwen2.5-1.5B Q4_K/Q6_K (1536).
  for case in smollm2-135m:q4_1 smollm2-135m:q8_0 qwen2-0.5b:q5_0 qwen2-0.5b:q8_0 qwen2-1.5b:q4_k qwen2-1.5b:q6_k; do
    for path in default f16; do
      echo "== check-device synthetic ${case%%:*} ${case##*:}, cuda $path"
      flag=""; [ $path == f16 ] && flag=0
      ASSAY_CUDA_QUANTIZED=$flag "$bin" models check-device --synthetic "${case%%:*}" --matrix-type "${case##*:}" \
        --json >"$results/check-${case/:/-}-$path.json" 2>/dev/null
      code=$?
      python3 -c 'import json,sys
a=json.load(open(sys.argv[1]))
print("  ".join("%s: rel. error max %.4f median %.4f, same top token %d/%d, not finite %d" % (k, a[k]["max_relative_error"], a[k]["median_relative_error"], a[k]["same_argmax"], a[k]["positions"], a[k]["not_finite"]) for k in ("prompt", "decode")), "->", "agrees" if a["agrees"] else "DIFFERS")' \
        "$results/check-${case/:/-}-$path.json" || echo "  failed (exit $code)"
      [ $code != 0 ] && status=1
    done
  done
  for model in "${models[@]}"; do
    installed "$model" || { echo "== check-device $model: skipped, not installed in ASSAY_MODELS"; continue; }
    for path in default f16; do
      echo "== check-device $model, cuda $path"
      flag=""; [ $path == f16 ] && flag=0
      ASSAY_CUDA_QUANTIZED=$flag "$bin" models check-device "$model" 2>/dev/null
      code=$?
      [ $code != 0 ] && status=1
    done
  done
fi

if [ "${ONLY:-synthetic}" == synthetic ]; then
summary='import json,sys
b=json.load(open(sys.argv[1]))
print("%s: weights made in %.1fs; prompt %.1f tok/s; %s; peak RSS %.0f MiB" % (b["device"], b["setup_s"], b["prompt_tok_per_s"],
  "; ".join("decode batch %d: %.1f tok/s (%.2f ms/step)" % (d["batch"], d["tok_per_s"], d["step_ms"]) for d in b["decode"]), b["peak_rss_mib"] or 0))'
for path in default f16; do
  echo "== synthetic qwen2-1.5b on cuda ($path)"
  flag=""; [ $path == f16 ] && flag=0
  ASSAY_CUDA_QUANTIZED=$flag "$bin" bench --synthetic qwen2-1.5b --device cuda --batch 1,16 --json \
    >"$results/synthetic-cuda-$path.json" && python3 -c "$summary" "$results/synthetic-cuda-$path.json" || status=1
done
echo "== synthetic qwen2-1.5b on cpu ($(nproc) cores)"
"$bin" bench --synthetic qwen2-1.5b --device cpu --batch 1 --json >"$results/synthetic-cpu.json" \
  && python3 -c "$summary" "$results/synthetic-cpu.json" || status=1
fi

# Greedy answers on the GPU against the CPU's, for every default model that is installed, on
# both paths. Reported, not required to match word for word: the check-device figures above
# are the requirement, and rounding differences can part long greedy texts after a while. An
# empty GPU answer (the old fault: end-of-text as the first token) fails.
prompts='What is the capital of France? Answer in one short English sentence.
Write a haiku about a water filter.
List three prime numbers and explain why they are prime.
How do I reset a device whose LED blinks red?'
if [ "${ONLY:-greedy}" == greedy ]; then
  for model in "${models[@]}"; do
    if ! installed "$model"; then
      echo "== greedy $model: skipped, not installed in ASSAY_MODELS"
      continue
    fi
    for path in default f16; do
      echo "== greedy $model: cuda ($path) against cpu"
      flag=""; [ $path == f16 ] && flag=0
      while IFS= read -r prompt; do
        cpu=$("$bin" models try "$model" "$prompt" --max-tokens 48 --device cpu 2>/dev/null)
        gpu=$(ASSAY_CUDA_QUANTIZED=$flag "$bin" models try "$model" "$prompt" --max-tokens 48 --device cuda 2>/dev/null)
        if [ "$cpu" == "$gpu" ] && [ -n "$cpu" ]; then
          echo "same: $prompt -> ${cpu:0:100}"
        else
          echo "different: $prompt"; echo "  cpu: $cpu"; echo "  gpu: $gpu"
          [ -z "$gpu" ] && status=1
        fi
      done <<<"$prompts"
    done
  done
fi
exit $status
