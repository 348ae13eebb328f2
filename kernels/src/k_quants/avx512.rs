//! The Q4_K/Q6_K kernel on AVX-512 VNNI: one weight row at a time for decode, 16-row panels for
//! prompts (see the parent module); `interleaved` runs both on interleaved records.

use super::{Q8KRows, WeightType, QK_K};
use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr::addr_of_mut;

/// One weight super-block unpacked: 4 × 64 unsigned values in activation order, per 32-bit
/// lane of each the integer scale of its sub-block (low 16 bits; high 16 bits zero, as
/// `vpdpwssd` multiplies both halves), the f32 super-block scale, and the offsets per 16
/// values in f32 (multiplied by the activations' scaled sums and subtracted).
struct Block {
    q: [__m512i; 4],
    scale: [__m512i; 4],
    d: f32,
    offsets: __m512,
}

/// The little-endian f16 at `p`, widened.
///
/// # Safety
/// The CPU must have F16C; `p` must be valid for reads of 2 bytes.
#[inline(always)]
unsafe fn f16_at(p: *const u8) -> f32 {
    let bits = u16::from_le_bytes([*p, *p.add(1)]);
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(bits))))
}

/// A lane table as a vector.
///
/// # Safety
/// The CPU must have AVX-512 F.
#[inline(always)]
unsafe fn lanes(idx: &[i32; 16]) -> __m512i {
    _mm512_loadu_si512(idx.as_ptr() as *const _)
}

/// Lane tables for `vpermd`: entry `k` of the result gives lane `i` the source lane
/// `step * k + i / width` (each source lane repeated `width` times).
const fn repeated_lanes(step: usize, width: usize) -> [[i32; 16]; 4] {
    let mut t = [[0; 16]; 4];
    let mut k = 0;
    while k < 4 {
        let mut i = 0;
        while i < 16 {
            t[k][i] = (step * k + i / width) as i32;
            i += 1;
        }
        k += 1;
    }
    t
}

/// Q4_K: values `d * scale * q - dmin * min` per sub-block of 32.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `b` must be valid for reads of one Q4_K block (144 bytes).
#[inline(always)]
unsafe fn unpack_q4k(b: *const u8) -> Block {
    let packed = q4k_scales_and_mins(b);
    // Built in a register: a 16-byte load of the four words just stored would wait for
    // them (a load spanning several stores is not forwarded), costing most of a block's time.
    let packed = _mm_set_epi32(packed[3] as i32, packed[2] as i32, packed[1] as i32, packed[0] as i32);
    // Lanes 0..8: the eight sub-block scales; 8..16: their mins.
    let sm = _mm512_cvtepu8_epi32(packed);
    // Chunk p holds sub-blocks 2p and 2p + 1, 8 lanes each.
    static SCALE_OF: [[i32; 16]; 4] = repeated_lanes(2, 8);
    static MIN_OF: [i32; 16] = [8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15];
    let low = _mm512_set1_epi8(0x0f);
    let mut q = [_mm512_setzero_si512(); 4];
    let mut scale = [_mm512_setzero_si512(); 4];
    for p in 0..4 {
        // Low nibbles are values 64p..64p+32, high nibbles the next 32.
        let raw = _mm512_broadcast_i64x4(_mm256_loadu_si256(b.add(16 + 32 * p) as *const __m256i));
        q[p] = _mm512_and_si512(_mm512_mask_srli_epi16(raw, 0xffff_0000, raw, 4), low);
        scale[p] = _mm512_permutexvar_epi32(lanes(&SCALE_OF[p]), sm);
    }
    let mins = _mm512_cvtepi32_ps(_mm512_permutexvar_epi32(lanes(&MIN_OF), sm));
    Block { q, scale, d: f16_at(b), offsets: _mm512_mul_ps(mins, _mm512_set1_ps(f16_at(b.add(2)))) }
}

