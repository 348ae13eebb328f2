//! A weight matrix ready to multiply: which kernel runs it, decided once at load.
//!
//! - CUDA: candle's quantized kernels for the types `assay models check-device` verified on a
//!   GPU against the CPU ([`CUDA_VERIFIED_TYPES`], docs/gpu.md); other quantized types are
//!   dequantized to f16 (cuBLAS), said once. `ASSAY_CUDA_QUANTIZED=1` takes the quantized
//!   kernels for every type, `ASSAY_CUDA_QUANTIZED=0` f16 for every type.
//! - CPU, Q4_1: our own kernel (`assay_kernels::q4_1`) on the file's blocks, where our kernels
//!   run (x86 with AVX2, or `ASSAY_CPU` set); elsewhere re-quantized to Q8_0 as below.
//! - CPU, 4/5-bit types without SIMD kernels (Q5_0, Q5_1): re-quantized to Q8_0.
//! - CPU, Q8_0 where candle has no tiled kernel (widths not a multiple of 256, as SmolLM2's
//!   576 and Qwen2.5-0.5B's 896, or CPUs without VNNI): our own tiled kernel
//!   (`assay_kernels::q8_0`), faster, and bit-identical to candle's per-pair dot products
//!   below 8 rows (prompts on AVX-512 VNNI sum in another order: equal to rounding;
//!   docs/runtime.md). Everything else: candle.
//! - CPU, a tied Q8_0 embedding table (SmolLM2's): held once as our Q8_0 kernel's rows, which
//!   serve the embedding lookup too ([`WeightMatrix::tied_q8_0`], [`embed_q8_0`]), read from the
//!   file straight into our rows.
//! - CPU, Q4_K and Q6_K: our own kernel (`assay_kernels::k_quants`) on the file's blocks in
//!   place. candle would keep packed copies beside them (on the 1.5B model 3.7 GB at the peak
//!   against 1.4 GB) and is no faster, not even with AMX (docs/runtime.md). On the x86 paths
//!   (AVX-512, AVX-VNNI, AVX2) the rows are stored 16 interleaved instead (`InterleavedKQuant`:
//!   the same bytes reordered at load, the file's copy dropped), which a decoded token's
//!   product streams faster (docs/runtime.md).
//!
//! Our kernels run on the path `device::cpu_kernels` picks: the fastest this CPU has (AVX-512
//! VNNI, AVX-VNNI or AVX2), or the one `ASSAY_CPU` names. On ARM candle's kernels stay by
//! default (our NEON paths are not yet measured on ARM hardware); `ASSAY_CPU=neon|dotprod|i8mm`
//! takes ours, `ASSAY_CPU=scalar` our plain-Rust reference.

use std::sync::Arc;

use assay_kernels::isa::Isa;
use assay_kernels::k_quants::{self, InterleavedKQuant, Q8KRows, WeightType};
use assay_kernels::q4_1::{self, Q4Rows};
use assay_kernels::q8_0::{self, Q8Rows};
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{DType, Device, Module, Tensor};

use super::device::{cpu_kernels, CpuKernels};

/// Products of fewer activation rows than this (decoded tokens, a few at a time) hand their work
/// out in shrinking chunks; longer ones in candle's fixed chunks.
const SHRINKING_CHUNKS_BELOW_ROWS: usize = 8;

#[derive(Debug, Clone)]
pub struct WeightMatrix(Kernel);

#[derive(Debug, Clone)]
enum Kernel {
    Candle(QMatMul),
    /// Q8_0 weights (`rows` outputs of `blocks_per_row * 32` inputs) on our own kernel.
    OwnQ8_0(Arc<Q8Rows>, Isa),
    /// Q4_1 weights on our own kernel (activations quantized to Q8_0 as for `OwnQ8_0`).
    OwnQ4_1(Arc<Q4Rows>, Isa),
    /// Q4_K/Q6_K weights on our own kernel, read in place from candle's copy of the file's
    /// blocks (candle's kernels, never called, never make their packed copies).
    OwnKQuant(Arc<QTensor>, WeightType, Isa),
    /// Q4_K/Q6_K weights reordered 16 rows interleaved for our x86 kernels.
    OwnInterleaved(Arc<InterleavedKQuant>, Isa),
}

