#!/bin/sh
# Build llama.cpp's llama-bench, llama-tokenize and llama-completion (the references for the
# tokenizer and greedy-output fixtures and for `assay bench`'s ratios) from the sources that the
# llama-cpp-python source package vendors. Needs cmake, ninja and a C++ compiler.
# Usage: scripts/llm_build_llama_cpp.sh [WORK_DIR] [ISA]   (binaries end up in WORK_DIR/bin)
#   ISA native (default): this CPU's own instruction sets -> llama-bench, llama-tokenize,
#                         llama-completion
#   ISA avx2: AVX2 + FMA without AVX-512 or VNNI, the build a laptop without AVX-512 runs ->
#             llama-bench-avx2 only, which `assay bench` compares with its forced AVX2 path
#             (ASSAY_CPU=avx2). Each ISA builds in its own folder, so both can sit side by side.
set -eu
work="${1:-${TMPDIR:-/tmp}/assay-llama-cpp}"
target_isa="${2:-native}"
mkdir -p "$work"
cd "$work"
python3 -m pip download --no-deps --no-binary llama-cpp-python -d . llama-cpp-python==0.3.36
[ -d llama_cpp_python-0.3.36 ] || tar xzf llama_cpp_python-0.3.36.tar.gz
cd llama_cpp_python-0.3.36/vendor/llama.cpp
case "$target_isa" in
  native)
    # The CPU's own instruction sets, named one by one instead of GGML_NATIVE: on a Xeon with
    # AMX the native build's AMX matrix path segfaulted (ggml_backend_amx_mul_mat, 2026-11-25),
    # and -march=native cannot leave AMX out. AVX512-BF16 is left out too: this version's sgemm
    # does not compile with it. Without /proc/cpuinfo (not Linux) the native build is used.
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
    targets="llama-bench llama-tokenize llama-completion"
    suffix=""
    ;;
  avx2)
    # What an AMD Zen 2/3 or an Intel CPU before AVX-512 and AVX-VNNI runs, built on any x86-64
    # machine (the build only names the instruction sets; it runs where they exist).
    isa="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
      -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF
      -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF
      -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
    targets="llama-bench"
    suffix="-avx2"
    ;;
  *)
    echo "unknown ISA '$target_isa' (expected native or avx2)" >&2
    exit 2
    ;;
esac
# shellcheck disable=SC2086 # $isa and $targets are lists
cmake -B "build-$target_isa" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF $isa \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF
# shellcheck disable=SC2086
cmake --build "build-$target_isa" -j 2 --target $targets
mkdir -p "$work/bin"
for t in $targets; do
  cp "build-$target_isa/bin/$t" "$work/bin/$t$suffix"
done
echo "built: $work/bin (add it to PATH for \`assay bench\` to compare)"
