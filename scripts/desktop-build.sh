# Sourced by the desktop scripts (run, test, package): installs what building the app needs when
# missing, builds the UI bundle, then the CLI and the app in the workspace's one debug build,
# the build the tests share. `--no-build` as the first argument skips the cargo build when the
# caller has just built the workspace.
source "$(dirname "${BASH_SOURCE[0]}")/desktop-packages.sh"

echo "== desktop: the UI bundle" >&2
(cd ui && npm run build)
if [ "${1:-}" != "--no-build" ]; then
  echo "== desktop: build the CLI and the app (debug, UI embedded)" >&2
  cargo build --workspace --bins --features assay-desktop/embed-ui
fi
