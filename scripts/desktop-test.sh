#!/usr/bin/env bash
# The desktop app's tests: installs what they need (idempotent), runs the UI's unit tests, builds
# the CLI and the app (one debug build with the UI embedded), then drives the real app under
# Xvfb through tauri-driver + WebKitWebDriver (every e2e/*.test.mjs, one after another, each
# launching its own app; e2e/session.mjs holds the shared driver). Screenshots land in
# e2e/screenshots/. scripts/test.sh runs this too; `--no-build` skips the cargo build when the
# caller has just built the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/desktop-build.sh "$@"

export PATH="$HOME/.cargo/bin:$PATH"
# 2.x: 3.0 pre-releases exist and change the command line. A debug build: it only relays the
# test's WebDriver calls, and builds faster unoptimised.
if ! command -v tauri-driver >/dev/null || ! tauri-driver --help 2>&1 | grep -q native-driver; then
  echo "== cargo install tauri-driver ^2" >&2
  cargo install tauri-driver --version '^2' --locked --debug
fi

echo "== desktop: UI unit tests" >&2
(cd ui && npm test)

# The E2E runs both default generator models (ASSAY_E2E_MODELS overrides the list).
# The CLI of the build just made: CARGO_TARGET_DIR when cargo was told one (as e2e/session.mjs reads it).
assay="${CARGO_TARGET_DIR:-target}/debug/assay"
for model in $(echo "${ASSAY_E2E_MODELS:-smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct}" | tr , ' '); do
  "$assay" models pull "$model" >&2
done

echo "== desktop: end-to-end test of the app under Xvfb" >&2
cd e2e
xvfb-run -a -s "-screen 0 1280x800x24" npm test