/// Q6_K: values are `d * scale[i / 16] * (q - 32)` with q from 4 low and 2 high bits.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `b` must be valid for reads of one Q6_K block (210 bytes).
#[inline(always)]
unsafe fn unpack_q6k(b: *const u8) -> Block {
    // Chunk k holds scale groups 4k .. 4k + 4, 4 lanes each.
    static SCALE_OF: [[i32; 16]; 4] = repeated_lanes(4, 4);
    let (low, two) = (_mm512_set1_epi8(0x0f), _mm512_set1_epi8(0x30));
    let mut q = [_mm512_setzero_si512(); 4];
    for h in 0..2 {
        // Low bits of values 128h + 0..64; high bits of 128h + 0..32, shifted by two for
        // the next 32.
        let ql = _mm512_loadu_si512(b.add(64 * h) as *const _);
        let qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(b.add(128 + 32 * h) as *const __m256i));
        let qh = _mm512_mask_srli_epi16(qh, 0xffff_0000, qh, 2);
        q[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, low), _mm512_and_si512(_mm512_slli_epi16(qh, 4), two));
        q[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low), _mm512_and_si512(qh, two));
    }
    let bytes = _mm_loadu_si128(b.add(192) as *const __m128i);
    let s = _mm512_cvtepu16_epi32(_mm256_cvtepi8_epi16(bytes));
    let mut scale = [_mm512_setzero_si512(); 4];
    for k in 0..4 {
        scale[k] = _mm512_permutexvar_epi32(lanes(&SCALE_OF[k]), s);
    }
    let d = f16_at(b.add(208));
    let offsets = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), _mm512_set1_ps(32.0 * d));
    Block { q, scale, d, offsets }
}

const PREFETCH: usize = 2048;

/// Weight row `c` against activation rows `r0 .. r0 + R`.
macro_rules! column {
    ($name:ident, $unpack:ident) => {
        ///
        /// # Safety
        /// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `row` must be valid for reads of `a.blocks_per_row` blocks of
        /// `block_bytes` each, activation rows `r0 .. r0 + R` must exist in `a`, and `out` must be
        /// valid for writes of cells `(r0 + r) * n + c`.
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
        unsafe fn $name<const R: usize>(row: *const u8, block_bytes: usize, a: &Q8KRows, r0: usize, c: usize, out: *mut f32, n: usize) {
            let nb = a.blocks_per_row;
            let mut acc = [_mm512_setzero_ps(); R];
            for b in 0..nb {
                let at = row.add(b * block_bytes);
                for line in (0..block_bytes).step_by(64) {
                    _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(PREFETCH + line) as *const i8);
                }
                let w = $unpack(at);
                let dw = _mm512_set1_ps(w.d);
                for r in 0..R {
                    let i = (r0 + r) * nb + b;
                    let x = a.values.as_ptr().add(i) as *const u8;
                    let mut sum = _mm512_setzero_si512();
                    for p in 0..4 {
                        let xp = _mm512_loadu_si512(x.add(64 * p) as *const _);
                        let dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w.q[p], xp);
                        sum = _mm512_dpwssd_epi32(sum, dot, w.scale[p]);
                    }
                    let d = _mm512_mul_ps(dw, _mm512_set1_ps(*a.scales.get_unchecked(i)));
                    acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, acc[r]);
                    let sums = _mm512_loadu_ps(a.sums.as_ptr().add(i) as *const f32);
                    acc[r] = _mm512_fnmadd_ps(w.offsets, sums, acc[r]);
                }
            }
            for r in 0..R {
                *out.add((r0 + r) * n + c) = _mm512_reduce_add_ps(acc[r]);
            }
        }
    };
}
column!(column_q4k, unpack_q4k);
column!(column_q6k, unpack_q6k);

/// Activation rows `rows` × weight rows `cols`, a whole row group per unpacked block where
/// the group is full, else row by row.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA. `w` must be valid for reads of `n` weight rows of `a.blocks_per_row` blocks of `ty`;
/// `rows` must lie inside `a`'s rows and `cols` inside `0..n`; `out` must be valid for writes
/// of cells `r * n + c` for those rows and columns, and no other thread may touch them meanwhile.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
pub(super) unsafe fn tile(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    const R: usize = super::ROW_GROUP;
    let block_bytes = ty.block_bytes();
    let row_bytes = a.blocks_per_row * block_bytes;
    for c in cols {
        let row = w.add(c * row_bytes);
        let mut r = rows.start;
        while r < rows.end {
            let full = r + R <= rows.end;
            match (ty, full) {
                (WeightType::Q4K, true) => column_q4k::<R>(row, block_bytes, a, r, c, out, n),
                (WeightType::Q4K, false) => column_q4k::<1>(row, block_bytes, a, r, c, out, n),
                (WeightType::Q6K, true) => column_q6k::<R>(row, block_bytes, a, r, c, out, n),
                (WeightType::Q6K, false) => column_q6k::<1>(row, block_bytes, a, r, c, out, n),
            }
            r += if full { R } else { 1 };
        }
    }
}


