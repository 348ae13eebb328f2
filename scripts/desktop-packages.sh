# Sourced by the test scripts: what building and end-to-end testing the desktop app needs on a
# fresh Debian machine, installed only when missing. WebKitGTK and friends (Tauri's Linux list),
# Xvfb, WebKitWebDriver (webkit2gtk-driver), tauri-driver 2.x, and the npm packages of ui/ and
# e2e/.
need=()
for package in build-essential pkg-config file libssl-dev libwebkit2gtk-4.1-dev libxdo-dev \
  libayatana-appindicator3-dev librsvg2-dev xvfb xauth webkit2gtk-driver fonts-dejavu-core; do
  dpkg -s "$package" >/dev/null 2>&1 || need+=("$package")
done
if ((${#need[@]})); then
  echo "== apt-get install ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

export PATH="$HOME/.cargo/bin:$PATH"
# 2.x: 3.0 pre-releases exist and change the command line.
if ! command -v tauri-driver >/dev/null || ! tauri-driver --help 2>&1 | grep -q native-driver; then
  echo "== cargo install tauri-driver ^2" >&2
  cargo install tauri-driver --version '^2' --locked
fi

# npm install, not npm ci: optional packages for other platforms are missing from the registry
# mirror and npm leaves them out of the lockfile (docs/desktop.md).
for dir in ui e2e; do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package.json" -nt "$dir/node_modules" ]; then
    echo "== npm install in $dir" >&2
    (cd "$dir" && npm install --no-audit --no-fund)
  fi
done
