//! Interleaved Q4_K/Q6_K records (`k_quants::interleaved`) on AVX2 and AVX-VNNI: a record's
//! 16 rows are two panels of 8, each word of rows 0..8 in the first 32 bytes of its 64 and
//! rows 8..16 in the last. As on AVX-512, a few activation rows (decode) are multiplied
//! straight from the records and more (prompts) through the panel laid out from them; both
//! give what the file layout's panels give, to the bit: the same exact integer sums, the same
//! offsets and the same f32 operations in the same order as `panel_rows`.

use super::super::interleaved::{record_bytes, Q4K_DMIN, Q4K_SCALES, Q4K_VALUES, Q6K_SCALES, Q6K_VALUES};
use super::{activation_word, add_scaled_row, panel_rows, rows_into, Panel, PanelFields, PANEL};
use super::{Q8KRows, WeightType, PANEL_ROWS};
use crate::isa::Isa;
use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Word group at `at` of panel `half` (rows 8·half .. 8·half + 8) of a record.
///
/// # Safety
/// The CPU must have AVX; `record + at + 64` must lie inside the record.
#[inline(always)]
unsafe fn half_word(record: *const u8, at: usize, half: usize) -> __m256i {
    _mm256_loadu_si256(record.add(at + 32 * half) as *const __m256i)
}

/// Byte `k` of each 32-bit lane of `v`.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn lane_byte(v: __m256i, k: usize) -> __m256i {
    _mm256_and_si256(_mm256_srlv_epi32(v, _mm256_set1_epi32(8 * k as i32)), _mm256_set1_epi32(0xff))
}

/// A sub-block's integer scales (one per lane, at most 16 bits) in the form the path
/// multiplies integer sums by (`scale_lane`: VNNI the lane, AVX2 both 16-bit halves).
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn scale_lanes<const VNNI: bool>(scale: __m256i) -> __m256i {
    if VNNI {
        scale
    } else {
        let half = _mm256_and_si256(scale, _mm256_set1_epi32(0xffff));
        _mm256_or_si256(half, _mm256_slli_epi32(half, 16))
    }
}

/// Q4_K: scales 0..4, scales 4..8, mins 0..4, mins 4..8 of the panel's 8 rows, a byte each,
/// four to a lane, by `q4k_scales_and_mins`'s bit operations on all 8 rows at once.
///
/// # Safety
/// The CPU must have AVX2; `record` must be a whole Q4_K record and `half < 2`.
#[inline(always)]
unsafe fn q4k_scales_and_mins(record: *const u8, half: usize) -> [__m256i; 4] {
    let word = |j: usize| half_word(record, Q4K_SCALES + 64 * j, half);
    let (u0, u1, u2) = (word(0), word(1), word(2));
    let (m1, m2, m3) = (_mm256_set1_epi32(0x3f3f_3f3f), _mm256_set1_epi32(0x0f0f_0f0f), _mm256_set1_epi32(0x0303_0303));
    let high = |u: __m256i| _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 6), m3), 4);
    [
        _mm256_and_si256(u0, m1),
        _mm256_or_si256(_mm256_and_si256(u2, m2), high(u0)),
        _mm256_and_si256(u1, m1),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u2, 4), m2), high(u1)),
    ]
}

/// Q6_K: scale `s` (a signed byte) of each of the panel's 8 rows, widened to 32 bits.
///
/// # Safety
/// The CPU must have AVX2; `record` must be a whole Q6_K record and `half < 2`.
#[inline(always)]
unsafe fn q6k_scale(record: *const u8, half: usize, s: usize) -> __m256i {
    let word = half_word(record, Q6K_SCALES + 64 * (s / 4), half);
    _mm256_srai_epi32(_mm256_sllv_epi32(word, _mm256_set1_epi32(24 - 8 * (s % 4) as i32)), 24)
}