use super::avx2::row_words;
use super::PANEL_ROWS;

/// Weight rows per panel: one 32-bit lane each in a 512-bit register.
const PANEL: usize = 16;

/// The 16-byte [scales ‖ mins] of a Q4_K block, as ggml's `get_scale_min_k4` unpacks them.
///
/// # Safety
/// `b` must be valid for reads of a Q4_K block's first 16 bytes.
#[inline(always)]
unsafe fn q4k_scales_and_mins(b: *const u8) -> [u32; 4] {
    const M1: u32 = 0x3f3f_3f3f;
    const M2: u32 = 0x0f0f_0f0f;
    const M3: u32 = 0x0303_0303;
    let word = |i: usize| u32::from_le_bytes([*b.add(4 + i), *b.add(5 + i), *b.add(6 + i), *b.add(7 + i)]);
    let (u0, u1, u2) = (word(0), word(4), word(8));
    [u0 & M1, (u2 & M2) | (((u0 >> 6) & M3) << 4), u1 & M1, ((u2 >> 4) & M2) | (((u1 >> 6) & M3) << 4)]
}

/// One Q4_K super-block of 16 weight rows laid out for the panel product, row `i` in lane `i`
/// of each vector: `q[g]` holds values `4g .. 4g+4`; `scale[s]` sub-block `s`'s scale (0..64)
/// as f32 (its products with a sub-block's integer sum, at most 32 · 15 · 128 · 63 < 2^22 in
/// magnitude, are exact); `min[s]` sub-block `s`'s min in
/// both 16-bit halves, which `vpdpwssd` multiplies by the activations' two integer sums of 16
/// of that sub-block; `d` and `dmin` the super-block's scales.
struct PanelQ4K {
    q: [__m512i; 64],
    scale: [[f32; PANEL]; 8],
    min: [[i32; PANEL]; 8],
    d: [f32; PANEL],
    dmin: [f32; PANEL],
}

/// One Q6_K super-block of 16 weight rows laid out for the panel product, row `i` in lane `i`:
/// `q[g]` holds values `4g .. 4g+4` (0..64, the -32 left to the offsets); `scale[s]` sub-block
/// `s`'s scale as f32 (its products with a sub-block's integer sum, below 16 · 63 · 128 · 128
/// = 2^24 - 2^18, are exact); `scale_pairs[k]` scales `2k` and `2k + 1` as the low and high 16
/// bits, which `vpdpwssd` multiplies by the activations' integer sums `2k` and `2k + 1`; `d`
/// the super-block's scale.
struct PanelQ6K {
    q: [__m512i; 64],
    scale: [[f32; PANEL]; 16],
    scale_pairs: [[i32; PANEL]; 8],
    d: [f32; PANEL],
}

/// Word `k` of the 32 bytes at `first + i * row_bytes` for each of the panel's 16 weight rows
/// `i`, one row per lane: the AVX2 path's loads and transposes ([`row_words`]) for rows 0..8
/// and 8..16, joined. They replace `vpgatherdd`, slow on AMD Zen 4 (see `row_words`).
///
/// # Safety
/// The CPU must have AVX-512 F; each `first + i * row_bytes` (i < 16) must be valid for reads
/// of 32 bytes.
#[inline(always)]
unsafe fn row_words_16(first: *const u8, row_bytes: usize) -> [__m512i; 8] {
    let (low, high) = (row_words(first, row_bytes), row_words(first.add(8 * row_bytes), row_bytes));
    std::array::from_fn(|k| _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low[k]), high[k]))
}

