#!/usr/bin/env bash
# The desktop app's tests: installs what they need (idempotent), runs the UI's unit tests, builds
# the CLI and the app (one debug build with the UI embedded), then drives the real app under
# Xvfb through tauri-driver + WebKitWebDriver (e2e/app.test.mjs). Screenshots land in
# e2e/screenshots/. scripts/test.sh runs this too; `--no-build` skips the cargo build when the
# caller has just built the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
[ "${1:-}" = "--no-build" ] && build=0

source scripts/desktop-packages.sh

echo "== desktop: UI unit tests and bundle" >&2
(cd ui && npm test && npm run build)

if ((build)); then
  echo "== desktop: build the CLI and the app (debug, UI embedded)" >&2
  cargo build --workspace --bins --features assay-desktop/embed-ui
fi
target/debug/assay models pull smollm2-135m-instruct >&2

echo "== desktop: end-to-end test of the app under Xvfb" >&2
cd e2e
xvfb-run -a -s "-screen 0 1280x800x24" npm test
