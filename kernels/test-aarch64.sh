#!/usr/bin/env bash
# The kernels' tests for aarch64, cross-compiled here and run under qemu-user: every ARM path
# (NEON, dotprod, i8mm) against the definition and the scalar path. qemu's default CPU has
# dotprod and i8mm; a second run as a Cortex-A53 (neither) checks that detection falls back to
# plain NEON. Needs the Debian packages qemu-user, gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross, and `rustup target add aarch64-unknown-linux-gnu`.
# Usage: kernels/test-aarch64.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
# The workspace builds for x86-64-v3 (.cargo/config.toml); that CPU means nothing here.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-cpu=generic"
for cpu in max cortex-a53; do
  echo "== qemu-aarch64 -cpu $cpu" >&2
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -cpu $cpu -L /usr/aarch64-linux-gnu" \
    cargo test -p assay-kernels --profile kernel-checks --target "$target" "$@" -- --nocapture
done
