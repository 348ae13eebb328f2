//! Interleaved Q4_K/Q6_K records (`k_quants::interleaved`) on AVX-512 VNNI: a record's 16 rows
//! are one panel. A few activation rows (decode) are multiplied straight from the records and
//! more (prompts) through the panel laid out from them; both give what the file layout's
//! panels give, to the bit (the same exact integer sums and the same f32 operations in the
//! same order as `panel_rows_q4k` and `panel_rows_q6k`).

use super::super::interleaved::{record_bytes, Q4K_DMIN, Q4K_SCALES, Q4K_VALUES, Q6K_SCALES, Q6K_VALUES};
use super::{panel_rows_q4k, panel_rows_q6k, rows_into, sums_word, values_word, PanelQ4K, PanelQ6K, PANEL_ROWS, PREFETCH};
use super::{Q8KRows, WeightType};
use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr::addr_of_mut;

/// The 16 rows' scales and mins of an interleaved record: scales 0..4, scales 4..8, mins 0..4
/// and mins 4..8, a byte each, four to a lane (row `i` in lane `i`), by
/// `q4k_scales_and_mins`'s bit operations on the three packed words of all rows at once.
///
/// # Safety
/// The CPU must have AVX-512 F; `record` must be valid for reads of 256 bytes.
#[inline(always)]
unsafe fn interleaved_scales_and_mins(record: *const u8) -> [__m512i; 4] {
    let word = |j: usize| _mm512_loadu_si512(record.add(Q4K_SCALES + 64 * j) as *const _);
    let (u0, u1, u2) = (word(0), word(1), word(2));
    let (m1, m2, m3) = (_mm512_set1_epi32(0x3f3f_3f3f), _mm512_set1_epi32(0x0f0f_0f0f), _mm512_set1_epi32(0x0303_0303));
    let high = |u: __m512i| _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(u, 6), m3), 4);
    [
        _mm512_and_si512(u0, m1),
        _mm512_or_si512(_mm512_and_si512(u2, m2), high(u0)),
        _mm512_and_si512(u1, m1),
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(u2, 4), m2), high(u1)),
    ]
}

/// Byte `k` of each lane of `v`, as a 32-bit integer.
///
/// # Safety
/// The CPU must have AVX-512 F.
#[inline(always)]
unsafe fn lane_byte(v: __m512i, k: usize) -> __m512i {
    _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32(8 * k as i32)), _mm512_set1_epi32(0xff))
}

/// A min (below 64) in both 16-bit halves of its lane, for `vpdpwssd` (as `PanelQ4K::min`).
///
/// # Safety
/// The CPU must have AVX-512 F.
#[inline(always)]
unsafe fn min_pair(m: __m512i) -> __m512i {
    _mm512_or_si512(m, _mm512_slli_epi32(m, 16))
}

/// `acc[r]` += super-block `b` of 16 interleaved weight rows · activation rows `r0 + r`, read
/// straight from the record (no panel laid out: with a few activation rows, writing and
/// reading back the panel would cost more than the products). The same operations in the same
/// order as `panel_rows_q4k` on the panel `interleaved_q4k` lays out, so the same bits.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `record` must be a whole record;
/// activation rows `r0 .. r0 + R` and their block `b` must exist in `a`.
#[inline(always)]
unsafe fn interleaved_rows_q4k<const R: usize>(record: *const u8, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m512; R]) {
    let block: [usize; R] = std::array::from_fn(|r| (r0 + r) * a.blocks_per_row + b);
    let packed = interleaved_scales_and_mins(record);
    let low = _mm512_set1_epi8(0x0f);
    let mut total = [_mm512_setzero_ps(); R];
    for p in 0..4 {
        // Sub-blocks 2p (low nibbles) and 2p + 1 (high nibbles) of the same 32 bytes.
        let (mut low_sum, mut high_sum) = ([_mm512_setzero_si512(); R], [_mm512_setzero_si512(); R]);
        for k in 0..8 {
            let word = _mm512_loadu_si512(record.add(Q4K_VALUES + 64 * (8 * p + k)) as *const _);
            let (lo, hi) = (_mm512_and_si512(word, low), _mm512_and_si512(_mm512_srli_epi16(word, 4), low));
            for r in 0..R {
                low_sum[r] = _mm512_dpbusd_epi32(low_sum[r], lo, values_word(a, block[r], 16 * p + k));
                high_sum[r] = _mm512_dpbusd_epi32(high_sum[r], hi, values_word(a, block[r], 16 * p + 8 + k));
            }
        }
        let (low_scale, high_scale) = (_mm512_cvtepi32_ps(lane_byte(packed[p / 2], 2 * (p % 2))), _mm512_cvtepi32_ps(lane_byte(packed[p / 2], 2 * (p % 2) + 1)));
        for r in 0..R {
            total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(low_sum[r]), low_scale, total[r]);
            total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(high_sum[r]), high_scale, total[r]);
        }
    }
    let mut mins = [_mm512_setzero_si512(); R];
    for s in 0..8 {
        let min = min_pair(lane_byte(packed[2 + s / 4], s % 4));
        for r in 0..R {
            mins[r] = _mm512_dpwssd_epi32(mins[r], min, sums_word(a, block[r], s));
        }
    }
    let d = _mm512_cvtph_ps(_mm256_loadu_si256(record as *const __m256i));
    let dmin = _mm512_cvtph_ps(_mm256_loadu_si256(record.add(Q4K_DMIN) as *const __m256i));
    for r in 0..R {
        let da = _mm512_set1_ps(*a.scales.get_unchecked(block[r]));
        acc[r] = _mm512_fmadd_ps(total[r], _mm512_mul_ps(d, da), acc[r]);
        acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins[r]), _mm512_mul_ps(dmin, da), acc[r]);
    }
}

