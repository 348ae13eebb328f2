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
# The CPU's own instruction sets, named one by one instead of GGML_NATIVE: on a Xeon with AMX
# the native build's AMX matrix path segfaulted (ggml_backend_amx_mul_mat, 2026-11-25), and
# -march=native cannot leave AMX out. AVX512-BF16 is left out too: this version's sgemm does
# not compile with it. Without /proc/cpuinfo (not Linux) the native build is used.
isa="-DGGML_NATIVE=ON"
if [ -r /proc/cpuinfo ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  has() { case " $flags " in *" $1 "*) echo ON ;; *) echo OFF ;; esac; }
  isa="-DGGML_NATIVE=OFF -DGGML_AVX=$(has avx) -DGGML_AVX2=$(has avx2) -DGGML_FMA=$(has fma)
    -DGGML_F16C=$(has f16c) -DGGML_BMI2=$(has bmi2) -DGGML_AVX512=$(has avx512f)
    -DGGML_AVX512_VBMI=$(has avx512vbmi) -DGGML_AVX512_VNNI=$(has avx512_vnni)
    -DGGML_AVX_VNNI=$(has avx_vnni) -DGGML_AVX512_BF16=OFF
    -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
fi
# shellcheck disable=SC2086 # $isa is a list of options
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF $isa \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF
cmake --build build -j 2 --target llama-bench llama-tokenize llama-completion
mkdir -p "$work/bin"
cp build/bin/llama-bench build/bin/llama-tokenize build/bin/llama-completion "$work/bin/"
echo "built: $work/bin (add it to PATH for \`assay bench\` to compare)"
