#!/usr/bin/env bash
# Pairwise against absolute judging on two real model runs (issue 34, "Measure it";
# docs/pairwise.md, "Sensitivity on two real model runs").
#
# Two runs answer the first N questions of a real-document set (retrieval, then the answer),
# each judged by the absolute `correct` judge; the two runs are then compared `--pairwise` by
# each pairwise judge model (both orders, stored in the same database). Last,
# `pairwise_sensitivity::real_runs` reads the stored runs and judgments and, over growing
# prefixes of the questions (10, 20, 30, ...), reports at which n each method first reaches a
# verdict under the comparison's own rule, and each judge model's order flips on these answers.
#
# Usage: scripts/pairwise-sensitivity.sh
# Env: ASSAY_SENS_DATASET (default datasets/realdocs: real PDFs, short reference answers),
#      ASSAY_SENS_LIMIT (default 20 questions: what fitted the measured hour; 30-40 where the
#      machine allows),
#      ASSAY_SENS_RUN_A, ASSAY_SENS_RUN_B: each run's `assay run` options (default: SmolLM2-135M
#      with the default four retrieved excerpts, and the same with two; a run names its
#      generator with --model), e.g. ASSAY_SENS_RUN_B="--model qwen2.5-coder-0.5b-instruct",
#      ASSAY_SENS_JUDGE_MODELS (pairwise judge models, default the 1.5B, whose sensitivity is
#      measured, then SmolLM2 and the 0.5B for their order bias), ASSAY_SENS_PAIRWISE_JUDGE
#      (default `better`, the side-by-side judge this script measures; the default pairwise
#      judge, `correct` read per answer, is the absolute comparison itself), ASSAY_SENS_DIR
#      (default target/pairwise-sensitivity).
# On a shared 2-core machine at load 10-12 a SmolLM2 answer with its `correct` verdict took
# 45-160 s (prompts of 2,000 tokens on average, most answers run to the 160-token cap), so a
# 0.5B generator did not fit the hour this was measured in; see docs/pairwise.md.
# Finished runs and stored judgments are reused, so the script can be stopped and started
# again; model processes run one at a time, niced, on two threads.
set -euo pipefail
cd "$(dirname "$0")/.."
assay=${ASSAY_BIN:-target/debug/assay}
[[ -x $assay ]] || cargo build --bin assay
dataset=${ASSAY_SENS_DATASET:-datasets/realdocs}
limit=${ASSAY_SENS_LIMIT:-20}
run_a=${ASSAY_SENS_RUN_A:---model smollm2-135m-instruct}
run_b=${ASSAY_SENS_RUN_B:---model smollm2-135m-instruct --top-k 2}
IFS=, read -r -a judge_models <<<"${ASSAY_SENS_JUDGE_MODELS:-qwen2.5-coder-1.5b-instruct,smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct}"
out=${ASSAY_SENS_DIR:-target/pairwise-sensitivity}
mkdir -p "$out"
export ASSAY_DB="${ASSAY_DB:-$PWD/$out/runs.sqlite}"
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-2}
set_name=$(basename "$dataset")

# Whether a run of this name is stored (with a second argument: and has that status).
stored() {
  { $assay runs --json 2>/dev/null || true; } \
    | python3 -c "import json,sys; t=sys.stdin.read().strip(); sys.exit(0 if any(r['name']=='$1' and r['status']==('${2:-}' or r['status']) for r in json.loads(t or '[]')) else 1)"
}

names=()
for options in "$run_a" "$run_b"; do
  # The run's name says its options: "--model smollm2-135m-instruct --top-k 2" gives
  # sens-realdocs-30-smollm2-135m-instruct-top-k-2.
  name="sens-$set_name-$limit-$(echo "$options" | sed -E 's/--model //; s/--//g; s/[^A-Za-z0-9.]+/-/g; s/-$//')"
  names+=("$name")
  stored "$name" finished && continue
  start=$(date +%s)
  if stored "$name"; then
    # An interrupted run of this name is finished where it stopped, not started again.
    nice $assay run "$dataset" --resume "$name" >/dev/null
  else
    # shellcheck disable=SC2086 # the options are words
    nice $assay run "$dataset" $options --judges correct --limit "$limit" --name "$name" >/dev/null
  fi
  echo "$name: $(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

# The absolute comparison as `assay compare` prints it (primary: correct).
$assay compare "${names[@]}" --json >"$out/absolute.json"
for judge_model in "${judge_models[@]}"; do
  start=$(date +%s)
  nice $assay compare "${names[@]}" --pairwise --judge "${ASSAY_SENS_PAIRWISE_JUDGE:-better}" --judge-model "$judge_model" --json >"$out/pairwise-$judge_model.json"
  echo "pairwise, $judge_model: $(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

ASSAY_SENS_DB="$ASSAY_DB" ASSAY_SENS_RUNS="${names[0]},${names[1]}" ASSAY_SENS_JUDGE_MODELS="$(IFS=,; echo "${judge_models[*]}")" \
  cargo test -p assay --test integration pairwise_sensitivity::real_runs -- --ignored --nocapture --test-threads 1 \
  | tee "$out/sensitivity.txt"