impl WeightMatrix {
    pub fn new(t: QTensor) -> candle_core::Result<Self> {
        let device = t.device();
        let t = requantize_slow_type(t, &device)?;
        if let Some(isa) = own_q4_1_kernel_for(&t)? {
            let (rows, width) = t.shape().dims2()?;
            let weights = Q4Rows::from_ggml_bytes(&t.data()?, rows, width)
                .ok_or_else(|| candle_core::Error::Msg(format!("Q4_1 data does not hold {rows}×{width} weights")))?;
            return Ok(Self(Kernel::OwnQ4_1(Arc::new(weights), isa)));
        }
        if let Some(isa) = own_q8_0_kernel_for(&t)? {
            let (rows, width) = t.shape().dims2()?;
            let weights = Q8Rows::from_ggml_bytes(&t.data()?, rows, width)
                .ok_or_else(|| candle_core::Error::Msg(format!("Q8_0 data does not hold {rows}×{width} weights")))?;
            return Ok(Self(Kernel::OwnQ8_0(Arc::new(weights), isa)));
        }
        if let Some((ty, isa)) = own_k_quant_kernel_for(&t)? {
            let (rows, width) = t.shape().dims2()?;
            if InterleavedKQuant::suits(isa, rows, width) {
                let pool = candle_core::utils::barrier_pool();
                let parallel = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| pool.execute_chunked(n, f);
                let weights = InterleavedKQuant::from_file_bytes(ty, &t.data()?, rows, width / k_quants::QK_K, &parallel)
                    .ok_or_else(|| candle_core::Error::Msg(format!("{ty:?} data does not hold {rows}×{width} weights")))?;
                return Ok(Self(Kernel::OwnInterleaved(Arc::new(weights), isa)));
            }
            return Ok(Self(Kernel::OwnKQuant(Arc::new(t), ty, isa)));
        }
        Self::shared(Arc::new(t))
    }

