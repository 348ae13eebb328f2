//! The Q4_K/Q6_K kernel on aarch64: a weight row at a time, each super-block unpacked once into
//! 16 registers of 16 values (the 4- or 6-bit values fit signed bytes) and used for up to 8
//! activation rows. Per group of 16 values one `sdot` (or, on plain NEON, widening multiplies)
//! gives four exact partial sums, multiplied by the group's integer scale and added up; the
//! offsets go through the activations' sums of 16, as on x86. On i8mm, two weight rows'
//! blocks are unpacked side by side and `smmla` multiplies 8 values of two activation rows by
//! 8 of the two weight rows in one instruction (the 2 × 2 outputs in one register's lanes),
//! for up to 4 pairs of activation rows per unpacked pair; odd rows and columns and single
//! rows (decode, where half of each `smmla` would be wasted) take the dotprod code.

use super::{Q8KRows, WeightType, QK_K};
use crate::isa::Isa;
use crate::neon_dot::{sdot, sdot_neon, smmla};
use std::arch::aarch64::*;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols` on `isa` (one of the NEON paths).
///
/// # Safety
/// The CPU must support `isa`. `w` must be valid for reads of `n` weight rows of
/// `a.blocks_per_row` blocks of `ty`; `rows` must lie inside `a`'s rows and `cols` inside
/// `0..n`; `out` must be valid for writes of cells `r * n + c` for those rows and columns, and
/// no other thread may touch them meanwhile.
pub(super) unsafe fn tile(isa: Isa, ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    match isa {
        Isa::NeonI8mm => rows_tile_i8mm(ty, w, a, rows, cols, out, n),
        Isa::NeonDotprod => rows_tile_dotprod(ty, w, a, rows, cols, out, n),
        _ => rows_tile_neon(ty, w, a, rows, cols, out, n),
    }
}

/// One weight super-block unpacked: 16 groups of 16 values (unsigned, below 64), the integer
/// scale of each group, the f32 super-block scale, the f32 offset of each group.
struct Block {
    q: [int8x16_t; 16],
    scale: [i32; 16],
    d: f32,
    offsets: [float32x4_t; 4],
}

fn f16_at(b: &[u8], i: usize) -> f32 {
    half::f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// Q4_K: `d`, `dmin`, 12 bytes of 6-bit scales and mins (ggml's `get_scale_min_k4`), then 4
/// chunks of 32 bytes whose low nibbles are values 64p..64p+32 and high nibbles the next 32.
///
/// # Safety
/// The CPU must have NEON; `b` must be valid for reads of one Q4_K block (144 bytes).
#[inline(always)]
unsafe fn unpack_q4k(b: *const u8) -> Block {
    let block = std::slice::from_raw_parts(b, 144);
    let s = &block[4..16];
    let mut scale = [0i32; 16];
    let mut offset = [0f32; 16];
    let dmin = f16_at(block, 2);
    for j in 0..8 {
        let (sc, m) = if j < 4 {
            (s[j] & 63, s[j + 4] & 63)
        } else {
            ((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
        };
        for k in [2 * j, 2 * j + 1] {
            scale[k] = i32::from(sc);
            offset[k] = dmin * f32::from(m);
        }
    }
    let low = vdupq_n_u8(0x0f);
    let mut q = [vdupq_n_s8(0); 16];
    for p in 0..4 {
        for half in 0..2 {
            let raw = vld1q_u8(b.add(16 + 32 * p + 16 * half));
            q[4 * p + half] = vreinterpretq_s8_u8(vandq_u8(raw, low));
            q[4 * p + 2 + half] = vreinterpretq_s8_u8(vshrq_n_u8::<4>(raw));
        }
    }
    let offsets = [0, 4, 8, 12].map(|k| vld1q_f32(offset.as_ptr().add(k)));
    Block { q, scale, d: f16_at(block, 0), offsets }
}

/// Q6_K: value 128h + 32part + l has its low 4 bits in byte 64h + 32(part % 2) + l (low nibble
/// for parts 0 and 1) and its high 2 bits at bit 2·part of byte 128 + 32h + l; then 16 signed
/// scales and `d`. Values are stored plus 32.
///
/// # Safety
/// The CPU must have NEON; `b` must be valid for reads of one Q6_K block (210 bytes).
#[inline(always)]
unsafe fn unpack_q6k(b: *const u8) -> Block {
    let block = std::slice::from_raw_parts(b, 210);
    let (low, three) = (vdupq_n_u8(0x0f), vdupq_n_u8(0x03));
    let mut q = [vdupq_n_s8(0); 16];
    for h in 0..2 {
        for half in 0..2 {
            let ql0 = vld1q_u8(b.add(64 * h + 16 * half));
            let ql1 = vld1q_u8(b.add(64 * h + 32 + 16 * half));
            let qh = vld1q_u8(b.add(128 + 32 * h + 16 * half));
            let parts = [
                vorrq_u8(vandq_u8(ql0, low), vshlq_n_u8::<4>(vandq_u8(qh, three))),
                vorrq_u8(vandq_u8(ql1, low), vshlq_n_u8::<4>(vandq_u8(vshrq_n_u8::<2>(qh), three))),
                vorrq_u8(vshrq_n_u8::<4>(ql0), vshlq_n_u8::<4>(vandq_u8(vshrq_n_u8::<4>(qh), three))),
                vorrq_u8(vshrq_n_u8::<4>(ql1), vshlq_n_u8::<4>(vshrq_n_u8::<6>(qh))),
            ];
            for (part, values) in parts.into_iter().enumerate() {
                q[8 * h + 2 * part + half] = vreinterpretq_s8_u8(values);
            }
        }
    }
    let d = f16_at(block, 208);
    let mut scale = [0i32; 16];
    let mut offset = [0f32; 16];
    for k in 0..16 {
        let sc = block[192 + k] as i8;
        scale[k] = i32::from(sc);
        offset[k] = 32.0 * d * f32::from(sc);
    }
    let offsets = [0, 4, 8, 12].map(|k| vld1q_f32(offset.as_ptr().add(k)));
    Block { q, scale, d, offsets }
}

/// Weight row at `row` against activation rows `r0 .. r0 + R`, written to `out[r * n + c]`.
///
/// # Safety
/// The CPU must have NEON, and `sdot` where `DOT` (the caller enabling it); `row` must be
/// valid for reads of `a.blocks_per_row` blocks of `ty`, activation rows `r0 .. r0 + R` must
/// exist in `a`, and `out` must be valid for writes of cells `(r0 + r) * n + c`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn column<const DOT: bool, const R: usize>(ty: WeightType, row: *const u8, a: &Q8KRows, r0: usize, c: usize, out: *mut f32, n: usize) {
    let nb = a.blocks_per_row;
    let block_bytes = ty.block_bytes();
    let mut acc = [vdupq_n_f32(0.0); R];
    for b in 0..nb {
        let w = match ty {
            WeightType::Q4K => unpack_q4k(row.add(b * block_bytes)),
            WeightType::Q6K => unpack_q6k(row.add(b * block_bytes)),
        };
        for (r, acc) in acc.iter_mut().enumerate() {
            let i = (r0 + r) * nb + b;
            let x = a.values.as_ptr().add(i) as *const i8;
            let mut sum = vdupq_n_s32(0);
            for k in 0..16 {
                let xk = vld1q_s8(x.add(16 * k));
                let zero = vdupq_n_s32(0);
                let dot = if DOT { sdot(zero, w.q[k], xk) } else { sdot_neon(zero, w.q[k], xk) };
                sum = vmlaq_n_s32(sum, dot, w.scale[k]);
            }
            *acc = vfmaq_n_f32(*acc, vcvtq_f32_s32(sum), w.d * *a.scales.get_unchecked(i));
            let sums = a.sums.as_ptr().add(i) as *const f32;
            for (k, offsets) in w.offsets.iter().enumerate() {
                *acc = vfmsq_f32(*acc, *offsets, vld1q_f32(sums.add(4 * k)));
            }
        }
    }
    for (r, acc) in acc.iter().enumerate() {
        *out.add((r0 + r) * n + c) = vaddvq_f32(*acc);
    }
}

/// Activation rows `rows` × weight rows `cols`, a group of 8 rows per unpacked block where the
/// group is full, else row by row.
///
/// # Safety
/// As `tile`, with the CPU features of the path.
#[inline(always)]
unsafe fn rows_tile<const DOT: bool>(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    const R: usize = super::ROW_GROUP;
    let row_bytes = a.blocks_per_row * ty.block_bytes();
    for c in cols {
        let row = w.add(c * row_bytes);
        let mut r = rows.start;
        while r < rows.end {
            if r + R <= rows.end {
                column::<DOT, R>(ty, row, a, r, c, out, n);
                r += R;
            } else {
                column::<DOT, 1>(ty, row, a, r, c, out, n);
                r += 1;
            }
        }
    }
}

/// `rows_tile` on plain NEON.
///
/// # Safety
/// As `tile`.
#[target_feature(enable = "neon")]
unsafe fn rows_tile_neon(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    rows_tile::<false>(ty, w, a, rows, cols, out, n)
}

/// `rows_tile` with `sdot`.
///
/// # Safety
/// As `tile`; the CPU must have `dotprod`.
#[target_feature(enable = "neon,dotprod")]
unsafe fn rows_tile_dotprod(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    rows_tile::<true>(ty, w, a, rows, cols, out, n)
}

/// Weight rows at `row0` and `row1` (columns `c0`, `c0 + 1`) against `P` pairs of activation
/// rows from `r0`, with `smmla`; written to `out[r * n + c]`.
///
/// # Safety
/// The CPU must have `i8mm` and `dotprod` (the caller enabling them); both weight rows must be
/// valid for reads of `a.blocks_per_row` blocks of `ty`, activation rows `r0 .. r0 + 2P` must
/// exist in `a`, and `out` must be valid for writes of their cells in columns `c0, c0 + 1`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn column_pair<const P: usize>(ty: WeightType, row0: *const u8, row1: *const u8, a: &Q8KRows, r0: usize, c0: usize, out: *mut f32, n: usize) {
    let nb = a.blocks_per_row;
    let block_bytes = ty.block_bytes();
    let unpack = |at: *const u8| match ty {
        WeightType::Q4K => unpack_q4k(at),
        WeightType::Q6K => unpack_q6k(at),
    };
    let mut acc = [vdupq_n_f32(0.0); P];
    for b in 0..nb {
        let (w0, w1) = (unpack(row0.add(b * block_bytes)), unpack(row1.add(b * block_bytes)));
        // Per group of 16: its first 8 values of both weight rows, then its last 8, and the
        // two rows' scales in the order of `smmla`'s output lanes (r0c0, r0c1, r1c0, r1c1).
        let mut low = [vdupq_n_s8(0); 16];
        let mut high = [vdupq_n_s8(0); 16];
        let mut scales = [vdupq_n_s32(0); 16];
        for k in 0..16 {
            let (p, q) = (vreinterpretq_s64_s8(w0.q[k]), vreinterpretq_s64_s8(w1.q[k]));
            low[k] = vreinterpretq_s8_s64(vzip1q_s64(p, q));
            high[k] = vreinterpretq_s8_s64(vzip2q_s64(p, q));
            let pair = [w0.scale[k], w1.scale[k], w0.scale[k], w1.scale[k]];
            scales[k] = vld1q_s32(pair.as_ptr());
        }
        for (pair, acc) in acc.iter_mut().enumerate() {
            let (i0, i1) = ((r0 + 2 * pair) * nb + b, (r0 + 2 * pair + 1) * nb + b);
            let (x0, x1) = (a.values.as_ptr().add(i0) as *const i8, a.values.as_ptr().add(i1) as *const i8);
            let mut sum = vdupq_n_s32(0);
            for k in 0..16 {
                let (p, q) = (vreinterpretq_s64_s8(vld1q_s8(x0.add(16 * k))), vreinterpretq_s64_s8(vld1q_s8(x1.add(16 * k))));
                let (x_low, x_high) = (vreinterpretq_s8_s64(vzip1q_s64(p, q)), vreinterpretq_s8_s64(vzip2q_s64(p, q)));
                let dot = smmla(smmla(vdupq_n_s32(0), x_low, low[k]), x_high, high[k]);
                sum = vmlaq_s32(sum, dot, scales[k]);
            }
            let (s0, s1) = (*a.scales.get_unchecked(i0), *a.scales.get_unchecked(i1));
            let d = [w0.d * s0, w1.d * s0, w0.d * s1, w1.d * s1];
            *acc = vfmaq_f32(*acc, vcvtq_f32_s32(sum), vld1q_f32(d.as_ptr()));
            let mut offsets = [0f32; 4];
            for (lane, (w, i)) in [(&w0, i0), (&w1, i0), (&w0, i1), (&w1, i1)].into_iter().enumerate() {
                let sums = a.sums.as_ptr().add(i) as *const f32;
                let mut v = vdupq_n_f32(0.0);
                for (j, offset) in w.offsets.iter().enumerate() {
                    v = vfmaq_f32(v, *offset, vld1q_f32(sums.add(4 * j)));
                }
                offsets[lane] = vaddvq_f32(v);
            }
            *acc = vsubq_f32(*acc, vld1q_f32(offsets.as_ptr()));
        }
    }
    for (pair, acc) in acc.iter().enumerate() {
        let mut lanes = [0f32; 4];
        vst1q_f32(lanes.as_mut_ptr(), *acc);
        let r = r0 + 2 * pair;
        for (lane, value) in lanes.into_iter().enumerate() {
            *out.add((r + lane / 2) * n + c0 + lane % 2) = value;
        }
    }
}

/// Pairs of weight rows × pairs of activation rows (4 pairs per unpacked block where there
/// are that many) with `smmla`; an odd column, an odd row and single rows with `sdot`.
///
/// # Safety
/// As `tile`; the CPU must have `dotprod` and `i8mm`.
#[target_feature(enable = "neon,dotprod,i8mm")]
unsafe fn rows_tile_i8mm(ty: WeightType, w: *const u8, a: &Q8KRows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    if rows.len() < 2 {
        return rows_tile::<true>(ty, w, a, rows, cols, out, n);
    }
    const P: usize = super::ROW_GROUP / 2;
    let row_bytes = a.blocks_per_row * ty.block_bytes();
    let paired = rows.start..rows.start + rows.len() / 2 * 2;
    let mut c = cols.start;
    while c + 2 <= cols.end {
        let (row0, row1) = (w.add(c * row_bytes), w.add((c + 1) * row_bytes));
        let mut r = paired.start;
        while r < paired.end {
            if r + 2 * P <= paired.end {
                column_pair::<P>(ty, row0, row1, a, r, c, out, n);
                r += 2 * P;
            } else {
                column_pair::<1>(ty, row0, row1, a, r, c, out, n);
                r += 2;
            }
        }
        c += 2;
    }
    // The odd column for every row, the odd row for the paired columns.
    rows_tile::<true>(ty, w, a, rows.clone(), c..cols.end, out, n);
    rows_tile::<true>(ty, w, a, paired.end..rows.end, cols.start..c, out, n);
}

const _: () = assert!(QK_K == 256);
