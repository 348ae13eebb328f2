#!/bin/sh
# Build llama.cpp's llama-bench, llama-tokenize and llama-completion (the references for the
# tokenizer and greedy-output fixtures and for `assay bench`'s ratios) from the sources that the
# llama-cpp-python source package vendors. Needs cmake, ninja and a C++ compiler.
# Usage: scripts/llm_build_llama_cpp.sh [WORK_DIR]   (binaries end up in WORK_DIR/bin)
set -eu
work="${1:-${TMPDIR:-/tmp}/assay-llama-cpp}"
mkdir -p "$work"
cd "$work"
python3 -m pip download --no-deps --no-binary llama-cpp-python -d . llama-cpp-python==0.3.36
tar xzf llama_cpp_python-0.3.36.tar.gz
cd llama_cpp_python-0.3.36/vendor/llama.cpp
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=ON \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF
cmake --build build -j 2 --target llama-bench llama-tokenize llama-completion
mkdir -p "$work/bin"
cp build/bin/llama-bench build/bin/llama-tokenize build/bin/llama-completion "$work/bin/"
echo "built: $work/bin (add it to PATH for \`assay bench\` to compare)"