/// Q6_K's values of one group for 8 rows from its low-bit word (shifted down for parts 2 and
/// 3) and high-bit word, as `panel_q6k` makes them.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn q6k_values(nibbles: __m256i, high: __m256i, part: usize) -> __m256i {
    let three_up = _mm256_set1_epi8(0x30);
    // Shifts of 16-bit lanes: what crosses into the next byte lands outside bits 4 and 5.
    let high_bits = match part {
        0 => _mm256_and_si256(_mm256_slli_epi16(high, 4), three_up),
        1 => _mm256_and_si256(_mm256_slli_epi16(high, 2), three_up),
        2 => _mm256_and_si256(high, three_up),
        _ => _mm256_and_si256(_mm256_srli_epi16(high, 2), three_up),
    };
    _mm256_or_si256(_mm256_and_si256(nibbles, _mm256_set1_epi8(0x0f)), high_bits)
}

/// The three value words of half `h`, word `k` of a Q6_K record (see `record_words`).
///
/// # Safety
/// As `q6k_scale`, with `h < 2` and `k < 8`.
#[inline(always)]
unsafe fn q6k_words(record: *const u8, half: usize, h: usize, k: usize) -> [__m256i; 3] {
    std::array::from_fn(|j| half_word(record, Q6K_VALUES + 3 * 64 * (8 * h + k) + 64 * j, half))
}

/// `acc[r]` += super-block `b` of panel `half` of a Q4_K record · activation rows `r0 + r`.
///
/// # Safety
/// The CPU must have AVX2, FMA and F16C (and AVX-VNNI where `VNNI`); `record` must be a whole
/// Q4_K record, `half < 2`; activation rows `r0 .. r0 + R` and their block `b` must exist in `a`.
#[inline(always)]
unsafe fn rows_q4k<const VNNI: bool, const R: usize>(record: *const u8, half: usize, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m256; R]) {
    let nb = a.blocks_per_row;
    let x: [*const i32; R] = std::array::from_fn(|r| a.values.as_ptr().add((r0 + r) * nb + b) as *const i32);
    let packed = q4k_scales_and_mins(record, half);
    let low = _mm256_set1_epi8(0x0f);
    let mut total = [_mm256_setzero_si256(); R];
    for p in 0..4 {
        // Sub-blocks 2p (low nibbles, groups 16p + k) and 2p + 1 (high nibbles, 16p + 8 + k).
        let scale = [scale_lanes::<VNNI>(lane_byte(packed[p / 2], 2 * (p % 2))), scale_lanes::<VNNI>(lane_byte(packed[p / 2], 2 * (p % 2) + 1))];
        let values = |k: usize| {
            let word = half_word(record, Q4K_VALUES + 64 * (8 * p + k), half);
            [_mm256_and_si256(word, low), _mm256_and_si256(_mm256_srli_epi16(word, 4), low)]
        };
        if VNNI {
            // Half a sub-block at a time fits 16 bits, which `vpdpwssd` scales (as
            // `add_scaled_halves_vnni`).
            for first in [0, 4] {
                let mut sum = [[_mm256_setzero_si256(); R]; 2];
                for k in first..first + 4 {
                    let q = values(k);
                    for r in 0..R {
                        for j in 0..2 {
                            sum[j][r] = _mm256_dpbusd_avx_epi32(sum[j][r], q[j], activation_word(x[r], 16 * p + 8 * j + k));
                        }
                    }
                }
                for r in 0..R {
                    for j in 0..2 {
                        total[r] = _mm256_dpwssd_avx_epi32(total[r], sum[j][r], scale[j]);
                    }
                }
            }
        } else {
            // A whole sub-block's pair sums fit 16 bits (as `add_scaled_pairs_avx2`).
            let mut pairs = [[_mm256_setzero_si256(); R]; 2];
            for k in 0..8 {
                let q = values(k);
                for r in 0..R {
                    for j in 0..2 {
                        pairs[j][r] = _mm256_add_epi16(pairs[j][r], _mm256_maddubs_epi16(q[j], activation_word(x[r], 16 * p + 8 * j + k)));
                    }
                }
            }
            for r in 0..R {
                for j in 0..2 {
                    total[r] = _mm256_add_epi32(total[r], _mm256_madd_epi16(pairs[j][r], scale[j]));
                }
            }
        }
    }
    let dmin = _mm256_cvtph_ps(_mm_loadu_si128(record.add(Q4K_DMIN + 16 * half) as *const __m128i));
    let d = _mm256_cvtph_ps(_mm_loadu_si128(record.add(16 * half) as *const __m128i));
    let offset: [__m256; 8] = std::array::from_fn(|s| _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(lane_byte(packed[2 + s / 4], s % 4))));
    for r in 0..R {
        add_scaled_row(&offset, d, a, (r0 + r) * nb + b, total[r], &mut acc[r]);
    }
}

