//! Q8_0 × Q8_0 matrix products: weights and activations in ggml's Q8_0 format (blocks of 32
//! signed bytes with one scale), computed a tile of activation rows × weight rows at a time.
//!
//! Why our own: candle 0.11 takes its tiled kernels only for widths that are multiples of 256
//! (and, for Q8_0, only on CPUs with VNNI); otherwise, as for SmolLM2 (576 wide) and
//! Qwen2.5-0.5B (896), it computes one dot product per (activation row, weight row), each
//! loading both blocks and re-deriving the activation's absolute values. Here a weight block is
//! loaded once per tile of activation rows, an activation block's absolute values once per tile
//! of weight rows, and on AVX-512 VNNI one instruction does the byte products and their sums.
//!
//! Tiles give outputs bit-identical to candle's (and ggml's) AVX2 `vec_dot_q8_0_q8_0`: per
//! block the 32 byte products are summed in eight groups of four as exact integers, converted
//! to f32 and multiply-added with the product of the two scales into eight lanes, block after
//! block, and the lanes are summed at the end in the same order. Activations are quantized
//! exactly as candle quantizes them.
//!
//! Prompts (8 activation rows or more) on AVX-512 VNNI take panels instead, 3–4× faster
//! (docs/runtime.md): 16 weight rows side by side in one register, one `vpdpbusd` for 4 values
//! of all 16, each block's exact integer sum scaled and added once per output. The same
//! integers, one f32 addition per block in another order: results equal to rounding.

use crate::Parallel;
use std::sync::OnceLock;

/// Values per block.
pub const BLOCK: usize = 32;

/// Rows of Q8_0 blocks as two arrays: `scales[i]` belongs to `values[i]`; row `r` is blocks
/// `r * blocks_per_row .. (r + 1) * blocks_per_row`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Q8Rows {
    pub rows: usize,
    pub blocks_per_row: usize,
    /// Each block's f16 scale, widened (exactly) to f32 once.
    pub scales: Vec<f32>,
    pub values: Vec<[i8; BLOCK]>,
}

impl Q8Rows {
    /// From ggml's layout: 34-byte blocks (little-endian f16 scale, then 32 signed bytes),
    /// `rows` rows of `width` values. None when the sizes disagree.
    pub fn from_ggml_bytes(bytes: &[u8], rows: usize, width: usize) -> Option<Self> {
        const BYTES: usize = 2 + BLOCK;
        if width % BLOCK != 0 || bytes.len() != rows.checked_mul(width / BLOCK)?.checked_mul(BYTES)? {
            return None;
        }
        let blocks = bytes.len() / BYTES;
        let mut scales = Vec::with_capacity(blocks);
        let mut values = Vec::with_capacity(blocks);
        for block in bytes.chunks_exact(BYTES) {
            scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
            let mut v = [0i8; BLOCK];
            for (dst, src) in v.iter_mut().zip(&block[2..]) {
                *dst = *src as i8;
            }
            values.push(v);
        }
        Some(Self { rows, blocks_per_row: width / BLOCK, scales, values })
    }

    /// `m` rows of `width` values quantized as candle's `BlockQ8_0::from_float` does: per
    /// block, scale = max |x| / 127 (kept as f16), value = round(x / scale) with the f32 scale.
    /// None when the sizes disagree.
    pub fn quantize(x: &[f32], m: usize, width: usize) -> Option<Self> {
        if width % BLOCK != 0 || x.len() != m.checked_mul(width)? {
            return None;
        }
        let blocks = x.len() / BLOCK;
        let mut scales = Vec::with_capacity(blocks);
        let mut values = Vec::with_capacity(blocks);
        for xs in x.chunks_exact(BLOCK) {
            let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            let id = if d != 0.0 { 1.0 / d } else { 0.0 };
            scales.push(half::f16::from_f32(d).to_f32());
            let mut v = [0i8; BLOCK];
            for (dst, &x) in v.iter_mut().zip(xs) {
                *dst = f32::round(x * id) as i8;
            }
            values.push(v);
        }
        Some(Self { rows: m, blocks_per_row: width / BLOCK, scales, values })
    }
}

