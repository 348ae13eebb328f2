#!/bin/sh
# Build llama.cpp's llama-server (the OpenAI-compatible server the inference-server tests start on
# 127.0.0.1, issue 17) from the sources that the llama-cpp-python source package vendors, the same
# sources as scripts/llm_build_llama_cpp.sh. The binary is cached outside the clone, like the
# models, so a machine builds it once. Needs cmake, ninja and a C++ compiler; no curl (the server
# is given a local GGUF path, it never downloads).
# Usage: scripts/llm_build_llama_server.sh   (binary: ${ASSAY_TOOLS:-$HOME/.cache/assay/llama-cpp}/bin)
set -eu
tools="${ASSAY_TOOLS:-$HOME/.cache/assay/llama-cpp}"
work="${TMPDIR:-/tmp}/assay-llama-server-build"
if [ -x "$tools/bin/llama-server" ]; then
  echo "llama-server already built: $tools/bin/llama-server"
  exit 0
fi
mkdir -p "$work" "$tools/bin"
cd "$work"
python3 -m pip download --no-deps --no-binary llama-cpp-python -d . llama-cpp-python==0.3.36
tar xzf llama_cpp_python-0.3.36.tar.gz
cd llama_cpp_python-0.3.36/vendor/llama.cpp
# GGML_NATIVE=OFF: the cached binary may be reused on another CPU of the same machine kind.
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=ON
cmake --build build -j 2 --target llama-server
# Copied to a temporary name first so an interrupted copy never looks like a finished build.
cp build/bin/llama-server "$tools/bin/llama-server.part"
mv "$tools/bin/llama-server.part" "$tools/bin/llama-server"
echo "built: $tools/bin/llama-server"