/// As `rows_q4k`, for a Q6_K record.
///
/// # Safety
/// As `rows_q4k`, for a Q6_K record.
#[inline(always)]
unsafe fn rows_q6k<const VNNI: bool, const R: usize>(record: *const u8, half: usize, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m256; R]) {
    let nb = a.blocks_per_row;
    let x: [*const i32; R] = std::array::from_fn(|r| a.values.as_ptr().add((r0 + r) * nb + b) as *const i32);
    let mut total = [_mm256_setzero_si256(); R];
    for h in 0..2 {
        // Words k and k + 1 make two consecutive groups of one sub-block: the pair sums of two
        // groups of 6-bit weights fit 16 bits (as `add_scaled_pairs_avx2`).
        for k in (0..8).step_by(2) {
            let words = [q6k_words(record, half, h, k), q6k_words(record, half, h, k + 1)];
            for part in 0..4 {
                let q: [__m256i; 2] = std::array::from_fn(|j| {
                    let [first, second, high] = words[j];
                    let nibbles = match part {
                        0 => first,
                        1 => second,
                        2 => _mm256_srli_epi16(first, 4),
                        _ => _mm256_srli_epi16(second, 4),
                    };
                    q6k_values(nibbles, high, part)
                });
                let (s, g) = (8 * h + 2 * part + k / 4, 32 * h + 8 * part + k);
                let scale = scale_lanes::<VNNI>(q6k_scale(record, half, s));
                for r in 0..R {
                    let (x0, x1) = (activation_word(x[r], g), activation_word(x[r], g + 1));
                    let scaled = if VNNI {
                        let sum = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), q[0], x0), q[1], x1);
                        _mm256_mullo_epi32(sum, scale)
                    } else {
                        _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(q[0], x0), _mm256_maddubs_epi16(q[1], x1)), scale)
                    };
                    total[r] = _mm256_add_epi32(total[r], scaled);
                }
            }
        }
    }
    let d = _mm256_cvtph_ps(_mm_loadu_si128(record.add(16 * half) as *const __m128i));
    let d32 = _mm256_mul_ps(_mm256_set1_ps(32.0), d);
    let offset: [__m256; 16] = std::array::from_fn(|s| _mm256_mul_ps(d32, _mm256_cvtepi32_ps(q6k_scale(record, half, s))));
    for r in 0..R {
        add_scaled_row(&offset, d, a, (r0 + r) * nb + b, total[r], &mut acc[r]);
    }
}

