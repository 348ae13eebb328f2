//! The Q8_0 kernel on x86-64: tiles on AVX2, AVX-VNNI and AVX-512 VNNI (the same loops, only
//! the byte dot product differs) and panels on AVX-512 VNNI and AVX-VNNI.

use super::{Q8Rows, BLOCK};
use crate::isa::Isa;
use std::arch::x86_64::*;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols` on `isa`: a panel where `full_panel` (then
/// `cols` is one panel's width, [`super::panel_width`]), else tiles.
///
/// # Safety
/// The CPU must support `isa`, which must not be `Isa::Scalar`. `w` and `a` must hold whole
/// rows (`rows * blocks_per_row` scales and values each, equal `blocks_per_row`); `rows` must
/// lie inside `a`'s rows (at most `super::PANEL_ROWS` of them for a panel) and `cols` inside
/// `w`'s; `out` must be valid for writes of `a.rows * n` cells with `n = w.rows`, and no other
/// thread may touch the cells of `rows` × `cols` meanwhile. For a panel, `sums` must hold each
/// activation block's byte sum.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile(
    isa: Isa,
    full_panel: bool,
    w: &Q8Rows,
    a: &Q8Rows,
    sums: &[i32],
    rows: Range<usize>,
    cols: Range<usize>,
    out: *mut f32,
    n: usize,
) {
    match isa {
        Isa::Avx512Vnni if full_panel => panel_avx512(w, a, sums, rows, cols.start, out, n),
        Isa::Avx512Vnni => tile_avx512(w, a, rows, cols, out, n),
        Isa::AvxVnni if full_panel => panel_avxvnni(w, a, sums, rows, cols.start, out, n),
        Isa::AvxVnni => tile_avxvnni(w, a, rows, cols, out, n),
        Isa::Avx2 if full_panel => panel_avx2(w, a, rows, cols.start, out, n),
        _ => tile_avx2(w, a, rows, cols, out, n),
    }
}

/// candle's `hsum_float_8`, step for step (the order of the additions is the result).
///
/// # Safety
/// The CPU must have AVX.
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
        /// # Safety
        /// The CPU must have the features enabled here; activation rows `r0 .. r0 + R` and
        /// weight rows `c0 .. c0 + C` must exist in `a` and `w` (whole rows of equal width),
        /// and `out` must be valid for writes of their cells `r * n + c`.
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

        /// Activation rows `rows` × weight rows `cols`, in tiles of R × C and remainders.
        ///
        /// # Safety
        /// As for the micro-kernel, for every row of `rows` and `cols`.
        #[target_feature(enable = $features)]
        unsafe fn $tile(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
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
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn dot_avx2(abs: __m256i, signed: __m256i) -> __m256i {
    _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(abs, signed))
}

/// The same eight sums in one instruction (exact in 32 bits, as the pair sums above are:
/// |products| ≤ 127 · 128).
///
/// # Safety
/// The CPU must have AVX-512 VL and VNNI.
#[inline(always)]
unsafe fn dot_avx512(abs: __m256i, signed: __m256i) -> __m256i {
    _mm256_dpbusd_epi32(_mm256_setzero_si256(), abs, signed)
}

/// The same with AVX-VNNI's encoding of the instruction.
///
/// # Safety
/// The CPU must have AVX-VNNI.
#[inline(always)]
unsafe fn dot_avxvnni(abs: __m256i, signed: __m256i) -> __m256i {
    _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), abs, signed)
}

micro_and_tile!(micro_avx2, tile_avx2, "avx2,fma", dot_avx2, 4, 4);
micro_and_tile!(micro_avxvnni, tile_avxvnni, "avx2,fma,avxvnni", dot_avxvnni, 4, 4);
micro_and_tile!(micro_avx512, tile_avx512, "avx2,fma,avx512f,avx512vl,avx512vnni", dot_avx512, 4, 8);

/// Weight rows `c0 .. c0 + 16` against activation rows `rows` (at most 64): per block,
/// `q[g]` holds bytes `4g .. 4g+4` of each weight row plus 128 (unsigned, for `vpdpbusd`),
/// so each activation row's sum is corrected by 128 × its block's byte sum.
///
/// # Safety
/// The CPU must have AVX-512 F/VL/VNNI; weight rows `c0 .. c0 + 16` and activation rows `rows`
/// (at most 64) must exist, `sums` hold every activation block's byte sum, and `out` be valid
/// for writes of cells `r * n + c` of those rows and columns.
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512vnni")]
unsafe fn panel_avx512(w: &Q8Rows, a: &Q8Rows, sums: &[i32], rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
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

/// The panel on AVX-VNNI: weight rows `c0 .. c0 + 8` against activation rows `rows` (at most
/// 64), one weight row per 32-bit lane of a 256-bit register; otherwise as `panel_avx512`.
///
/// # Safety
/// The CPU must have AVX2, FMA and AVX-VNNI; weight rows `c0 .. c0 + 8` and activation rows
/// `rows` (at most 64) must exist, `sums` hold every activation block's byte sum, and `out` be
/// valid for writes of cells `r * n + c` of those rows and columns.
#[target_feature(enable = "avx2,fma,avxvnni")]
unsafe fn panel_avxvnni(w: &Q8Rows, a: &Q8Rows, sums: &[i32], rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    const R: usize = 4;
    let nb = w.blocks_per_row;
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let byte_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32((nb * BLOCK) as i32));
    let scale_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(nb as i32));
    let offset = _mm256_set1_epi8(-128);
    let mut acc = [_mm256_setzero_ps(); 64];
    let m = rows.len();
    for b in 0..nb {
        let first = w.values.as_ptr().add(c0 * nb + b) as *const u8;
        let mut q = [_mm256_setzero_si256(); BLOCK / 4];
        for (g, q) in q.iter_mut().enumerate() {
            let word = _mm256_i32gather_epi32::<1>(first.add(4 * g) as *const i32, byte_stride);
            *q = _mm256_xor_si256(word, offset);
        }
        let ws = _mm256_i32gather_ps::<4>(w.scales.as_ptr().add(c0 * nb + b), scale_stride);
        let mut r = 0;
        while r < m {
            let take = if r + R <= m { R } else { 1 };
            for k in 0..take {
                let i = (rows.start + r + k) * nb + b;
                let x = a.values.as_ptr().add(i) as *const i32;
                let mut sum = _mm256_set1_epi32(-128 * *sums.get_unchecked(i));
                for (g, q) in q.iter().enumerate() {
                    // Blocks of bytes carry no 4-byte alignment.
                    sum = _mm256_dpbusd_avx_epi32(sum, *q, _mm256_set1_epi32(x.add(g).read_unaligned()));
                }
                let d = _mm256_mul_ps(ws, _mm256_set1_ps(*a.scales.get_unchecked(i)));
                acc[r + k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), d, acc[r + k]);
            }
            r += take;
        }
    }
    for (r, acc) in acc.iter().enumerate().take(m) {
        _mm256_storeu_ps(out.add((rows.start + r) * n + c0), *acc);
    }
}

/// The panel on plain AVX2: weight rows `c0 .. c0 + 8` against activation rows `rows` (at
/// most 64). No unsigned offset here (`vpmaddubsw`'s pair sums of (w + 128) · x would
/// saturate): as in the tiles, each weight word takes the activation word's sign (`vpsignb`)
/// and is multiplied by its absolute value, 4 vector instructions per 4 values of 8 rows
/// against the tiles' 5 per 32 values of one pair of rows, and no horizontal sums.
///
/// # Safety
/// The CPU must have AVX2 and FMA; weight rows `c0 .. c0 + 8` and activation rows `rows` (at
/// most 64) must exist, and `out` be valid for writes of cells `r * n + c` of those rows and
/// columns.
#[target_feature(enable = "avx2,fma")]
unsafe fn panel_avx2(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    const R: usize = 4;
    let nb = w.blocks_per_row;
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let byte_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32((nb * BLOCK) as i32));
    let scale_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(nb as i32));
    let ones = _mm256_set1_epi16(1);
    let mut acc = [_mm256_setzero_ps(); 64];
    let m = rows.len();
    for b in 0..nb {
        let first = w.values.as_ptr().add(c0 * nb + b) as *const u8;
        let mut q = [_mm256_setzero_si256(); BLOCK / 4];
        for (g, q) in q.iter_mut().enumerate() {
            *q = _mm256_i32gather_epi32::<1>(first.add(4 * g) as *const i32, byte_stride);
        }
        let ws = _mm256_i32gather_ps::<4>(w.scales.as_ptr().add(c0 * nb + b), scale_stride);
        let mut r = 0;
        while r < m {
            let take = if r + R <= m { R } else { 1 };
            for k in 0..take {
                let i = (rows.start + r + k) * nb + b;
                let x = a.values.as_ptr().add(i) as *const i32;
                let mut sum = _mm256_setzero_si256();
                for (g, q) in q.iter().enumerate() {
                    // Blocks of bytes carry no 4-byte alignment.
                    let xw = _mm256_set1_epi32(x.add(g).read_unaligned());
                    let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(xw, xw), _mm256_sign_epi8(*q, xw));
                    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
                }
                let d = _mm256_mul_ps(ws, _mm256_set1_ps(*a.scales.get_unchecked(i)));
                acc[r + k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), d, acc[r + k]);
            }
            r += take;
        }
    }
    for (r, acc) in acc.iter().enumerate().take(m) {
        _mm256_storeu_ps(out.add((rows.start + r) * n + c0), *acc);
    }
}

const _: () = assert!(BLOCK == 32);
