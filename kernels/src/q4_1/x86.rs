//! The Q4_1 kernel on x86-64: tiles on AVX2, AVX-VNNI and AVX-512 VNNI (the same loops, only
//! the byte dot product differs) and panels on all three (16 weight rows wide on AVX-512, 8 on
//! the others). The nibbles are unpacked in registers: a block's 16 bytes, shifted and masked,
//! give its 32 unsigned values in order.

use super::Q4Rows;
use crate::isa::Isa;
use crate::q8_0::{Q8Rows, BLOCK};
use std::arch::x86_64::*;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols` on `isa`: a panel where `full_panel` (then
/// `cols` is one panel's width, [`super::panel_width`]), else tiles.
///
/// # Safety
/// The CPU must support `isa`, which must not be `Isa::Scalar`. `w` and `a` must hold whole
/// rows of equal width; `sums` one entry per block of `a`; `rows` must lie inside `a`'s rows
/// (at most `super::PANEL_ROWS` of them for a panel) and `cols` inside `w`'s; `out` must be
/// valid for writes of `a.rows * n` cells with `n = w.rows`, and no other thread may touch the
/// cells of `rows` × `cols` meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile(
    isa: Isa,
    full_panel: bool,
    w: &Q4Rows,
    a: &Q8Rows,
    sums: &[f32],
    rows: Range<usize>,
    cols: Range<usize>,
    out: *mut f32,
    n: usize,
) {
    match isa {
        Isa::Avx512Vnni if full_panel => panel_avx512(w, a, sums, rows, cols.start, out, n),
        Isa::Avx512Vnni => tile_avx512(w, a, sums, rows, cols, out, n),
        Isa::AvxVnni if full_panel => panel_avxvnni(w, a, sums, rows, cols.start, out, n),
        Isa::AvxVnni => tile_avxvnni(w, a, sums, rows, cols, out, n),
        Isa::Avx2 if full_panel => panel_avx2(w, a, sums, rows, cols.start, out, n),
        _ => tile_avx2(w, a, sums, rows, cols, out, n),
    }
}

/// The sum of the eight 32-bit integer lanes (exact: a block's products sum to at most
/// 32 · 15 · 128).
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn hsum_i32(x: __m256i) -> i32 {
    let res = _mm_add_epi32(_mm256_extracti128_si256::<1>(x), _mm256_castsi256_si128(x));
    let res = _mm_add_epi32(res, _mm_shuffle_epi32::<0b01_00_11_10>(res));
    _mm_cvtsi128_si32(_mm_add_epi32(res, _mm_shuffle_epi32::<0b10_11_00_01>(res)))
}

/// How far ahead a lone row prefetches its weight blocks (2 KiB of nibbles), as `q8_0` does.
const PREFETCH_BLOCKS: usize = 128;

/// Eight sums of four products of unsigned `u` and signed `s` bytes (exact: pair sums are at
/// most 2 · 15 · 128, far from `vpmaddubsw`'s saturation).
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn dot_avx2(u: __m256i, s: __m256i) -> __m256i {
    _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(u, s))
}

/// The same eight sums in one instruction.
///
/// # Safety
/// The CPU must have AVX-512 VL and VNNI.
#[inline(always)]
unsafe fn dot_avx512(u: __m256i, s: __m256i) -> __m256i {
    _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s)
}

/// The same with AVX-VNNI's encoding of the instruction.
///
/// # Safety
/// The CPU must have AVX-VNNI.
#[inline(always)]
unsafe fn dot_avxvnni(u: __m256i, s: __m256i) -> __m256i {
    _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s)
}

/// The 32 values of weight block `i` as unsigned bytes in order (low nibbles, then high).
///
/// # Safety
/// The CPU must have AVX2; block `i` must exist.
#[inline(always)]
unsafe fn unpack(w: &Q4Rows, i: usize) -> __m256i {
    let packed = _mm_loadu_si128(w.nibbles.as_ptr().add(i) as *const __m128i);
    let both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    _mm256_and_si256(both, _mm256_set1_epi8(0x0f))
}

/// One kernel per instruction set, the same loops; only the byte dot product and the tile
/// differ. `R` activation rows × `C` weight rows from (`r0`, `c0`), written to
/// `out[r * n + c]`. Each block's exact integer sum is scaled and added with the same
/// operations, in the same order, as the panels and the scalar path do, so every
/// path and shape gives the same bits: a prompt's rows read in a panel and a prefix's
/// continuation read in tiles get the same numbers.
macro_rules! micro_and_tile {
    ($micro:ident, $tile:ident, $features:literal, $dot:ident, $rows:expr, $cols:expr) => {
        /// # Safety
        /// The CPU must have the features enabled here; activation rows `r0 .. r0 + R` and
        /// weight rows `c0 .. c0 + C` must exist in `a` and `w` (whole rows of equal width),
        /// `sums` hold every block of `a`, and `out` must be valid for writes of their cells
        /// `r * n + c`.
        #[target_feature(enable = $features)]
        unsafe fn $micro<const R: usize, const C: usize>(
            w: &Q4Rows,
            a: &Q8Rows,
            sums: &[f32],
            r0: usize,
            c0: usize,
            out: *mut f32,
            n: usize,
        ) {
            let nb = w.blocks_per_row;
            let mut acc = [[0f32; C]; R];
            for b in 0..nb {
                if R == 1 && C == 1 {
                    // One row streams its weights from memory; the hardware prefetcher
                    // alone stays behind (docs/runtime.md).
                    let i = c0 * nb + b;
                    _mm_prefetch::<_MM_HINT_T0>(w.nibbles.as_ptr().wrapping_add(i + PREFETCH_BLOCKS) as *const i8);
                    if i % 16 == 0 {
                        _mm_prefetch::<_MM_HINT_T0>(w.scales.as_ptr().wrapping_add(i + PREFETCH_BLOCKS) as *const i8);
                        _mm_prefetch::<_MM_HINT_T0>(w.mins.as_ptr().wrapping_add(i + PREFETCH_BLOCKS) as *const i8);
                    }
                }
                let mut wv = [_mm256_setzero_si256(); C];
                let (mut ws, mut wm) = ([0f32; C], [0f32; C]);
                for c in 0..C {
                    let i = (c0 + c) * nb + b;
                    wv[c] = unpack(w, i);
                    ws[c] = *w.scales.get_unchecked(i);
                    wm[c] = *w.mins.get_unchecked(i);
                }
                for r in 0..R {
                    let i = (r0 + r) * nb + b;
                    let x = _mm256_loadu_si256(a.values.as_ptr().add(i) as *const __m256i);
                    let (scale, sum) = (*a.scales.get_unchecked(i), *sums.get_unchecked(i));
                    for c in 0..C {
                        let dot = hsum_i32($dot(wv[c], x)) as f32;
                        acc[r][c] += dot.mul_add(ws[c] * scale, wm[c] * sum);
                    }
                }
            }
            for r in 0..R {
                for c in 0..C {
                    *out.add((r0 + r) * n + c0 + c) = acc[r][c];
                }
            }
        }

        /// Activation rows `rows` × weight rows `cols`, in tiles of R × C and remainders; a
        /// lone activation row reads one weight row at a time (bound by memory, as in `q8_0`).
        ///
        /// # Safety
        /// As for the micro-kernel, for every row of `rows` and `cols`.
        #[target_feature(enable = $features)]
        unsafe fn $tile(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
            const R: usize = $rows;
            const C: usize = $cols;
            let mut r = rows.start;
            while r < rows.end {
                let full_rows = r + R <= rows.end;
                let step = if full_rows { C } else { 1 };
                let mut c = cols.start;
                while c < cols.end {
                    match (full_rows, c + step <= cols.end) {
                        (true, true) => $micro::<R, C>(w, a, sums, r, c, out, n),
                        (true, false) => $micro::<R, 1>(w, a, sums, r, c, out, n),
                        (false, _) => $micro::<1, 1>(w, a, sums, r, c, out, n),
                    }
                    c += if c + step <= cols.end { step } else { 1 };
                }
                r += if full_rows { R } else { 1 };
            }
        }
    };
}

micro_and_tile!(micro_avx2, tile_avx2, "avx2,fma", dot_avx2, 4, 4);
micro_and_tile!(micro_avxvnni, tile_avxvnni, "avx2,fma,avxvnni", dot_avxvnni, 4, 4);
micro_and_tile!(micro_avx512, tile_avx512, "avx2,fma,avx512f,avx512vl,avx512vnni", dot_avx512, 4, 8);

/// Weight rows `c0 .. c0 + 16` against activation rows `rows` (at most 64): per block, lane
/// `l` of `q[g]` holds values `4g .. 4g + 4` of weight row `c0 + l`, gathered as 4 bytes of
/// nibbles (`q[g]` the low halves, `q[g + 4]` the high ones), so one `vpdpbusd` multiplies 4
/// broadcast activation bytes by 4 values of all 16 rows.
///
/// # Safety
/// The CPU must have AVX-512 F/VL/VNNI; weight rows `c0 .. c0 + 16` and activation rows `rows`
/// (at most 64) must exist, `sums` hold every activation block, and `out` be valid for writes
/// of cells `r * n + c` of those rows and columns.
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512vnni")]
unsafe fn panel_avx512(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    let nb = w.blocks_per_row;
    let lane: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    let lanes = _mm512_loadu_si512(lane.as_ptr() as *const _);
    let byte_stride = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((nb * BLOCK / 2) as i32));
    let scale_stride = _mm512_mullo_epi32(lanes, _mm512_set1_epi32(nb as i32));
    let mask = _mm512_set1_epi8(0x0f);
    let mut acc = [_mm512_setzero_ps(); 64];
    let m = rows.len();
    for b in 0..nb {
        let first = w.nibbles.as_ptr().add(c0 * nb + b) as *const u8;
        let mut q = [_mm512_setzero_si512(); BLOCK / 4];
        for g in 0..BLOCK / 8 {
            let word = _mm512_i32gather_epi32::<1>(byte_stride, first.add(4 * g) as *const _);
            q[g] = _mm512_and_si512(word, mask);
            q[g + BLOCK / 8] = _mm512_and_si512(_mm512_srli_epi32::<4>(word), mask);
        }
        let ws = _mm512_i32gather_ps::<4>(scale_stride, w.scales.as_ptr().add(c0 * nb + b) as *const _);
        let wm = _mm512_i32gather_ps::<4>(scale_stride, w.mins.as_ptr().add(c0 * nb + b) as *const _);
        for (r, acc) in acc.iter_mut().enumerate().take(m) {
            let i = (rows.start + r) * nb + b;
            let x = a.values.as_ptr().add(i) as *const i32;
            let mut sum = _mm512_setzero_si512();
            for (g, q) in q.iter().enumerate() {
                // Blocks of bytes carry no 4-byte alignment.
                sum = _mm512_dpbusd_epi32(sum, *q, _mm512_set1_epi32(x.add(g).read_unaligned()));
            }
            let d = _mm512_mul_ps(ws, _mm512_set1_ps(*a.scales.get_unchecked(i)));
            let offset = _mm512_mul_ps(wm, _mm512_set1_ps(*sums.get_unchecked(i)));
            *acc = _mm512_add_ps(*acc, _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, offset));
        }
    }
    for (r, acc) in acc.iter().enumerate().take(m) {
        _mm512_storeu_ps(out.add((rows.start + r) * n + c0), *acc);
    }
}

/// The 256-bit panels (8 weight rows, one per 32-bit lane), otherwise as `panel_avx512`;
/// `$accumulate(sum, q, x)` adds the eight lanes' sums of four byte products.
macro_rules! panel_256 {
    ($name:ident, $features:literal, $accumulate:ident) => {
        /// # Safety
        /// The CPU must have the features enabled here; weight rows `c0 .. c0 + 8` and
        /// activation rows `rows` (at most 64) must exist, `sums` hold every activation
        /// block, and `out` be valid for writes of cells `r * n + c` of those rows and columns.
        #[target_feature(enable = $features)]
        unsafe fn $name(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
            let nb = w.blocks_per_row;
            let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let byte_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32((nb * BLOCK / 2) as i32));
            let scale_stride = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(nb as i32));
            let mask = _mm256_set1_epi8(0x0f);
            let mut acc = [_mm256_setzero_ps(); 64];
            let m = rows.len();
            for b in 0..nb {
                let first = w.nibbles.as_ptr().add(c0 * nb + b) as *const u8;
                let mut q = [_mm256_setzero_si256(); BLOCK / 4];
                for g in 0..BLOCK / 8 {
                    let word = _mm256_i32gather_epi32::<1>(first.add(4 * g) as *const i32, byte_stride);
                    q[g] = _mm256_and_si256(word, mask);
                    q[g + BLOCK / 8] = _mm256_and_si256(_mm256_srli_epi32::<4>(word), mask);
                }
                let ws = _mm256_i32gather_ps::<4>(w.scales.as_ptr().add(c0 * nb + b), scale_stride);
                let wm = _mm256_i32gather_ps::<4>(w.mins.as_ptr().add(c0 * nb + b), scale_stride);
                for (r, acc) in acc.iter_mut().enumerate().take(m) {
                    let i = (rows.start + r) * nb + b;
                    let x = a.values.as_ptr().add(i) as *const i32;
                    let mut sum = _mm256_setzero_si256();
                    for (g, q) in q.iter().enumerate() {
                        // Blocks of bytes carry no 4-byte alignment.
                        sum = $accumulate(sum, *q, _mm256_set1_epi32(x.add(g).read_unaligned()));
                    }
                    let d = _mm256_mul_ps(ws, _mm256_set1_ps(*a.scales.get_unchecked(i)));
                    let offset = _mm256_mul_ps(wm, _mm256_set1_ps(*sums.get_unchecked(i)));
                    *acc = _mm256_add_ps(*acc, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), d, offset));
                }
            }
            for (r, acc) in acc.iter().enumerate().take(m) {
                _mm256_storeu_ps(out.add((rows.start + r) * n + c0), *acc);
            }
        }
    };
}

/// `sum` plus the lanes' sums of four products of unsigned `q` and signed `x` bytes.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn accumulate_avx2(sum: __m256i, q: __m256i, x: __m256i) -> __m256i {
    _mm256_add_epi32(sum, dot_avx2(q, x))
}

/// The same in one instruction.
///
/// # Safety
/// The CPU must have AVX-VNNI.
#[inline(always)]
unsafe fn accumulate_avxvnni(sum: __m256i, q: __m256i, x: __m256i) -> __m256i {
    _mm256_dpbusd_avx_epi32(sum, q, x)
}

panel_256!(panel_avx2, "avx2,fma", accumulate_avx2);
panel_256!(panel_avxvnni, "avx2,fma,avxvnni", accumulate_avxvnni);

const _: () = assert!(BLOCK == 32);