    /// The weights of `t` without a copy: tied embeddings share the embedding table with the
    /// output projection. On candle's kernels, or our K-quant kernel, which reads `t` in place
    /// (a Q8_0 table for our Q8_0 kernel is read into [`WeightMatrix::tied_q8_0`] instead).
    pub fn shared(t: Arc<QTensor>) -> candle_core::Result<Self> {
        if let Some((ty, isa)) = own_k_quant_kernel_for(&t)? {
            return Ok(Self(Kernel::OwnKQuant(t, ty, isa)));
        }
        let device = t.device();
        let dense = matches!(t.dtype(), GgmlDType::F32 | GgmlDType::F16 | GgmlDType::BF16);
        if device.is_cuda() && !dense && !cuda_runs_quantized(t.dtype()) {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!(
                    "CUDA: {:?} weights run dequantized to f16 (candle's quantized CUDA kernels are \
                     verified for {:?}; ASSAY_CUDA_QUANTIZED=1 uses them for every type)",
                    t.dtype(),
                    CUDA_VERIFIED_TYPES
                )
            });
            return Ok(Self(Kernel::Candle(QMatMul::TensorF16(t.dequantize_f16(&device)?))));
        }
        Ok(Self(Kernel::Candle(QMatMul::from_arc(t)?)))
    }

    /// The path our Q8_0 kernel takes a tied `rows × width` Q8_0 embedding table on, on
    /// `device`; None where candle keeps the table (GPUs, widths it tiles). The caller then reads
    /// the table into [`Q8Rows`] itself, straight from the file ([`WeightMatrix::tied_q8_0`]).
    pub fn tied_q8_0_path(device: &Device, rows: usize, width: usize) -> candle_core::Result<Option<Isa>> {
        own_q8_0_kernel_on(device, GgmlDType::Q8_0, rows, width)
    }

    /// The output projection of tied embeddings on our Q8_0 kernel (on the path
    /// [`WeightMatrix::tied_q8_0_path`] gave), sharing `table` with the embedding lookup
    /// ([`embed_q8_0`]): one copy of the table for both (a Q8_0 table candle would run one dot
    /// product per pair on, as SmolLM2's 49,152 × 576).
    pub fn tied_q8_0(table: Arc<Q8Rows>, isa: Isa) -> Self {
        Self(Kernel::OwnQ8_0(table, isa))
    }

    /// `x` (`[.., width]`) times the transposed weights: `[.., rows]`.
    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match &self.0 {
            Kernel::Candle(m) => m.forward(x),
            _ => Self::forward_each(&[self], x)?
                .pop()
                .ok_or_else(|| candle_core::Error::Msg("a product without output".into())),
        }
    }

    /// `x` times each of `matrices` (all of `x`'s width), as `forward` each would give. Where
    /// they all run on our kernels and take the same activation format, the input is copied
    /// and quantized once for all of them: the 1.5B model's q, k and v are Q4_K, Q4_K and Q6_K
    /// in half its layers, too different to stack into one matrix, but all read Q8_K.
    pub fn forward_each(matrices: &[&WeightMatrix], x: &Tensor) -> candle_core::Result<Vec<Tensor>> {
        let format = matrices.first().and_then(|m| m.activation_format());
        if format.is_none() || matrices.iter().any(|m| m.activation_format() != format) {
            return matrices.iter().map(|m| m.forward(x)).collect();
        }
        let Some(width) = x.dims().last().copied() else {
            candle_core::bail!("a product needs an input of at least one dimension");
        };
        for m in matrices {
            let (rows, w) = m.shape()?;
            if w != width {
                candle_core::bail!("input of shape {:?} for a matrix of {rows} × {w}", x.dims());
            }
        }
        // A malformed file can declare a matrix with no columns: refuse it instead of dividing by 0.
        let Some(m) = x.elem_count().checked_div(width) else {
            candle_core::bail!("a matrix of 0 columns (none declared) cannot be multiplied");
        };
        // A decoded token's products are over in microseconds: chunks that shrink towards the
        // end keep one thread from finishing alone (see work_split). A prompt's last chunk is a
        // small share of its product, and there candle's fixed chunks measured 2-3% faster.
        let pool = candle_core::utils::barrier_pool();
        let parallel = |n: usize, f: &(dyn Fn(std::ops::Range<usize>) + Sync)| {
            if m < SHRINKING_CHUNKS_BELOW_ROWS {
                super::work_split::in_shrinking_chunks(n, f)
            } else {
                pool.execute_chunked(n, f)
            }
        };
        let values = x.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
        let wrong_size = || candle_core::Error::Msg(format!("{m} rows of {width} values do not make whole blocks"));
        let activations = match format {
            Some(ActivationFormat::Q8K) => Activations::Q8K(Q8KRows::quantize(&values, m, width, &parallel).ok_or_else(wrong_size)?),
            _ => Activations::Q8_0(Q8Rows::quantize(&values, m, width, &parallel).ok_or_else(wrong_size)?),
        };
        drop(values);
        let mut outputs = Vec::with_capacity(matrices.len());
        for matrix in matrices {
            let (rows, _) = matrix.shape()?;
            let mut out = vec![0f32; m * rows];
            let done = match (&matrix.0, &activations) {
                (Kernel::OwnQ8_0(w, isa), Activations::Q8_0(a)) => q8_0::matmul(*isa, w, a, &mut out, &parallel),
                (Kernel::OwnQ4_1(w, isa), Activations::Q8_0(a)) => q4_1::matmul(*isa, w, a, &mut out, &parallel),
                (Kernel::OwnKQuant(w, ty, isa), Activations::Q8K(a)) => k_quants::matmul(*isa, *ty, &w.data()?, rows, a, &mut out, &parallel),
                (Kernel::OwnInterleaved(w, isa), Activations::Q8K(a)) => w.matmul(*isa, a, &mut out, &parallel),
                _ => Err("matrices of one activation format took another".to_string()),
            };
            done.map_err(candle_core::Error::Msg)?;
            let mut shape = x.dims().to_vec();
            if let Some(last) = shape.last_mut() {
                *last = rows;
            }
            outputs.push(Tensor::from_vec(out, shape, &Device::Cpu)?.to_dtype(x.dtype())?);
        }
        Ok(outputs)
    }

    /// Output rows and input width.
    fn shape(&self) -> candle_core::Result<(usize, usize)> {
        match &self.0 {
            Kernel::Candle(m) => match m {
                QMatMul::QTensor(t) => t.shape().dims2(),
                QMatMul::Tensor(t) | QMatMul::TensorF16(t) => t.dims2(),
            },
            Kernel::OwnQ8_0(w, _) => Ok((w.rows, w.blocks_per_row * q8_0::BLOCK)),
            Kernel::OwnQ4_1(w, _) => Ok((w.rows, w.blocks_per_row * q8_0::BLOCK)),
            Kernel::OwnKQuant(w, _, _) => w.shape().dims2(),
            Kernel::OwnInterleaved(w, _) => Ok((w.rows, w.blocks_per_row * k_quants::QK_K)),
        }
    }

    /// The activation format our kernel for this matrix reads; None on candle's kernels.
    fn activation_format(&self) -> Option<ActivationFormat> {
        match &self.0 {
            Kernel::Candle(_) => None,
            Kernel::OwnQ8_0(..) | Kernel::OwnQ4_1(..) => Some(ActivationFormat::Q8_0),
            Kernel::OwnKQuant(..) | Kernel::OwnInterleaved(..) => Some(ActivationFormat::Q8K),
        }
    }
}