/// Lays out super-block `b` of weight rows `c0 .. c0 + 16` from their interleaved record
/// (`interleaved`): the values are plain loads, and the scales and mins come from the three
/// packed words of all 16 rows by `q4k_scales_and_mins`'s bit operations, one row per lane.
/// Gives what `panel_q4k` gives from the file's layout, field by field.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `w` must hold the records of rows
/// `c0 ..` (c0 a multiple of 16) with `row_bytes / 144` records per 16 rows; `panel` must be
/// valid for writes.
#[inline(always)]
unsafe fn interleaved_q4k(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut PanelQ4K) {
    // Records of 16 rows: c0 · row_bytes is where rows c0.. start in both layouts.
    let record = w.add(c0 * row_bytes + b * record_bytes(WeightType::Q4K));
    let low = _mm512_set1_epi8(0x0f);
    let q = addr_of_mut!((*panel).q).cast::<__m512i>();
    for p in 0..4 {
        for k in 0..8 {
            // Word k of the 32 bytes at 16 + 32p of each row: its low nibbles are values
            // 64p + 4k .., its high nibbles the same 32 places later (as `panel_q4k`).
            let word = _mm512_loadu_si512(record.add(Q4K_VALUES + 64 * (8 * p + k)) as *const _);
            let g = 16 * p + k;
            q.add(g).write(_mm512_and_si512(word, low));
            q.add(g + 8).write(_mm512_and_si512(_mm512_srli_epi16(word, 4), low));
        }
    }
    let packed = interleaved_scales_and_mins(record);
    let (scale, min) = (addr_of_mut!((*panel).scale).cast::<__m512>(), addr_of_mut!((*panel).min).cast::<__m512i>());
    for s in 0..8 {
        scale.add(s).write_unaligned(_mm512_cvtepi32_ps(lane_byte(packed[s / 4], s % 4)));
        min.add(s).write_unaligned(min_pair(lane_byte(packed[2 + s / 4], s % 4)));
    }
    addr_of_mut!((*panel).d).cast::<__m512>().write_unaligned(_mm512_cvtph_ps(_mm256_loadu_si256(record as *const __m256i)));
    addr_of_mut!((*panel).dmin).cast::<__m512>().write_unaligned(_mm512_cvtph_ps(_mm256_loadu_si256(record.add(Q4K_DMIN) as *const __m256i)));
}


panel_tile!(interleaved_tile_q4k, PanelQ4K, interleaved_q4k, panel_rows_q4k);

/// Q6_K's 4 + 2 bit values of one value group for 16 rows: the low 4 bits are `nibbles`'
/// bytes (already shifted down for the high nibbles; other bits masked here), the high 2 bits
/// sit at bit `2 · part` of `high`'s bytes and go to bits 4 and 5.
///
/// # Safety
/// The CPU must have AVX-512 F/BW.
#[inline(always)]
unsafe fn q6k_values(nibbles: __m512i, high: __m512i, part: usize) -> __m512i {
    let three_up = _mm512_set1_epi8(0x30);
    // Shifts of 16-bit lanes: what crosses into the next byte lands outside bits 4 and 5.
    let high_bits = match part {
        0 => _mm512_and_si512(_mm512_slli_epi16(high, 4), three_up),
        1 => _mm512_and_si512(_mm512_slli_epi16(high, 2), three_up),
        2 => _mm512_and_si512(high, three_up),
        _ => _mm512_and_si512(_mm512_srli_epi16(high, 2), three_up),
    };
    // (nibbles & 0x0f) | high_bits.
    _mm512_ternarylogic_epi32::<0xEA>(nibbles, _mm512_set1_epi8(0x0f), high_bits)
}

