#!/usr/bin/env bash
# README command 1: set everything up on a fresh Debian machine (as root) and run the main job
# on the sample dataset. Safe to run again: every step skips what is already done.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/system-packages.sh

echo "== build" >&2
cargo build --bins

assay=target/debug/assay
out=target/assay-demo
mkdir -p "$out"
export ASSAY_DB="${ASSAY_DB:-$PWD/$out/runs.sqlite}"

echo "== models (cached in the models dir, checked by sha256)" >&2
$assay models pull smollm2-135m-instruct
$assay models pull minilm-l6-v2

start=$(date +%s)
echo "== main job on datasets/trailgear: replay both sample answer sets, compare them" >&2
$assay run datasets/trailgear --target answers:answers-careful.jsonl --name trailgear-careful
$assay run datasets/trailgear --target answers:answers-sloppy.jsonl --name trailgear-sloppy
$assay compare trailgear-careful trailgear-sloppy
echo "== retrieval alone, BM25 and hybrid (BM25 + MiniLM)" >&2
$assay run datasets/trailgear --target retrieve --retrieval bm25 --name trailgear-bm25
$assay run datasets/trailgear --target retrieve --retrieval hybrid --name trailgear-hybrid
$assay compare trailgear-bm25 trailgear-hybrid
$assay runs
$assay show trailgear-sloppy > "$out/show-sloppy.txt"
head -20 "$out/show-sloppy.txt"
$assay export trailgear-careful trailgear-sloppy --format md -o "$out/report.md"
$assay export trailgear-careful trailgear-sloppy --format html -o "$out/report.html"
$assay export trailgear-careful trailgear-sloppy --format json -o "$out/report.json"
echo "main job took $(( $(date +%s) - start )) s; reports in $out/ (database: $ASSAY_DB)" >&2