/// How our kernels take activations: Q8_0 (blocks of 32) for Q8_0 and Q4_1 weights, Q8_K
/// (blocks of 256) for the K-quants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ActivationFormat {
    Q8_0,
    Q8K,
}

/// Activations quantized in one of the [`ActivationFormat`]s.
enum Activations {
    Q8_0(Q8Rows),
    Q8K(Q8KRows),
}

/// The rows of `table` for `tokens`, dequantized: `[tokens.len(), width]` f32 on the CPU. A
/// token past the table is an error (a tokenizer that does not belong to the model).
pub fn embed_q8_0(table: &Q8Rows, tokens: &[u32]) -> candle_core::Result<Tensor> {
    let nb = table.blocks_per_row;
    let width = nb * q8_0::BLOCK;
    let mut out = Vec::with_capacity(tokens.len() * width);
    for &token in tokens {
        let row = token as usize;
        if row >= table.rows {
            candle_core::bail!("token {token} is past the embedding table's {} rows", table.rows);
        }
        for b in row * nb..(row + 1) * nb {
            let d = table.scales[b];
            out.extend(table.values[b].iter().map(|v| d * f32::from(*v)));
        }
    }
    Tensor::from_vec(out, (tokens.len(), width), &Device::Cpu)
}

/// The path our kernels run CPU matrices on; None where candle's own kernels stay unless
/// `ASSAY_CPU` names a path: on ARM, where our NEON paths are tested (under qemu) but not yet
/// measured against candle's NEON code, and on CPUs without any SIMD path of ours.
fn our_cpu_path() -> candle_core::Result<Option<CpuKernels>> {
    let kernels = cpu_kernels().map_err(|e| candle_core::Error::Msg(e.to_string()))?;
    let measured = matches!(kernels.isa, Isa::Avx2 | Isa::AvxVnni | Isa::Avx512Vnni);
    Ok((kernels.forced || measured).then_some(kernels))
}

/// Our kernel where candle would fall back to one dot product per pair: CPU Q8_0 matrices
/// that its tiled path does not take (it needs AVX-512 VNNI or AVX-VNNI, a width that is a
/// multiple of 256 and rows in groups of 16; `repack_x86::select`). Where candle tiles, its
/// kernel stays: it is faster still (it quantizes activations in blocks of 256), except on a
/// path `ASSAY_CPU` forces, where candle would use instructions of its own choosing.
fn own_q8_0_kernel_for(t: &QTensor) -> candle_core::Result<Option<Isa>> {
    let Ok((rows, width)) = t.shape().dims2() else { return Ok(None) };
    own_q8_0_kernel_on(&t.device(), t.dtype(), rows, width)
}