/// Lays out panel `half` of super-block `b` of the record holding weight rows `c0 ..` (c0 a
/// multiple of 8): what `panel_q4k` lays out from the file's layout.
///
/// # Safety
/// As `rows_q4k`, for the records of rows `c0 ..`, `row_bytes / 144` records per 16 rows;
/// `panel` must be valid for writes.
#[inline(always)]
unsafe fn lay_q4k<const VNNI: bool>(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut Panel<8>) {
    let (record, half) = (w.add(c0 / 16 * 16 * row_bytes + b * record_bytes(WeightType::Q4K)), c0 / 8 % 2);
    let fields = PanelFields::of(panel);
    let low = _mm256_set1_epi8(0x0f);
    for p in 0..4 {
        for k in 0..8 {
            let word = half_word(record, Q4K_VALUES + 64 * (8 * p + k), half);
            fields.q.add(16 * p + k).write(_mm256_and_si256(word, low));
            fields.q.add(16 * p + 8 + k).write(_mm256_and_si256(_mm256_srli_epi16(word, 4), low));
        }
    }
    let packed = q4k_scales_and_mins(record, half);
    let dmin = _mm256_cvtph_ps(_mm_loadu_si128(record.add(Q4K_DMIN + 16 * half) as *const __m128i));
    for s in 0..8 {
        _mm256_storeu_si256(fields.scale.add(s * PANEL) as *mut __m256i, scale_lanes::<VNNI>(lane_byte(packed[s / 4], s % 4)));
        _mm256_storeu_ps(fields.offset.add(s * PANEL), _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(lane_byte(packed[2 + s / 4], s % 4))));
    }
    _mm256_storeu_ps(fields.d, _mm256_cvtph_ps(_mm_loadu_si128(record.add(16 * half) as *const __m128i)));
}

/// As `lay_q4k`, for Q6_K (what `panel_q6k` lays out).
///
/// # Safety
/// As `lay_q4k`, for Q6_K records (`row_bytes / 210` per 16 rows).
#[inline(always)]
unsafe fn lay_q6k<const VNNI: bool>(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut Panel<16>) {
    let (record, half) = (w.add(c0 / 16 * 16 * row_bytes + b * record_bytes(WeightType::Q6K)), c0 / 8 % 2);
    let fields = PanelFields::of(panel);
    for h in 0..2 {
        for k in 0..8 {
            let [first, second, high] = q6k_words(record, half, h, k);
            let nibbles = [first, second, _mm256_srli_epi16(first, 4), _mm256_srli_epi16(second, 4)];
            for (part, nibbles) in nibbles.into_iter().enumerate() {
                fields.q.add(32 * h + 8 * part + k).write(q6k_values(nibbles, high, part));
            }
        }
    }
    let d = _mm256_cvtph_ps(_mm_loadu_si128(record.add(16 * half) as *const __m128i));
    let d32 = _mm256_mul_ps(_mm256_set1_ps(32.0), d);
    for s in 0..16 {
        let scale = q6k_scale(record, half, s);
        _mm256_storeu_si256(fields.scale.add(s * PANEL) as *mut __m256i, scale_lanes::<VNNI>(scale));
        _mm256_storeu_ps(fields.offset.add(s * PANEL), _mm256_mul_ps(d32, _mm256_cvtepi32_ps(scale)));
    }
    _mm256_storeu_ps(fields.d, d);
}

panel_tile!(panel_tile_q4k_avx2, lay_q4k, 8, false, "avx2,fma,f16c");
panel_tile!(panel_tile_q6k_avx2, lay_q6k, 16, false, "avx2,fma,f16c");
panel_tile!(panel_tile_q4k_vnni, lay_q4k, 8, true, "avx2,fma,f16c,avxvnni");
panel_tile!(panel_tile_q6k_vnni, lay_q6k, 16, true, "avx2,fma,f16c,avxvnni");

