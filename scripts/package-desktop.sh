#!/usr/bin/env bash
# Package the desktop app as a Linux .deb, offline. It reuses the debug build that the E2E test
# runs (`cargo build --workspace --bins --features assay-desktop/embed-ui`, incremental when it
# is up to date) and wraps it with `tauri bundle --debug`: `tauri build` would compile the app
# on its own, with other feature sets than the workspace build, i.e. most dependencies again.
# Only the deb target: AppImage bundling downloads tools (linuxdeploy) at build time, which an
# offline machine cannot do. Prints where the .deb is and checks it with dpkg-deb.
# `--no-build` skips the cargo build when the caller has just built the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/desktop-build.sh "$@"

echo "== package: .deb from target/debug/assay-desktop" >&2
rm -rf target/debug/bundle/deb
# From the repository root: the CLI looks for tauri.conf.json in the current folder and below,
# so it does not find the root's from ui/. It writes the bundle type into the binary.
ui/node_modules/.bin/tauri bundle --debug --bundles deb

deb=$(ls target/debug/bundle/deb/*.deb)
echo "== package: $deb ($(du -h "$deb" | cut -f1))" >&2
dpkg-deb --info "$deb" >&2
dpkg-deb --contents "$deb" >&2
echo "$deb"