/// The instruction sets this kernel has code for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512Vnni,
    Avx2,
}

/// The best instruction set this CPU offers the kernel; None where it has no code (then the
/// caller keeps its own path).
pub fn isa() -> Option<Isa> {
    static ISA: OnceLock<Option<Isa>> = OnceLock::new();
    *ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512vnni")
                && is_x86_feature_detected!("fma")
            {
                return Some(Isa::Avx512Vnni);
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                return Some(Isa::Avx2);
            }
        }
        None
    })
}

/// Activation rows per work item: they stay in L1 while the item's weight rows stream past.
const ROW_GROUP: usize = 16;
/// Weight rows per work item.
const COL_BLOCK: usize = 64;

/// `dst[r * w.rows + c]` = row `r` of `a` · row `c` of `w`, for every activation row `r` and
/// weight row `c`, using `isa`.
pub fn matmul(isa: Isa, w: &Q8Rows, a: &Q8Rows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
    if w.blocks_per_row != a.blocks_per_row
        || w.scales.len() != w.rows * w.blocks_per_row
        || w.values.len() != w.scales.len()
        || a.scales.len() != a.rows * a.blocks_per_row
        || a.values.len() != a.scales.len()
        || dst.len() != a.rows * w.rows
    {
        return Err(format!(
            "Q8_0 matmul: {}×{} weights, {}×{} activations, {} outputs",
            w.rows,
            w.blocks_per_row * BLOCK,
            a.rows,
            a.blocks_per_row * BLOCK,
            dst.len()
        ));
    }
    if isa == Isa::Avx512Vnni && self::isa() != Some(Isa::Avx512Vnni) || self::isa().is_none() {
        return Err(format!("Q8_0 matmul: this CPU has no {isa:?}"));
    }
    let n = w.rows;
    let out = SharedOut(dst.as_mut_ptr());
    // Prompts on AVX-512 VNNI: panels of 16 weight rows laid out in registers once per block
    // for up to 64 activation rows (as in `k_quants`), with each activation block's byte sum
    // for the offset that makes the weights unsigned.
    let panels = isa == Isa::Avx512Vnni && a.rows >= PANEL_MIN_ROWS;
    let activation_sums: Vec<i32> = if panels {
        a.values.iter().map(|v| v.iter().map(|x| i32::from(*x)).sum()).collect()
    } else {
        Vec::new()
    };
    let (group_rows, block_cols) = if panels { (PANEL_ROWS, PANEL_WIDTH) } else { (ROW_GROUP, COL_BLOCK) };
    crate::for_each_output_tile(parallel, a.rows, n, group_rows, block_cols, &|rows, cols| {
        // SAFETY: the ISA was checked above; shapes were checked above, so every index the
        // tile reads is in bounds and every cell it writes is inside `dst`; work items
        // cover disjoint (row, column) cells, so no two threads write the same cell.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            match isa {
                Isa::Avx512Vnni if panels && cols.len() == PANEL_WIDTH => {
                    x86::panel_vnni(w, a, &activation_sums, rows, cols.start, out.ptr(), n)
                }
                Isa::Avx512Vnni => x86::tile_vnni(w, a, rows, cols, out.ptr(), n),
                Isa::Avx2 => x86::tile_avx2(w, a, rows, cols, out.ptr(), n),
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = (rows, cols, &out, &activation_sums);
        }
    });
    Ok(())
}

/// Activation rows from which products on AVX-512 VNNI use panels.
const PANEL_MIN_ROWS: usize = 8;
/// Weight rows per panel: one 32-bit lane each in a 512-bit register.
const PANEL_WIDTH: usize = 16;
/// Activation rows per panel work item.
const PANEL_ROWS: usize = 64;

