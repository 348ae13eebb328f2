# Sourced by the setup and test scripts: installs the Debian packages the build and tests need when
# they are missing (a fresh machine of this kind has Rust, gcc and Python, little else).
need=()
for package in build-essential pkg-config libxml2-utils; do
  dpkg -s "$package" >/dev/null 2>&1 || need+=("$package")
done
if ((${#need[@]})); then
  echo "== apt-get install ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi
command -v cargo >/dev/null || { echo "cargo not found: this project needs the machine's Rust toolchain" >&2; exit 2; }
