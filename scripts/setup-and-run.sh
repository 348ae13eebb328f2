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

echo "== main job: replay both sample answer sets on datasets/trailgear" >&2
$assay run datasets/trailgear --target answers:answers-careful.jsonl --name trailgear-careful
$assay run datasets/trailgear --target answers:answers-sloppy.jsonl --name trailgear-sloppy
$assay runs
$assay show trailgear-careful | head -20
$assay show trailgear-sloppy | head -20
$assay export trailgear-careful trailgear-sloppy --format md -o "$out/report.md"
$assay export trailgear-careful trailgear-sloppy --format json -o "$out/report.json"
echo "reports: $out/report.md $out/report.json (database: $ASSAY_DB)" >&2