/// The three words of value bits for half `h` and word `k` of a Q6_K record: the low bits of
/// values 128h + 4k .. (+ 32 · 0 and 2 in its nibbles), of 128h + 32 + 4k .. (parts 1 and 3),
/// and their high bits.
///
/// # Safety
/// The CPU must have AVX-512 F; `record` must be a whole Q6_K record, `h < 2` and `k < 8`.
#[inline(always)]
unsafe fn q6k_words(record: *const u8, h: usize, k: usize) -> [__m512i; 3] {
    let at = record.add(Q6K_VALUES + 3 * 64 * (8 * h + k));
    std::array::from_fn(|j| _mm512_loadu_si512(at.add(64 * j) as *const _))
}

/// Scale `s` (a signed byte) of each of the 16 rows, widened to 32 bits.
///
/// # Safety
/// The CPU must have AVX-512 F; `record` must be a whole Q6_K record.
#[inline(always)]
unsafe fn q6k_scale(record: *const u8, s: usize) -> __m512i {
    let word = _mm512_loadu_si512(record.add(Q6K_SCALES + 64 * (s / 4)) as *const _);
    _mm512_srai_epi32(_mm512_sllv_epi32(word, _mm512_set1_epi32(24 - 8 * (s % 4) as i32)), 24)
}

/// Scales `2k` and `2k + 1` of each row as the low and high 16 bits of its lane (as
/// `PanelQ6K::scale_pairs`).
///
/// # Safety
/// As `q6k_scale`.
#[inline(always)]
unsafe fn q6k_scale_pair(record: *const u8, k: usize) -> __m512i {
    let (first, second) = (q6k_scale(record, 2 * k), q6k_scale(record, 2 * k + 1));
    _mm512_or_si512(_mm512_and_si512(first, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(second, 16))
}

/// Lays out super-block `b` of weight rows `c0 .. c0 + 16` from their interleaved Q6_K record:
/// what `panel_q6k` gives from the file's layout, field by field.
///
/// # Safety
/// As `interleaved_q4k`, for Q6_K records.
#[inline(always)]
unsafe fn interleaved_q6k(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut PanelQ6K) {
    let record = w.add(c0 * row_bytes + b * record_bytes(WeightType::Q6K));
    let q = addr_of_mut!((*panel).q).cast::<__m512i>();
    for h in 0..2 {
        for k in 0..8 {
            // Value 128h + 32part + 4k + j: low bits in byte 64h + 32(part % 2) + 4k + j (the
            // high nibble for parts 2 and 3), high bits in byte 32h + 4k + j of the high bits.
            let [first, second, high] = q6k_words(record, h, k);
            let nibbles = [first, second, _mm512_srli_epi16(first, 4), _mm512_srli_epi16(second, 4)];
            for (part, nibbles) in nibbles.into_iter().enumerate() {
                q.add(32 * h + 8 * part + k).write(q6k_values(nibbles, high, part));
            }
        }
    }
    let (scale, pairs) = (addr_of_mut!((*panel).scale).cast::<__m512>(), addr_of_mut!((*panel).scale_pairs).cast::<__m512i>());
    for s in 0..16 {
        scale.add(s).write_unaligned(_mm512_cvtepi32_ps(q6k_scale(record, s)));
    }
    for k in 0..8 {
        pairs.add(k).write_unaligned(q6k_scale_pair(record, k));
    }
    addr_of_mut!((*panel).d).cast::<__m512>().write_unaligned(_mm512_cvtph_ps(_mm256_loadu_si256(record as *const __m256i)));
}

/// As `interleaved_rows_q4k`, for Q6_K: the same operations in the same order as
/// `panel_rows_q6k` on the panel `interleaved_q6k` lays out.
///
/// # Safety
/// As `interleaved_rows_q4k`, for a Q6_K record.
#[inline(always)]
unsafe fn interleaved_rows_q6k<const R: usize>(record: *const u8, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m512; R]) {
    let block: [usize; R] = std::array::from_fn(|r| (r0 + r) * a.blocks_per_row + b);
    let mut offsets = [_mm512_setzero_si512(); R];
    for k in 0..8 {
        let pair = q6k_scale_pair(record, k);
        for r in 0..R {
            offsets[r] = _mm512_dpwssd_epi32(offsets[r], pair, sums_word(a, block[r], k));
        }
    }
    let mut total: [__m512; R] = std::array::from_fn(|r| _mm512_mul_ps(_mm512_cvtepi32_ps(offsets[r]), _mm512_set1_ps(-32.0)));
    for h in 0..2 {
        // Sub-block 8h + 2part + k / 4 holds value group 32h + 8part + k.
        let mut sum = [[_mm512_setzero_si512(); R]; 8];
        for k in 0..8 {
            let [first, second, high] = q6k_words(record, h, k);
            let nibbles = [first, second, _mm512_srli_epi16(first, 4), _mm512_srli_epi16(second, 4)];
            for (part, nibbles) in nibbles.into_iter().enumerate() {
                let q = q6k_values(nibbles, high, part);
                let (s, g) = (2 * part + k / 4, 32 * h + 8 * part + k);
                for r in 0..R {
                    sum[s][r] = _mm512_dpbusd_epi32(sum[s][r], q, values_word(a, block[r], g));
                }
            }
        }
        for (s, sum) in sum.iter().enumerate() {
            let scale = _mm512_cvtepi32_ps(q6k_scale(record, 8 * h + s));
            for r in 0..R {
                total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), scale, total[r]);
            }
        }
    }
    let d = _mm512_cvtph_ps(_mm256_loadu_si256(record as *const __m256i));
    for r in 0..R {
        let da = _mm512_set1_ps(*a.scales.get_unchecked(block[r]));
        acc[r] = _mm512_fmadd_ps(total[r], _mm512_mul_ps(d, da), acc[r]);
    }
}

