#!/usr/bin/env bash
# README command 2 (and CI): run the whole test suite. Models are cached outside the clone
# (ASSAY_MODELS, default: the platform data dir), so only the first run downloads them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/system-packages.sh

echo "== build (one dev build shared by the CLI and the tests)" >&2
cargo build --all-targets

echo "== models for the tests (cached in the models dir, checked by sha256)" >&2
target/debug/assay models pull smollm2-135m-instruct
target/debug/assay models pull minilm-l6-v2

echo "== tests" >&2
# Tests run two at a time on two cores: one compute thread per model keeps candle's thread
# pool from spinning against the other test (measured: 10x slower decoding when oversubscribed).
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"
cargo test --all-targets --no-fail-fast 2>&1