fn own_q8_0_kernel_on(device: &Device, dtype: GgmlDType, rows: usize, width: usize) -> candle_core::Result<Option<Isa>> {
    if !device.is_cpu() || dtype != GgmlDType::Q8_0 {
        return Ok(None);
    }
    let Some(path) = our_cpu_path()? else { return Ok(None) };
    let candle_tiles = width.is_multiple_of(256) && rows.is_multiple_of(16) && candle_has_q8_0_tiles();
    Ok((path.forced || !candle_tiles).then_some(path.isa))
}

/// Our Q4_1 kernel for CPU Q4_1 matrices, on the path `our_cpu_path` gives.
fn own_q4_1_kernel_for(t: &QTensor) -> candle_core::Result<Option<Isa>> {
    if !t.device().is_cpu() || t.dtype() != GgmlDType::Q4_1 || t.shape().dims2().is_err() {
        return Ok(None);
    }
    Ok(our_cpu_path()?.map(|path| path.isa))
}

/// Our K-quant kernel for CPU Q4_K and Q6_K matrices, on the path `our_cpu_path` gives.
fn own_k_quant_kernel_for(t: &QTensor) -> candle_core::Result<Option<(WeightType, Isa)>> {
    if !t.device().is_cpu() {
        return Ok(None);
    }
    let ty = match t.dtype() {
        GgmlDType::Q4K => WeightType::Q4K,
        GgmlDType::Q6K => WeightType::Q6K,
        _ => return Ok(None),
    };
    Ok(our_cpu_path()?.map(|path| (ty, path.isa)))
}