/// The output buffer, written by several threads at disjoint cells.
#[derive(Clone, Copy)]
struct SharedOut(*mut f32);
impl SharedOut {
    // A method, so closures capture the Sync wrapper rather than its raw pointer field.
    fn ptr(&self) -> *mut f32 {
        self.0
    }
}
// SAFETY: see `matmul`: each cell is written by exactly one work item.
unsafe impl Sync for SharedOut {}
unsafe impl Send for SharedOut {}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Q8Rows, BLOCK};
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// candle's `hsum_float_8`, step for step (the order of the additions is the result).
    #[inline(always)]
    unsafe fn hsum(x: __m256) -> f32 {
        let res = _mm256_extractf128_ps(x, 1);
        let res = _mm_add_ps(res, _mm256_castps256_ps128(x));
        let res = _mm_add_ps(res, _mm_movehl_ps(res, res));
        let res = _mm_add_ss(res, _mm_movehdup_ps(res));
        _mm_cvtss_f32(res)
    }

    /// How far ahead a lone row prefetches its weight blocks (2 KiB of values).
    const PREFETCH_BLOCKS: usize = 64;

    /// One kernel per instruction set, the same loops; only the byte dot product and the tile
    /// differ. `R` activation rows × `C` weight rows from (`r0`, `c0`), written to
    /// `out[r * n + c]`. Tiles measured on 1152×576 and 9728×896 with 512 rows: 4×4 best on
    /// AVX2 (16 vector registers), 4×8 as good on AVX-512 (32 registers).
    macro_rules! micro_and_tile {
        ($micro:ident, $tile:ident, $features:literal, $dot:ident, $rows:expr, $cols:expr) => {
            #[target_feature(enable = $features)]
            unsafe fn $micro<const R: usize, const C: usize>(
                w: &Q8Rows,
                a: &Q8Rows,
                r0: usize,
                c0: usize,
                out: *mut f32,
                n: usize,
            ) {
                let nb = w.blocks_per_row;
                let mut acc = [[_mm256_setzero_ps(); C]; R];
                for b in 0..nb {
                    if R == 1 && C == 1 {
                        // One row streams its weights from memory; the hardware prefetcher
                        // alone stays behind (docs/runtime.md).
                        let i = c0 * nb + b;
                        _mm_prefetch::<_MM_HINT_T0>(w.values.as_ptr().wrapping_add(i + PREFETCH_BLOCKS) as *const i8);
                        if i % 16 == 0 {
                            _mm_prefetch::<_MM_HINT_T0>(w.scales.as_ptr().wrapping_add(i + PREFETCH_BLOCKS) as *const i8);
                        }
                    }
                    let mut wv = [_mm256_setzero_si256(); C];
                    let mut ws = [0f32; C];
                    for c in 0..C {
                        let i = (c0 + c) * nb + b;
                        wv[c] = _mm256_loadu_si256(w.values.as_ptr().add(i) as *const __m256i);
                        ws[c] = *w.scales.get_unchecked(i);
                    }
                    for r in 0..R {
                        let i = (r0 + r) * nb + b;
                        let av = _mm256_loadu_si256(a.values.as_ptr().add(i) as *const __m256i);
                        let scale = *a.scales.get_unchecked(i);
                        let abs = _mm256_sign_epi8(av, av);
                        for c in 0..C {
                            let sums = $dot(abs, _mm256_sign_epi8(wv[c], av));
                            let d = _mm256_set1_ps(ws[c] * scale);
                            acc[r][c] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc[r][c]);
                        }
                    }
                }
                for r in 0..R {
                    for c in 0..C {
                        *out.add((r0 + r) * n + c0 + c) = hsum(acc[r][c]);
                    }
                }
            }

            #[target_feature(enable = $features)]
            pub(super) unsafe fn $tile(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
                const R: usize = $rows;
                const C: usize = $cols;
                let mut r = rows.start;
                while r < rows.end {
                    let full_rows = r + R <= rows.end;
                    // A lone activation row (decode, or rows left after the full tiles) reads
                    // one weight row at a time: one row is bound by memory, and streaming
                    // several weight rows side by side lowered the bandwidth reached (90
                    // one-row products over 85 MB of weights: 4.6 ms one at a time, 6.7 ms two,
                    // 8.0 ms four, 8.3 ms eight; candle 4.0–4.5 ms).
                    let step = if full_rows { C } else { 1 };
                    let mut c = cols.start;
                    while c < cols.end {
                        match (full_rows, c + step <= cols.end) {
                            (true, true) => $micro::<R, C>(w, a, r, c, out, n),
                            (true, false) => $micro::<R, 1>(w, a, r, c, out, n),
                            (false, _) => $micro::<1, 1>(w, a, r, c, out, n),
                        }
                        c += if c + step <= cols.end { step } else { 1 };
                    }
                    r += if full_rows { R } else { 1 };
                }
            }
        };
    }

    /// Eight sums of four products of unsigned `abs` and signed bytes: ggml's maddubs + madd.
    #[inline(always)]
    unsafe fn dot_avx2(abs: __m256i, signed: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(abs, signed))
    }

    /// The same eight sums in one instruction (exact in 32 bits, as the pair sums above are:
    /// |products| ≤ 127 · 128).
    #[inline(always)]
    unsafe fn dot_vnni(abs: __m256i, signed: __m256i) -> __m256i {
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), abs, signed)
    }

    micro_and_tile!(micro_avx2, tile_avx2, "avx2,fma", dot_avx2, 4, 4);
    micro_and_tile!(micro_vnni, tile_vnni, "avx2,fma,avx512f,avx512vl,avx512vnni", dot_vnni, 4, 8);

    /// Weight rows `c0 .. c0 + 16` against activation rows `rows` (at most 64): per block,
    /// `q[g]` holds bytes `4g .. 4g+4` of each weight row plus 128 (unsigned, for `vpdpbusd`),
    /// so each activation row's sum is corrected by 128 × its block's byte sum.
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512vnni")]
    pub(super) unsafe fn panel_vnni(w: &Q8Rows, a: &Q8Rows, sums: &[i32], rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
        const R: usize = 4;
        let nb = w.blocks_per_row;
        let lane: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let lanes = _mm512_loadu_si512(lane.as_ptr() as *const _);
        let byte_stride = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((nb * BLOCK) as i32));
        let scale_stride = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(nb as i32));
        let offset = _mm512_set1_epi8(-128);
        let mut acc = [_mm512_setzero_ps(); 64];
        let m = rows.len();
        for b in 0..nb {
            let first = w.values.as_ptr().add(c0 * nb + b) as *const u8;
            let mut q = [_mm512_setzero_si512(); BLOCK / 4];
            for (g, q) in q.iter_mut().enumerate() {
                let word = _mm512_i32gather_epi32::<1>(byte_stride, first.add(4 * g) as *const _);
                *q = _mm512_xor_si512(word, offset);
            }
            let ws = _mm512_i32gather_ps::<4>(scale_stride, w.scales.as_ptr().add(c0 * nb + b) as *const _);
            let mut r = 0;
            while r < m {
                let take = if r + R <= m { R } else { 1 };
                for k in 0..take {
                    let i = (rows.start + r + k) * nb + b;
                    let x = a.values.as_ptr().add(i) as *const i32;
                    let mut sum = _mm512_set1_epi32(-128 * *sums.get_unchecked(i));
                    for (g, q) in q.iter().enumerate() {
                        // Blocks of bytes carry no 4-byte alignment.
                        sum = _mm512_dpbusd_epi32(sum, *q, _mm512_set1_epi32(x.add(g).read_unaligned()));
                    }
                    let d = _mm512_mul_ps(ws, _mm512_set1_ps(*a.scales.get_unchecked(i)));
                    acc[r + k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, acc[r + k]);
                }
                r += take;
            }
        }
        for r in 0..m {
            _mm512_storeu_ps(out.add((rows.start + r) * n + c0), acc[r]);
        }
    }

    const _: () = assert!(BLOCK == 32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{pseudo_random_bits, serial};

    /// The plain definition: per block, exact integer dot product times both scales, summed
    /// in f64 (so the tolerance below is the kernel's float rounding only).
    fn reference(w: &Q8Rows, a: &Q8Rows) -> Vec<f64> {
        let nb = w.blocks_per_row;
        let mut out = vec![0.0; a.rows * w.rows];
        for r in 0..a.rows {
            for c in 0..w.rows {
                out[r * w.rows + c] = (0..nb)
                    .map(|b| {
                        let (x, y) = (&a.values[r * nb + b], &w.values[c * nb + b]);
                        let dot: i32 = x.iter().zip(y).map(|(p, q)| i32::from(*p) * i32::from(*q)).sum();
                        f64::from(dot) * f64::from(a.scales[r * nb + b]) * f64::from(w.scales[c * nb + b])
                    })
                    .sum();
            }
        }
        out
    }

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        pseudo_random_bits(n, seed).into_iter().map(|b| b as f32 / (1u32 << 24) as f32 * 2.0 - 1.0).collect()
    }

    #[test]
    fn products_match_the_definition_on_every_tile_shape() {
        let Some(best) = isa() else { return };
        let width = 96;
        // 23 weight rows and 7 activation rows: full tiles and every kind of remainder.
        let w = Q8Rows::quantize(&pseudo_random(23 * width, 1), 23, width).unwrap();
        // 1 and 7 rows: tiles; 70: panels (one of 16 weight rows, 7 left for the tiles) in
        // two groups, with full groups of 4 rows and a remainder.
        for m in [1, 7, 70] {
            let a = Q8Rows::quantize(&pseudo_random(m * width, 2), m, width).unwrap();
            let expected = reference(&w, &a);
            for isa in [Isa::Avx2, best] {
                let mut dst = vec![f32::NAN; m * w.rows];
                matmul(isa, &w, &a, &mut dst, &serial).unwrap();
                for (got, want) in dst.iter().zip(&expected) {
                    assert!((f64::from(*got) - want).abs() < 1e-5 * want.abs().max(1.0), "{isa:?} m={m}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn both_instruction_sets_give_the_same_bits() {
        if isa() != Some(Isa::Avx512Vnni) {
            return;
        }
        let width = 576;
        let w = Q8Rows::quantize(&pseudo_random(40 * width, 3), 40, width).unwrap();
        // Fewer rows than panels take: panels sum each output in another order.
        let a = Q8Rows::quantize(&pseudo_random(7 * width, 4), 7, width).unwrap();
        let mut x = vec![0.0; 7 * 40];
        let mut y = vec![0.0; 7 * 40];
        matmul(Isa::Avx2, &w, &a, &mut x, &serial).unwrap();
        matmul(Isa::Avx512Vnni, &w, &a, &mut y, &serial).unwrap();
        assert!(x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()));
    }

    #[test]
    fn ggml_bytes_and_shapes_are_checked() {
        let mut bytes = vec![0u8; 2 * 34];
        bytes[0..2].copy_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
        bytes[2] = (-3i8) as u8;
        let rows = Q8Rows::from_ggml_bytes(&bytes, 2, 32).unwrap();
        assert_eq!((rows.scales[0], rows.values[0][0]), (0.5, -3));
        assert!(Q8Rows::from_ggml_bytes(&bytes, 3, 32).is_none());
        assert!(Q8Rows::from_ggml_bytes(&bytes, 1, 48).is_none());
        let a = Q8Rows::quantize(&[0.0; 64], 1, 64).unwrap();
        assert!(a.values.iter().all(|v| v.iter().all(|x| *x == 0)) && a.scales.iter().all(|s| *s == 0.0));
        if let Some(isa) = isa() {
            assert!(matmul(isa, &rows, &a, &mut [0.0; 2], &serial).is_err(), "widths 32 and 64 differ");
        }
    }
}
