# Sourced by the setup and test scripts: installs the Debian packages the build and tests need when
# they are missing (a fresh machine of this kind has Rust, gcc and Python, little else).

# install_missing PACKAGE…: apt-get install the ones that are not installed yet.
install_missing() {
  local need=() package
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || need+=("$package")
  done
  if ((${#need[@]})); then
    echo "== apt-get install ${need[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
  fi
}

# poppler-utils: `pdftotext`, the plain baseline's PDF text in `assay bench` and the reference
# of scripts/pdf_fidelity.py.
install_missing build-essential pkg-config libxml2-utils poppler-utils
command -v cargo >/dev/null || { echo "cargo not found: this project needs the machine's Rust toolchain" >&2; exit 2; }