/// Whether candle 0.11 has its tiled Q8_0 kernel on this CPU (`repack_x86::level` above AVX2).
fn candle_has_q8_0_tiles() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // candle reads this variable to stay on plain AVX2.
        let forced_avx2 = std::env::var("MISTRALRS_FORCE_AVX2").as_deref() == Ok("1");
        !forced_avx2
            && ((is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vnni"))
                || (is_x86_feature_detected!("avxvnni") && is_x86_feature_detected!("avx2")))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// candle has no CPU SIMD kernels for Q4_1, Q5_0 and Q5_1 (8–25 GFLOP/s against 170+ for the
/// types that have them), and small models whose width is not a multiple of 256 use exactly
/// these. Re-quantizing them to Q8_0 at load (8.5 bits per weight, so the values of the 4/5-bit
/// originals are kept almost exactly) costs memory but makes them fast. Q4_1 stays as it is
/// where our Q4_1 kernel runs (`our_cpu_path`): 5 bits per weight, and as fast. Only for weights bound
/// for the CPU: GPUs have kernels for these types, and candle 0.11's CUDA quantizer leaves the
/// row padding its matrix kernels read uninitialised (loading from bytes zeroes it), which
/// made SmolLM2's greedy output on CUDA wrong (docs/gpu.md).
pub(super) fn requantize_slow_type(t: QTensor, target: &Device) -> candle_core::Result<QTensor> {
    if !target.is_cpu() {
        return Ok(t);
    }
    match t.dtype() {
        GgmlDType::Q4_1 if our_cpu_path()?.is_some() => Ok(t),
        GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 => {
            let dense = t.dequantize(&t.device())?;
            QTensor::quantize(&dense, GgmlDType::Q8_0)
        }
        _ => Ok(t),
    }
}

/// The quantized types whose CUDA kernels gave the CPU's logits on a GPU (H100, 2026-11-25:
/// `scripts/gpu_check.sh`, relative error at most 0.06 on synthetic weights of the default
/// models' shapes, as f16 weights do): the types of the default models' files.
pub const CUDA_VERIFIED_TYPES: [GgmlDType; 5] =
    [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q8_0, GgmlDType::Q4K, GgmlDType::Q6K];

/// Whether `dtype` runs on candle's quantized CUDA kernels: verified types by default;
/// `ASSAY_CUDA_QUANTIZED=1` for all types, `=0` for none.
fn cuda_runs_quantized(dtype: GgmlDType) -> bool {
    match std::env::var("ASSAY_CUDA_QUANTIZED").as_deref() {
        Ok("0") => false,
        Ok(v) if !v.is_empty() => true,
        _ => CUDA_VERIFIED_TYPES.contains(&dtype),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix a malformed file declares with no columns is refused with an error, not a
    /// division by zero, and the kernel is never called.
    #[test]
    fn a_matrix_without_columns_is_an_error() {
        let x = Tensor::zeros((1, 3, 0), DType::F32, &Device::Cpu).unwrap();
        let empty = Q8Rows { rows: 4, blocks_per_row: 0, scales: Vec::new(), values: Vec::new() };
        let matrix = WeightMatrix(Kernel::OwnQ8_0(Arc::new(empty), Isa::Scalar));
        let message = matrix.forward(&x).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("0 columns"), "{message}");
    }

    /// Our Q8_0 kernel gives candle's results on a width candle does not tile (576, SmolLM2's):
    /// to the bit for decode and short inputs, to rounding for prompts on panels.
    #[test]
    fn our_q8_0_kernel_gives_candles_results() {
        let dev = Device::Cpu;
        let (rows, width) = (40, 576);
        let w = Tensor::randn(0f32, 1.0, (rows, width), &dev).unwrap();
        let ours = WeightMatrix::new(QTensor::quantize(&w, GgmlDType::Q8_0).unwrap()).unwrap();
        let candle = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q8_0).unwrap()).unwrap();
        let Some(path) = our_cpu_path().unwrap() else {
            assert!(matches!(ours.0, Kernel::Candle(_)));
            return;
        };
        assert!(matches!(ours.0, Kernel::OwnQ8_0(..)));
        eprintln!("weight_matrix: our Q8_0 kernel on the {} path", path.isa);
        for m in [1usize, 5, 37] {
            let x = Tensor::randn(0f32, 1.0, (1, m, width), &dev).unwrap();
            let (a, b) = (ours.forward(&x).unwrap(), candle.forward(&x).unwrap());
            assert_eq!(a.dims(), &[1, m, rows]);
            let (a, b) = (a.flatten_all().unwrap().to_vec1::<f32>().unwrap(), b.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            // Panels (from 8 rows) and the scalar path add the same exact block sums in another
            // order; the SIMD tiles add them as candle does.
            let panels = m >= 8;
            if panels || path.isa == Isa::Scalar {
                let scale = b.iter().fold(0f32, |s, v| s.max(v.abs()));
                let worst = a.iter().zip(&b).fold(0f32, |s, (p, q)| s.max((p - q).abs()));
                assert!(worst <= 1e-5 * scale, "m={m}: max |Δ| {worst} against a scale of {scale}");
            } else {
                assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()), "m={m}");
            }
        }
        assert!(ours.forward(&Tensor::zeros((2, 64), DType::F32, &dev).unwrap()).is_err());
    }

    /// Our Q4_K/Q6_K kernel gives candle's results up to summation order, for decode and
    /// prompt-sized inputs (one row, a few, panels with a remainder), interleaved where the
    /// path reads that layout.
    #[test]
    fn our_k_quant_kernel_gives_candles_results() {
        let dev = Device::Cpu;
        for dtype in [GgmlDType::Q4K, GgmlDType::Q6K] {
            let w = Tensor::randn(0f32, 1.0, (40, 512), &dev).unwrap();
            let ours = WeightMatrix::new(QTensor::quantize(&w, dtype).unwrap()).unwrap();
            let candle = QMatMul::from_qtensor(QTensor::quantize(&w, dtype).unwrap()).unwrap();
            let path = our_cpu_path().unwrap();
            // 40 rows: on the x86 paths two interleaved records of 16 and 8 rows left over.
            match path {
                Some(p) if InterleavedKQuant::runs_on(p.isa) => assert!(matches!(ours.0, Kernel::OwnInterleaved(..)), "{dtype:?}"),
                Some(_) => assert!(matches!(ours.0, Kernel::OwnKQuant(..)), "{dtype:?}"),
                None => assert!(matches!(ours.0, Kernel::Candle(_)), "{dtype:?}"),
            }
            eprintln!("weight_matrix: {dtype:?} on {}", path.map_or("candle's kernels", |p| p.isa.name()));
            for m in [1usize, 9, 37] {
                let x = Tensor::randn(0f32, 1.0, (1, m, 512), &dev).unwrap();
                let (a, b) = (ours.forward(&x).unwrap(), candle.forward(&x).unwrap());
                assert_eq!(a.dims(), &[1, m, 40]);
                let (a, b) = (a.flatten_all().unwrap().to_vec1::<f32>().unwrap(), b.flatten_all().unwrap().to_vec1::<f32>().unwrap());
                let scale = b.iter().fold(0f32, |s, v| s.max(v.abs()));
                let worst = a.iter().zip(&b).fold(0f32, |s, (p, q)| s.max((p - q).abs()));
                assert!(worst <= 1e-5 * scale, "{dtype:?} m={m}: max |Δ| {worst} against a scale of {scale}");
            }
            assert!(ours.forward(&Tensor::zeros((2, 64), DType::F32, &dev).unwrap()).is_err());
        }
    }

    /// Our Q4_1 kernel gives candle's results (its one dot product per pair, on Q8_1
    /// activations quantized the same way) up to summation order, for decode, a few rows and
    /// panels, and the weights stay Q4_1 (not re-quantized) where our kernels run.
    #[test]
    fn our_q4_1_kernel_gives_candles_results() {
        let dev = Device::Cpu;
        let (rows, width) = (40, 576);
        let w = Tensor::randn(0f32, 1.0, (rows, width), &dev).unwrap();
        let ours = WeightMatrix::new(QTensor::quantize(&w, GgmlDType::Q4_1).unwrap()).unwrap();
        let candle = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q4_1).unwrap()).unwrap();
        let path = our_cpu_path().unwrap();
        assert_eq!(matches!(ours.0, Kernel::OwnQ4_1(..)), path.is_some());
        eprintln!("weight_matrix: Q4_1 on {}", path.map_or("candle's kernels after re-quantizing", |p| p.isa.name()));
        for m in [1usize, 5, 37] {
            let x = Tensor::randn(0f32, 1.0, (1, m, width), &dev).unwrap();
            let (a, b) = (ours.forward(&x).unwrap(), candle.forward(&x).unwrap());
            assert_eq!(a.dims(), &[1, m, rows]);
            let (a, b) = (a.flatten_all().unwrap().to_vec1::<f32>().unwrap(), b.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            let scale = b.iter().fold(0f32, |s, v| s.max(v.abs()));
            let worst = a.iter().zip(&b).fold(0f32, |s, (p, q)| s.max((p - q).abs()));
            // Re-quantized to Q8_0 (no path of ours) the weights round once more: looser.
            let bound = if path.is_some() { 1e-5 } else { 2e-2 };
            assert!(worst <= bound * scale, "m={m}: max |Δ| {worst} against a scale of {scale}");
        }
        assert!(ours.forward(&Tensor::zeros((2, 64), DType::F32, &dev).unwrap()).is_err());
    }

    /// A tied Q8_0 table on our kernel gives candle's embedding rows and output products from
    /// one copy, and refuses a token past its rows.
    #[test]
    fn a_tied_q8_0_table_serves_lookup_and_output() {
        let dev = Device::Cpu;
        let (rows, width) = (48, 576);
        let w = Tensor::randn(0f32, 1.0, (rows, width), &dev).unwrap();
        let q = QTensor::quantize(&w, GgmlDType::Q8_0).unwrap();
        let Some(isa) = WeightMatrix::tied_q8_0_path(&dev, rows, width).unwrap() else {
            assert!(our_cpu_path().unwrap().is_none());
            return;
        };
        let table = Arc::new(Q8Rows::from_ggml_bytes(&q.data().unwrap(), rows, width).unwrap());
        let output = WeightMatrix::tied_q8_0(table.clone(), isa);
        let tokens = [0u32, 47, 5];
        let ours = embed_q8_0(&table, &tokens).unwrap().to_vec2::<f32>().unwrap();
        let ids = Tensor::new(&tokens[..], &dev).unwrap();
        let candle = q.embedding(&ids).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(ours, candle);
        let x = Tensor::randn(0f32, 1.0, (1, 1, width), &dev).unwrap();
        let reference = QMatMul::from_qtensor(q).unwrap().forward(&x).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let got = output.forward(&x).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        if our_cpu_path().unwrap().is_some_and(|p| p.isa != Isa::Scalar) {
            assert!(got.iter().zip(&reference).all(|(a, b)| a.to_bits() == b.to_bits()), "one row: candle's bits");
        } else {
            let scale = reference.iter().fold(0f32, |s, v| s.max(v.abs()));
            assert!(got.iter().zip(&reference).all(|(a, b)| (a - b).abs() <= 1e-5 * scale));
        }
        let message = embed_q8_0(&table, &[48]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("past the embedding table"), "{message}");
    }

    /// Matrices of differing types that read one input (the 1.5B's q/k/v: Q4_K, Q4_K, Q6_K)
    /// give, with the input quantized once, each what its own product gives, to the bit; a
    /// mix with a matrix on candle's kernel takes each its own way.
    #[test]
    fn products_sharing_an_input_give_each_matrixs_own_result() {
        let dev = Device::Cpu;
        let matrix = |rows: usize, dtype: GgmlDType| {
            let w = Tensor::randn(0f32, 1.0, (rows, 512), &dev).unwrap();
            WeightMatrix::new(QTensor::quantize(&w, dtype).unwrap()).unwrap()
        };
        let candle_tiled = QTensor::quantize(&Tensor::randn(0f32, 1.0, (32, 512), &dev).unwrap(), GgmlDType::F16).unwrap();
        let sets = [
            vec![matrix(48, GgmlDType::Q4K), matrix(16, GgmlDType::Q4K), matrix(16, GgmlDType::Q6K)],
            vec![matrix(40, GgmlDType::Q8_0), matrix(24, GgmlDType::Q4_1)],
            vec![matrix(40, GgmlDType::Q4K), WeightMatrix::new(candle_tiled).unwrap()],
        ];
        for set in &sets {
            let refs: Vec<&WeightMatrix> = set.iter().collect();
            for m in [1usize, 9] {
                let x = Tensor::randn(0f32, 1.0, (1, m, 512), &dev).unwrap();
                let together = WeightMatrix::forward_each(&refs, &x).unwrap();
                assert_eq!(together.len(), set.len());
                for (matrix, got) in set.iter().zip(&together) {
                    let alone = matrix.forward(&x).unwrap();
                    assert_eq!(got.dims(), alone.dims());
                    let (a, b) = (got.flatten_all().unwrap().to_vec1::<f32>().unwrap(), alone.flatten_all().unwrap().to_vec1::<f32>().unwrap());
                    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()), "m={m}");
                }
            }
        }
        let narrow = matrix(8, GgmlDType::Q4K);
        let wide_input = Tensor::zeros((2, 768), DType::F32, &dev).unwrap();
        assert!(WeightMatrix::forward_each(&[&sets[0][0], &narrow], &wide_input).is_err());
    }

    /// Widths candle tiles stay on candle's kernel where it has its tiles.
    #[test]
    fn candle_keeps_the_matrices_it_tiles() {
        let w = Tensor::randn(0f32, 1.0, (32, 512), &Device::Cpu).unwrap();
        let m = WeightMatrix::new(QTensor::quantize(&w, GgmlDType::Q8_0).unwrap()).unwrap();
        let path = our_cpu_path().unwrap();
        let candle_keeps = path.is_none_or(|p| !p.forced && candle_has_q8_0_tiles());
        assert_eq!(matches!(m.0, Kernel::Candle(_)), candle_keeps);
    }
}