panel_tile!(interleaved_tile_q6k, PanelQ6K, interleaved_q6k, panel_rows_q6k);

/// A few activation rows (decode) × weight rows `c0 .. c0 + 16` of an interleaved matrix,
/// straight from the records, 4 rows or 1 at a time.
macro_rules! interleaved_few_rows {
    ($name:ident, $ty:expr, $rows:ident) => {
        /// # Safety
        /// As `interleaved_tile`, with fewer than `PANEL_MIN_ROWS` rows.
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
        unsafe fn $name(w: *const u8, row_bytes: usize, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
            let first = w.add(c0 * row_bytes);
            let m = rows.len();
            let mut acc = [_mm512_setzero_ps(); super::super::PANEL_MIN_ROWS];
            for b in 0..a.blocks_per_row {
                let record = first.add(b * record_bytes($ty));
                // One line a record ahead: measured faster than none, or than every line.
                _mm_prefetch::<_MM_HINT_T0>(record.wrapping_add(PREFETCH) as *const i8);
                let mut r = 0;
                while r < m {
                    if let Some((part, _)) = acc[r..m].split_first_chunk_mut::<4>() {
                        $rows::<4>(record, a, b, rows.start + r, part);
                        r += 4;
                    } else if let Some((part, _)) = acc[r..m].split_first_chunk_mut::<1>() {
                        $rows::<1>(record, a, b, rows.start + r, part);
                        r += 1;
                    }
                }
            }
            for (r, acc) in acc[..m].iter().enumerate() {
                _mm512_storeu_ps(out.add((rows.start + r) * n + c0), *acc);
            }
        }
    };
}
interleaved_few_rows!(interleaved_few_rows_q4k, WeightType::Q4K, interleaved_rows_q4k);
interleaved_few_rows!(interleaved_few_rows_q6k, WeightType::Q6K, interleaved_rows_q6k);

/// Activation rows `rows` (at most PANEL_ROWS) × weight rows `c0 .. c0 + 16` of an
/// interleaved matrix of `ty` (`interleaved`).
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA. `w` must hold the records of rows
/// `c0 .. c0 + 16` (c0 a multiple of 16) of `a.blocks_per_row` super-blocks; `rows` must lie
/// inside `a`'s rows; `out` must be valid for writes of cells `r * n + c` for those rows and
/// columns, and no other thread may touch them meanwhile.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
pub(in super::super) unsafe fn interleaved_tile(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    let row_bytes = a.blocks_per_row * ty.block_bytes();
    let few = rows.len() < super::super::PANEL_MIN_ROWS;
    match (ty, few) {
        (WeightType::Q4K, true) => interleaved_few_rows_q4k(w, row_bytes, a, rows, c0, out, n),
        (WeightType::Q4K, false) => interleaved_tile_q4k(w, row_bytes, a, rows, c0, out, n),
        (WeightType::Q6K, true) => interleaved_few_rows_q6k(w, row_bytes, a, rows, c0, out, n),
        (WeightType::Q6K, false) => interleaved_tile_q6k(w, row_bytes, a, rows, c0, out, n),
    }
}

