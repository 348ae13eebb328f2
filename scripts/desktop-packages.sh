# Sourced by the desktop scripts: what building the desktop app needs on a fresh Debian machine,
# installed only when missing: WebKitGTK and friends (Tauri's Linux list), Xvfb and
# WebKitWebDriver (webkit2gtk-driver) for the end-to-end test, and the npm packages of ui/ and
# e2e/. tauri-driver, which only the test needs, is installed by scripts/desktop-test.sh.
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
install_missing build-essential pkg-config file libssl-dev libwebkit2gtk-4.1-dev libxdo-dev \
  libayatana-appindicator3-dev librsvg2-dev xvfb xauth webkit2gtk-driver fonts-dejavu-core

# npm install, not npm ci: optional packages for other platforms are missing from the registry
# mirror and npm leaves them out of the lockfile (docs/desktop.md).
for dir in ui e2e; do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package.json" -nt "$dir/node_modules" ]; then
    echo "== npm install in $dir" >&2
    (cd "$dir" && npm install --no-audit --no-fund)
  fi
done
