#!/usr/bin/env bash
# End-to-end test of the desktop app: installs what it needs (idempotent), builds the CLI and the
# app (one debug build with the UI embedded), then drives the real app under Xvfb through
# tauri-driver + WebKitWebDriver. Screenshots land in e2e/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pkg in libwebkit2gtk-4.1-dev libxdo-dev libayatana-appindicator3-dev librsvg2-dev xvfb xauth webkit2gtk-driver; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config file libssl-dev fonts-dejavu-core "${need_apt[@]}"
fi
if ! command -v tauri-driver >/dev/null || ! tauri-driver --help 2>&1 | grep -q native-driver; then
  cargo install tauri-driver --version '^2' --locked
fi
export PATH="$HOME/.cargo/bin:$PATH"

# npm install, not npm ci: optional packages for other platforms are missing from the registry
# mirror and npm leaves them out of the lockfile (see docs/desktop.md).
[ -d ui/node_modules ] || (cd ui && npm install --no-audit --no-fund)
[ -d e2e/node_modules ] || (cd e2e && npm install --no-audit --no-fund)
(cd ui && npm test && npm run build)

cargo build --bin assay
cargo build -p assay-desktop --features tauri/custom-protocol

cd e2e
xvfb-run -a -s "-screen 0 1280x800x24" npm test