/// Lays out a Q4_K panel, writing every field of `panel` (which may be uninitialised: the
/// panels are laid out once per super-block, and zeroing them first cost 3% of a prompt).
/// Word `t` of the 128 value bytes holds, in its low nibbles, values 64p + 4(t%8) .. +4
/// (p = t / 8) and in its high nibbles the same 32 places later.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `first` must point at a Q4_K block of
/// which 15 more follow, `row_bytes` apart; `panel` must be valid for writes.
#[inline(always)]
unsafe fn panel_q4k(first: *const u8, row_bytes: usize, panel: *mut PanelQ4K) {
    let low = _mm512_set1_epi8(0x0f);
    let q = addr_of_mut!((*panel).q).cast::<__m512i>();
    for p in 0..4 {
        for (k, word) in row_words_16(first.add(16 + 32 * p), row_bytes).into_iter().enumerate() {
            let g = 16 * p + k;
            q.add(g).write(_mm512_and_si512(word, low));
            q.add(g + 8).write(_mm512_and_si512(_mm512_srli_epi16(word, 4), low));
        }
    }
    let (scale, min) = (addr_of_mut!((*panel).scale).cast::<f32>(), addr_of_mut!((*panel).min).cast::<i32>());
    let (d, dmin) = (addr_of_mut!((*panel).d).cast::<f32>(), addr_of_mut!((*panel).dmin).cast::<f32>());
    for i in 0..PANEL {
        let b = first.add(i * row_bytes);
        let bytes: [u8; 16] = std::mem::transmute(q4k_scales_and_mins(b));
        d.add(i).write(f16_at(b));
        dmin.add(i).write(f16_at(b.add(2)));
        for s in 0..8 {
            scale.add(s * PANEL + i).write(f32::from(bytes[s]));
            min.add(s * PANEL + i).write(i32::from(bytes[8 + s]) * 0x1_0001);
        }
    }
}

/// Lays out a Q6_K panel, writing every field of `panel` (as `panel_q4k`). Value
/// 128h + 32part + l has its low 4 bits in byte 64h + 32(part % 2) + l (low nibble for parts 0
/// and 1) and its high 2 bits at bit 2·part of byte 128 + 32h + l.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA; `first` must point at a Q6_K block of
/// which 15 more follow, `row_bytes` apart; `panel` must be valid for writes.
#[inline(always)]
unsafe fn panel_q6k(first: *const u8, row_bytes: usize, panel: *mut PanelQ6K) {
    let (low, three) = (_mm512_set1_epi8(0x0f), _mm512_set1_epi8(0x03));
    let q = addr_of_mut!((*panel).q).cast::<__m512i>();
    for h in 0..2 {
        let highs = row_words_16(first.add(128 + 32 * h), row_bytes);
        let lows = [row_words_16(first.add(64 * h), row_bytes), row_words_16(first.add(64 * h + 32), row_bytes)];
        for (k, high) in highs.into_iter().enumerate() {
            let l = 4 * k;
            for (half, lows) in lows.iter().enumerate() {
                let lo = lows[k];
                for (part, bits) in [(half, _mm512_and_si512(lo, low)), (half + 2, _mm512_and_si512(_mm512_srli_epi16(lo, 4), low))] {
                    let h2 = _mm512_and_si512(_mm512_srlv_epi16(high, _mm512_set1_epi16(2 * part as i16)), three);
                    q.add((128 * h + 32 * part + l) / 4).write(_mm512_or_si512(bits, _mm512_slli_epi16(h2, 4)));
                }
            }
        }
    }
    let (scale, pairs) = (addr_of_mut!((*panel).scale).cast::<f32>(), addr_of_mut!((*panel).scale_pairs).cast::<i32>());
    let d = addr_of_mut!((*panel).d).cast::<f32>();
    for i in 0..PANEL {
        let b = first.add(i * row_bytes);
        d.add(i).write(f16_at(b.add(208)));
        let sc = |s: usize| *b.add(192 + s) as i8;
        for s in 0..16 {
            scale.add(s * PANEL + i).write(f32::from(sc(s)));
        }
        for k in 0..8 {
            let pair = u32::from(sc(2 * k) as i16 as u16) | (u32::from(sc(2 * k + 1) as i16 as u16) << 16);
            pairs.add(k * PANEL + i).write(pair as i32);
        }
    }
}

/// The 4 activation values of group `g` of block `i` (one 32-bit word) in every lane.
///
/// # Safety
/// The CPU must have AVX-512 F; block `i` must exist in `a` and `g < 64`.
#[inline(always)]
unsafe fn values_word(a: &Q8KRows, i: usize, g: usize) -> __m512i {
    // Blocks of bytes carry no 4-byte alignment.
    _mm512_set1_epi32((a.values.as_ptr().add(i) as *const i32).add(g).read_unaligned())
}

/// The integer sums `2k` and `2k + 1` of block `i` (one 32-bit word of two 16-bit halves) in
/// every lane.
///
/// # Safety
/// The CPU must have AVX-512 F; block `i` must exist in `a` and `k < 8`.
#[inline(always)]
unsafe fn sums_word(a: &Q8KRows, i: usize, k: usize) -> __m512i {
    _mm512_set1_epi32((a.int_sums.as_ptr().add(i) as *const i32).add(k).read_unaligned())
}

