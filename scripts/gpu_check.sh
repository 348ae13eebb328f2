#!/usr/bin/env bash
# On a CUDA machine, with a binary from scripts/gpu_build.sh (docs/gpu.md): the synthetic
# Qwen2.5-1.5B benchmark on the GPU (batch 1 and 16) and on the CPU, then greedy answers on the
# GPU against the CPU's for a few prompts, for each default model installed.
#
# Usage: scripts/gpu_check.sh [BINARY]   (default .gpu/assay)
# Env: ASSAY_MODELS (models dir for the greedy check), RESULTS (folder for the JSON figures),
#      ONLY=synthetic|greedy to run one half.
set -uo pipefail
bin=${1:-.gpu/assay}
results=${RESULTS:-/tmp/assay-gpu}
mkdir -p "$results"
# The CUDA libraries of a PyTorch cu13 install (site-packages/nvidia/cu13/lib), if any.
libs=$(python3 -c 'import nvidia, os; print(":".join(os.path.join(p, "cu13", "lib") for p in nvidia.__path__))' 2>/dev/null || true)
export LD_LIBRARY_PATH=${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
status=0

if [ "${ONLY:-synthetic}" == synthetic ]; then
summary='import json,sys
b=json.load(open(sys.argv[1]))
print("%s: weights made in %.1fs; prompt %.1f tok/s; %s; peak RSS %.0f MiB" % (b["device"], b["setup_s"], b["prompt_tok_per_s"],
  "; ".join("decode batch %d: %.1f tok/s (%.2f ms/step)" % (d["batch"], d["tok_per_s"], d["step_ms"]) for d in b["decode"]), b["peak_rss_mib"] or 0))'
echo "== synthetic qwen2-1.5b on cuda"
"$bin" bench --synthetic qwen2-1.5b --device cuda --batch 1,16 --json >"$results/synthetic-cuda.json" \
  && python3 -c "$summary" "$results/synthetic-cuda.json" || status=1
echo "== synthetic qwen2-1.5b on cpu ($(nproc) cores)"
"$bin" bench --synthetic qwen2-1.5b --device cpu --batch 1 --json >"$results/synthetic-cpu.json" \
  && python3 -c "$summary" "$results/synthetic-cpu.json" || status=1
fi

# Greedy answers on the GPU against the CPU's, for every default model that is installed: the
# default CUDA path (f16 weights) must agree; candle's quantized kernels (ASSAY_CUDA_QUANTIZED=1)
# are reported, not required, until they agree too.
prompts='What is the capital of France? Answer in one short English sentence.
Write a haiku about a water filter.
List three prime numbers and explain why they are prime.
How do I reset a device whose LED blinks red?'
if [ "${ONLY:-greedy}" == greedy ]; then
  for model in smollm2-135m-instruct qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct; do
    if [ -z "$(ls "${ASSAY_MODELS:-/nonexistent}/$model/"*.gguf 2>/dev/null)" ]; then
      echo "== greedy $model: skipped, not installed in ASSAY_MODELS"
      continue
    fi
    for path in default quantized; do
      echo "== greedy $model: cuda ($path) against cpu"
      while IFS= read -r prompt; do
        cpu=$("$bin" models try "$model" "$prompt" --max-tokens 48 --device cpu 2>/dev/null)
        if [ $path == quantized ]; then
          gpu=$(ASSAY_CUDA_QUANTIZED=1 "$bin" models try "$model" "$prompt" --max-tokens 48 --device cuda 2>/dev/null)
        else
          gpu=$("$bin" models try "$model" "$prompt" --max-tokens 48 --device cuda 2>/dev/null)
        fi
        if [ "$cpu" == "$gpu" ] && [ -n "$cpu" ]; then
          echo "same: $prompt -> ${cpu:0:100}"
        else
          echo "DIFFERENT: $prompt"; echo "  cpu: $cpu"; echo "  gpu: $gpu"
          [ $path == default ] && status=1
        fi
      done <<<"$prompts"
    done
  done
fi
exit $status
