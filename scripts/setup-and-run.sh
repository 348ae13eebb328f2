#!/usr/bin/env bash
# README command 1: set everything up on a fresh Debian machine (as root) and run the main job
# on the sample dataset. Safe to run again: every step skips what is already done (models are
# cached outside the clone; repeated generations are served from the run database).
#
# The main job: both small instruct models answer the sample questions through the built-in
# RAG target, the default judge model judges every answer, the two are compared with paired
# statistics, and the experiment is exported to HTML. ASSAY_MAIN_LIMIT questions (default 10
# of 90: on 2 CPU cores each question costs about 40 s; set it to 90 for all).
set -euo pipefail
cd "$(dirname "$0")/.."
# The workspace's one debug build (CLI and desktop app), the build scripts/test.sh and the
# desktop scripts reuse: building the core alone would resolve its dependencies' features
# differently and compile most of them twice.
source scripts/desktop-build.sh

assay="${CARGO_TARGET_DIR:-target}/debug/assay"
out=target/assay-demo
mkdir -p "$out"
export ASSAY_DB="${ASSAY_DB:-$PWD/$out/runs.sqlite}"
limit="${ASSAY_MAIN_LIMIT:-10}"
generators=smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct
judge_model=qwen2.5-coder-1.5b-instruct

echo "== models (cached in the models dir, checked by sha256)" >&2
for model in smollm2-135m-instruct qwen2.5-coder-0.5b-instruct $judge_model minilm-l6-v2; do
  $assay models pull "$model"
done

start=$(date +%s)
echo "== main job: $generators answer $limit questions of datasets/trailgear (hybrid retrieval)," >&2
echo "   judged by $judge_model, compared, exported" >&2
$assay run datasets/trailgear --target rag --model "$generators" --retrieval hybrid \
  --judges correct,abstention --judge-model "$judge_model" --limit "$limit" --name main
main_seconds=$(( $(date +%s) - start ))
$assay export "main smollm2-135m-instruct" "main qwen2.5-coder-0.5b-instruct" --format html -o "$out/main.html"
$assay export "main smollm2-135m-instruct" "main qwen2.5-coder-0.5b-instruct" --format md -o "$out/main.md"

echo "== the same metrics on the hand-written answer sets, and retrieval alone" >&2
$assay run datasets/trailgear --target answers:answers-careful.jsonl --name trailgear-careful >/dev/null
$assay run datasets/trailgear --target answers:answers-sloppy.jsonl --name trailgear-sloppy >/dev/null
$assay compare trailgear-careful trailgear-sloppy
$assay run datasets/trailgear --target retrieve --retrieval bm25,hybrid --name trailgear-retrieval
$assay runs
$assay export trailgear-careful trailgear-sloppy --format html -o "$out/answer-sets.html"
echo "main job (2 generators × $limit questions, judged) took ${main_seconds} s; everything took $(( $(date +%s) - start )) s" >&2
echo "reports: $out/main.html, $out/main.md, $out/answer-sets.html (database: $ASSAY_DB)" >&2
