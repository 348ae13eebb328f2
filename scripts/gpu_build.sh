#!/usr/bin/env bash
# Build `assay` with CUDA on a machine without a GPU or a CUDA install (docs/gpu.md).
#
# CUDA 13.0 comes from the Python packages NVIDIA publishes (nvcc, headers, cuBLAS, cuRAND,
# NVRTC), installed into $CUDA_PREFIX; only the driver library is missing, so the link uses a
# stub libcuda.so whose symbols the real driver provides at run time. The binary links the
# CUDA libraries dynamically: where it runs, libcuda.so.1 (the driver) and libcublas.so.13,
# libcublasLt.so.13, libcurand.so.10, libnvrtc.so.13, libcudart.so.13 must be on the
# loader's path (a PyTorch cu13 install has them under site-packages/nvidia/cu13/lib).
#
# Usage: scripts/gpu_build.sh [OUT_DIR]   (default OUT_DIR: target-cuda/gpu)
# Env: CUDA_PREFIX (default /opt/cuda13), CUDA_COMPUTE_CAP (default 90: H100/H200),
#      CARGO_TARGET_DIR (default target-cuda, apart from the CPU build's target/).
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-target-cuda/gpu}
prefix=${CUDA_PREFIX:-/opt/cuda13}
cuda=$prefix/nvidia/cu13
# 13.0 matches the driver generation of the machines we test on (580): PTX from a newer
# nvcc would be refused by an older driver.
if [ ! -x "$cuda/bin/nvcc" ]; then
  python3 -m pip install --quiet --no-deps --target "$prefix" \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88 nvidia-cuda-nvrtc==13.0.88 \
    'nvidia-cublas==13.0.*' nvidia-curand==10.4.0.35
fi
# Unversioned names for the linker.
for lib in cublas.so.13 cublasLt.so.13 curand.so.10 nvrtc.so.13 cudart.so.13; do
  ln -sf "lib$lib" "$cuda/lib/lib${lib%.so.*}.so"
done
# Stub driver: every cu* entry point cudarc declares, resolved by the real libcuda.so.1.
if [ ! -e "$cuda/lib/stubs/libcuda.so" ]; then
  mkdir -p "$cuda/lib/stubs"
  cargo fetch --quiet  # unpacks cudarc's sources, which list the entry points
  cudarc_src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.* | tail -1)
  grep -ohE '^\s+fn cu[A-Za-z0-9_]+\(' "$cudarc_src/src/driver/sys/mod.rs" \
    | sed -E 's/^\s+fn //; s/\(//' | sort -u \
    | awk '{print "int " $1 "(void){return 999;}"}' >"$cuda/lib/stubs/cuda_stub.c"
  cc -shared -fPIC -o "$cuda/lib/stubs/libcuda.so" -Wl,-soname,libcuda.so.1 "$cuda/lib/stubs/cuda_stub.c"
fi

export PATH=$cuda/bin:$PATH CUDA_HOME=$cuda
export CUDA_COMPUTE_CAP=${CUDA_COMPUTE_CAP:-90}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target-cuda}
# The dev profile (as the tests use) with candle itself fully optimised: its per-operation
# host work is what a GPU decode step waits on.
opt=(--features cuda
  --config 'profile.dev.package.candle-core.opt-level=3'
  --config 'profile.dev.package.candle-nn.opt-level=3'
  --config 'profile.dev.package.cudarc.opt-level=3')
cargo build --bin assay "${opt[@]}"
mkdir -p "$out_dir"
strip -o "$out_dir/assay" "$CARGO_TARGET_DIR/debug/assay"
# The integration tests, for the architectures' differential test against llama.cpp on the
# GPU (`integration llm_architectures::` with ASSAY_TEST_DEVICE=cuda; it reads its fixtures
# from this checkout's path, baked in).
test_bin=$(cargo test --no-run --test integration "${opt[@]}" --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "integration":
        print(m["executable"])')
strip -o "$out_dir/integration" "$test_bin"
ls -la "$out_dir"