/// A few activation rows (decode) × the 16 weight rows of the records at `w + c0 · row_bytes`,
/// both panels block by block, 4 rows or 1 at a time.
macro_rules! few_rows {
    ($name:ident, $ty:expr, $rows:ident, $vnni:literal, $features:literal) => {
        /// # Safety
        /// As `interleaved_tile`, with fewer than `PANEL_MIN_ROWS` rows, on a CPU with the
        /// features enabled here.
        #[target_feature(enable = $features)]
        unsafe fn $name(w: *const u8, row_bytes: usize, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
            let first = w.add(c0 * row_bytes);
            let m = rows.len();
            let mut acc = [[_mm256_setzero_ps(); super::super::PANEL_MIN_ROWS]; 2];
            for b in 0..a.blocks_per_row {
                let record = first.add(b * record_bytes($ty));
                _mm_prefetch::<_MM_HINT_T0>(record.wrapping_add(super::PREFETCH) as *const i8);
                for (half, acc) in acc.iter_mut().enumerate() {
                    let mut r = 0;
                    while r < m {
                        if let Some((part, _)) = acc[r..m].split_first_chunk_mut::<4>() {
                            $rows::<$vnni, 4>(record, half, a, b, rows.start + r, part);
                            r += 4;
                        } else if let Some((part, _)) = acc[r..m].split_first_chunk_mut::<1>() {
                            $rows::<$vnni, 1>(record, half, a, b, rows.start + r, part);
                            r += 1;
                        }
                    }
                }
            }
            for (half, acc) in acc.iter().enumerate() {
                for (r, acc) in acc[..m].iter().enumerate() {
                    _mm256_storeu_ps(out.add((rows.start + r) * n + c0 + PANEL * half), *acc);
                }
            }
        }
    };
}
few_rows!(few_rows_q4k_avx2, WeightType::Q4K, rows_q4k, false, "avx2,fma,f16c");
few_rows!(few_rows_q6k_avx2, WeightType::Q6K, rows_q6k, false, "avx2,fma,f16c");
few_rows!(few_rows_q4k_vnni, WeightType::Q4K, rows_q4k, true, "avx2,fma,f16c,avxvnni");
few_rows!(few_rows_q6k_vnni, WeightType::Q6K, rows_q6k, true, "avx2,fma,f16c,avxvnni");

/// Activation rows `rows` (at most PANEL_ROWS) × weight rows `c0 .. c0 + 16` of an
/// interleaved matrix of `ty`, on `isa` (`Avx2` or `AvxVnni`).
///
/// # Safety
/// The CPU must support `isa`. `w` must hold the records of rows `c0 .. c0 + 16` (c0 a
/// multiple of 16) of `a.blocks_per_row` super-blocks; `rows` must lie inside `a`'s rows;
/// `out` must be valid for writes of cells `r * n + c` for those rows and columns, and no
/// other thread may touch them meanwhile.
#[allow(clippy::too_many_arguments)]
pub(in super::super) unsafe fn interleaved_tile(isa: Isa, ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    let row_bytes = a.blocks_per_row * ty.block_bytes();
    if rows.len() < super::super::PANEL_MIN_ROWS {
        return match (ty, isa == Isa::AvxVnni) {
            (WeightType::Q4K, false) => few_rows_q4k_avx2(w, row_bytes, a, rows, c0, out, n),
            (WeightType::Q6K, false) => few_rows_q6k_avx2(w, row_bytes, a, rows, c0, out, n),
            (WeightType::Q4K, true) => few_rows_q4k_vnni(w, row_bytes, a, rows, c0, out, n),
            (WeightType::Q6K, true) => few_rows_q6k_vnni(w, row_bytes, a, rows, c0, out, n),
        };
    }
    for c in [c0, c0 + PANEL] {
        match (ty, isa == Isa::AvxVnni) {
            (WeightType::Q4K, false) => panel_tile_q4k_avx2(w, row_bytes, a, rows.clone(), c, out, n),
            (WeightType::Q6K, false) => panel_tile_q6k_avx2(w, row_bytes, a, rows.clone(), c, out, n),
            (WeightType::Q4K, true) => panel_tile_q4k_vnni(w, row_bytes, a, rows.clone(), c, out, n),
            (WeightType::Q6K, true) => panel_tile_q6k_vnni(w, row_bytes, a, rows.clone(), c, out, n),
        }
    }
}