/// `acc[r]` += the Q4_K panel · activation rows `r0 + r`, for `R` rows at a time: per row each
/// sub-block's exact integer sum times its f32 scale, and the mins as one exact integer (at
/// most 8 · 63 · 4,096), each scaled by the super-block's scales once. (Summing the scaled
/// sub-blocks in integers too, `vpdpwssd` over half sub-blocks, measured 5–9% slower.)
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI and FMA; activation rows `r0 .. r0 + R` and their
/// block `b` must exist in `a`.
#[inline(always)]
unsafe fn panel_rows_q4k<const R: usize>(panel: &PanelQ4K, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m512; R]) {
    let block: [usize; R] = std::array::from_fn(|r| (r0 + r) * a.blocks_per_row + b);
    let mut total = [_mm512_setzero_ps(); R];
    for s in 0..8 {
        let scale = _mm512_loadu_ps(panel.scale[s].as_ptr());
        let mut sum = [_mm512_setzero_si512(); R];
        for g in 8 * s..8 * s + 8 {
            for r in 0..R {
                sum[r] = _mm512_dpbusd_epi32(sum[r], panel.q[g], values_word(a, block[r], g));
            }
        }
        for r in 0..R {
            total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), scale, total[r]);
        }
    }
    let mut mins = [_mm512_setzero_si512(); R];
    for s in 0..8 {
        let min = _mm512_loadu_si512(panel.min[s].as_ptr() as *const _);
        for r in 0..R {
            mins[r] = _mm512_dpwssd_epi32(mins[r], min, sums_word(a, block[r], s));
        }
    }
    let (d, dmin) = (_mm512_loadu_ps(panel.d.as_ptr()), _mm512_loadu_ps(panel.dmin.as_ptr()));
    for r in 0..R {
        let da = _mm512_set1_ps(*a.scales.get_unchecked(block[r]));
        acc[r] = _mm512_fmadd_ps(total[r], _mm512_mul_ps(d, da), acc[r]);
        acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins[r]), _mm512_mul_ps(dmin, da), acc[r]);
    }
}

/// `acc[r]` += the Q6_K panel · activation rows `r0 + r`, for `R` rows at a time: per row the
/// offsets' integer Σ_s scale_s · Σ x (times -32), then each sub-block's exact integer sum
/// times its f32 scale, scaled by the super-block's scales once.
///
/// # Safety
/// As `panel_rows_q4k`.
#[inline(always)]
unsafe fn panel_rows_q6k<const R: usize>(panel: &PanelQ6K, a: &Q8KRows, b: usize, r0: usize, acc: &mut [__m512; R]) {
    let block: [usize; R] = std::array::from_fn(|r| (r0 + r) * a.blocks_per_row + b);
    let mut offsets = [_mm512_setzero_si512(); R];
    for k in 0..8 {
        let pair = _mm512_loadu_si512(panel.scale_pairs[k].as_ptr() as *const _);
        for r in 0..R {
            offsets[r] = _mm512_dpwssd_epi32(offsets[r], pair, sums_word(a, block[r], k));
        }
    }
    // Exact: at most 16 · 128 · 2,048 · 32 = 2^27, a power of two times a 22-bit integer.
    let mut total: [__m512; R] = std::array::from_fn(|r| _mm512_mul_ps(_mm512_cvtepi32_ps(offsets[r]), _mm512_set1_ps(-32.0)));
    for s in 0..16 {
        let scale = _mm512_loadu_ps(panel.scale[s].as_ptr());
        let mut sum = [_mm512_setzero_si512(); R];
        for g in 4 * s..4 * s + 4 {
            for r in 0..R {
                sum[r] = _mm512_dpbusd_epi32(sum[r], panel.q[g], values_word(a, block[r], g));
            }
        }
        for r in 0..R {
            total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r]), scale, total[r]);
        }
    }
    let d = _mm512_loadu_ps(panel.d.as_ptr());
    for r in 0..R {
        let da = _mm512_set1_ps(*a.scales.get_unchecked(block[r]));
        acc[r] = _mm512_fmadd_ps(total[r], _mm512_mul_ps(d, da), acc[r]);
    }
}

