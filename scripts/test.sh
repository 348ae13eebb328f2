#!/usr/bin/env bash
# README command 2 (and CI): run the whole test suite. Models are cached outside the clone
# (ASSAY_MODELS, default: the platform data dir), so only the first run downloads them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/system-packages.sh
source scripts/desktop-packages.sh

# The whole workspace in one build: the core alone would resolve its dependencies' features
# differently from the desktop app (Tauri turns on more of serde, syn, time, …) and build them
# twice. The same flags for `cargo test` reuse everything built here.
workspace=(--workspace --features assay-desktop/embed-ui)
# A CI clone is built once: incremental state would only take disk (a CI run ran out of it).
if [[ "${CI:-}" == "true" ]]; then export CARGO_INCREMENTAL=0; fi
# Each stage says how far into the run it starts, so a slow CI run shows where the time went.
stage() { echo "== $1 ($((SECONDS / 60))m$((SECONDS % 60))s in)" >&2; }

stage "one-way layers (ARCHITECTURE.md, Invariants)"
python3 scripts/check-layers.py

stage "build (one dev build shared by the CLI, the desktop app and the tests)"
(cd ui && npm run build)
cargo build "${workspace[@]}" --all-targets

stage "models for the tests (cached in the models dir, checked by sha256)"
assay="${CARGO_TARGET_DIR:-target}/debug/assay"
"$assay" models pull smollm2-135m-instruct
"$assay" models pull minilm-l6-v2

stage "llama-server for the inference-server tests (built once, cached outside the clone)"
install_missing cmake ninja-build
scripts/llm_build_llama_server.sh
export PATH="${ASSAY_TOOLS:-$HOME/.cache/assay/llama-cpp}/bin:$PATH"

stage "desktop app: UI unit tests and the end-to-end test under Xvfb"
desktop=0
scripts/desktop-test.sh --no-build 2>&1 || desktop=$?

stage "kernels on aarch64: cross-compiled, run under qemu-user against the scalar reference"
# The ARM paths (NEON, dotprod, i8mm) never run on this x86 machine otherwise. The cross linker
# and libc come from Debian; the Rust standard library for the target from rustup.
install_missing qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
arm=0
rustup target add aarch64-unknown-linux-gnu >&2 && kernels/test-aarch64.sh 2>&1 || arm=$?

stage "tests"
# Tests run two at a time on two cores: one compute thread per model keeps candle's thread
# pool from spinning against the other test (measured: 10x slower decoding when oversubscribed).
# The integration tests are one binary (tests/main.rs): one link instead of one per file, and
# its tests from every file share the two threads.
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"
status=0
cargo test "${workspace[@]}" --exclude assay-kernels --all-targets --no-fail-fast 2>&1 || status=$?
# The kernels' own tests with the standard library's checks of their unsafe code on (Cargo.toml,
# `kernel-checks`); everything above runs them as shipped, so `cargo test` reuses the dev build.
cargo test -p assay-kernels --profile kernel-checks --no-fail-fast 2>&1 || status=$?
stage "done"
if ((desktop)); then
  echo "desktop tests FAILED (exit $desktop): see '== desktop app' above; cargo test exit $status" >&2
  exit "$desktop"
fi
if ((arm)); then
  echo "aarch64 kernel tests FAILED (exit $arm): see '== kernels on aarch64' above; cargo test exit $status" >&2
  exit "$arm"
fi
exit "$status"
