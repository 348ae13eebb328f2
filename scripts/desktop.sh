#!/usr/bin/env bash
# Launch the desktop app (README): installs what it needs when missing, builds it (the debug
# build the tests share, UI embedded) and starts it. Models are pulled from the Models screen
# or with `target/debug/assay models pull`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/desktop-build.sh "$@"
exec "${CARGO_TARGET_DIR:-target}/debug/assay-desktop"