macro_rules! panel_tile {
    ($name:ident, $panel:ident, $lay:ident, $rows:ident) => {
        /// Weight rows `c0 .. c0 + 16` against activation rows `rows` (at most PANEL_ROWS).
        ///
        /// # Safety
        /// As `panel_tile`.
        #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
        unsafe fn $name(w: *const u8, row_bytes: usize, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
            // Rows per pass: each row's sums are chains of dependent `vpdpbusd`s (latency 4-5
            // cycles, two issued per cycle), so it takes 8 rows' chains side by side to keep
            // both ports busy.
            const R: usize = 8;
            let nb = a.blocks_per_row;
            let m = rows.len();
            // Neither the accumulators of rows past `m` nor the panel before its first layout
            // are read, so neither is zeroed (a `memset` of 9 KiB per work item).
            let mut acc = [MaybeUninit::<__m512>::uninit(); PANEL_ROWS];
            for acc in &mut acc[..m] {
                acc.write(_mm512_setzero_ps());
            }
            let mut panel = MaybeUninit::<$panel>::uninit();
            for b in 0..nb {
                $lay(w, row_bytes, c0, b, panel.as_mut_ptr());
                // SAFETY: the layout above wrote every field.
                let panel = panel.assume_init_ref();
                let mut r = 0;
                while r < m {
                    r += if r + R <= m {
                        rows_into::<R>(&mut acc[r..r + R], |part| $rows::<R>(panel, a, b, rows.start + r, part))
                    } else if r + 4 <= m {
                        rows_into::<4>(&mut acc[r..r + 4], |part| $rows::<4>(panel, a, b, rows.start + r, part))
                    } else {
                        rows_into::<1>(&mut acc[r..r + 1], |part| $rows::<1>(panel, a, b, rows.start + r, part))
                    };
                }
            }
            for (r, acc) in acc[..m].iter().enumerate() {
                _mm512_storeu_ps(out.add((rows.start + r) * n + c0), acc.assume_init());
            }
        }
    };
}
/// Runs `pass` on the accumulators `acc` (`R` of them, initialised) and stores its results
/// back; returns `R`, the rows done.
///
/// # Safety
/// Every element of `acc` must be initialised.
#[inline(always)]
unsafe fn rows_into<const R: usize>(acc: &mut [MaybeUninit<__m512>], pass: impl FnOnce(&mut [__m512; R])) -> usize {
    let mut part: [__m512; R] = std::array::from_fn(|k| acc[k].assume_init());
    pass(&mut part);
    for (acc, v) in acc.iter_mut().zip(part) {
        acc.write(v);
    }
    R
}
/// Lays out super-block `b` of weight rows `c0 .. c0 + 16` from the file's layout (rows
/// `row_bytes` apart).
///
/// # Safety
/// As `panel_q4k`, for the block at `w + c0 · row_bytes + b · 144`.
#[inline(always)]
unsafe fn file_q4k(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut PanelQ4K) {
    panel_q4k(w.add(c0 * row_bytes + b * WeightType::Q4K.block_bytes()), row_bytes, panel)
}

/// As `file_q4k`, for Q6_K.
///
/// # Safety
/// As `panel_q6k`, for the block at `w + c0 · row_bytes + b · 210`.
#[inline(always)]
unsafe fn file_q6k(w: *const u8, row_bytes: usize, c0: usize, b: usize, panel: *mut PanelQ6K) {
    panel_q6k(w.add(c0 * row_bytes + b * WeightType::Q6K.block_bytes()), row_bytes, panel)
}

panel_tile!(panel_tile_q4k, PanelQ4K, file_q4k, panel_rows_q4k);
panel_tile!(panel_tile_q6k, PanelQ6K, file_q6k, panel_rows_q6k);

// After the macro it uses.
mod interleaved;
pub(super) use interleaved::interleaved_tile;

/// Activation rows `rows` (at most PANEL_ROWS) × weight rows `c0 .. c0 + 16`.
///
/// # Safety
/// The CPU must have AVX-512 F/BW/VL/VNNI, F16C and FMA. `w` must be valid for reads of `n` weight rows of `a.blocks_per_row` blocks of `ty`,
/// with `c0 + 16 <= n`; `rows` must lie inside `a`'s rows; `out` must be valid for writes of
/// cells `r * n + c` for those rows and columns, and no other thread may touch them meanwhile.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")]
pub(super) unsafe fn panel_tile(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, c0: usize, out: *mut f32, n: usize) {
    match ty {
        WeightType::Q4K => panel_tile_q4k(w, a.blocks_per_row * ty.block_bytes(), a, rows, c0, out, n),
        WeightType::Q6K => panel_tile_q6k(w, a.blocks_per_row * ty.block_bytes(), a, rows, c0, out, n),
    }
}

const _: () = assert!(QK_K == 256);
