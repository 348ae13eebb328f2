//! The Q8_0 kernel on aarch64: tiles of activation rows × weight rows, per block an exact
//! integer dot product (`sdot`, or widening multiplies on plain NEON) scaled and added into
//! four f32 lanes; on i8mm, 2 × 2 tiles from `smmla`, which multiplies two rows of 8 bytes by
//! two others in one instruction.

use super::{Q8Rows, BLOCK};
use crate::isa::Isa;
use crate::neon_dot::{sdot, sdot_neon, smmla};
use std::arch::aarch64::*;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols` on `isa` (one of the NEON paths).
///
/// # Safety
/// The CPU must support `isa`. `w` and `a` must hold whole rows of equal width; `rows` must
/// lie inside `a`'s rows and `cols` inside `w`'s; `out` must be valid for writes of
/// `a.rows * n` cells with `n = w.rows`, and no other thread may touch the cells of `rows` ×
/// `cols` meanwhile.
pub(super) unsafe fn tile(isa: Isa, w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    match isa {
        Isa::NeonI8mm => tile_i8mm(w, a, rows, cols, out, n),
        Isa::NeonDotprod => tile_dotprod(w, a, rows, cols, out, n),
        _ => tile_neon(w, a, rows, cols, out, n),
    }
}

/// `R` activation rows × `C` weight rows from (`r0`, `c0`).
///
/// # Safety
/// The CPU must have NEON, and `sdot` where `DOT` (the caller enabling it); the rows named
/// must exist and `out` be valid for writes of their cells `r * n + c`.
#[inline(always)]
unsafe fn micro<const DOT: bool, const R: usize, const C: usize>(w: &Q8Rows, a: &Q8Rows, r0: usize, c0: usize, out: *mut f32, n: usize) {
    let nb = w.blocks_per_row;
    let mut acc = [[vdupq_n_f32(0.0); C]; R];
    for b in 0..nb {
        let mut wv = [[vdupq_n_s8(0); 2]; C];
        let mut ws = [0f32; C];
        for c in 0..C {
            let i = (c0 + c) * nb + b;
            let p = w.values.as_ptr().add(i) as *const i8;
            wv[c] = [vld1q_s8(p), vld1q_s8(p.add(16))];
            ws[c] = *w.scales.get_unchecked(i);
        }
        for r in 0..R {
            let i = (r0 + r) * nb + b;
            let p = a.values.as_ptr().add(i) as *const i8;
            let x = [vld1q_s8(p), vld1q_s8(p.add(16))];
            let scale = *a.scales.get_unchecked(i);
            for c in 0..C {
                let zero = vdupq_n_s32(0);
                let sum = if DOT {
                    sdot(sdot(zero, x[0], wv[c][0]), x[1], wv[c][1])
                } else {
                    sdot_neon(sdot_neon(zero, x[0], wv[c][0]), x[1], wv[c][1])
                };
                acc[r][c] = vfmaq_n_f32(acc[r][c], vcvtq_f32_s32(sum), ws[c] * scale);
            }
        }
    }
    for r in 0..R {
        for c in 0..C {
            *out.add((r0 + r) * n + c0 + c) = vaddvq_f32(acc[r][c]);
        }
    }
}

/// Tiles of 4 × 4 and their remainders.
///
/// # Safety
/// As `micro`, for every row of `rows` and `cols`.
#[inline(always)]
unsafe fn tiles<const DOT: bool>(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    const R: usize = 4;
    const C: usize = 4;
    let mut r = rows.start;
    while r < rows.end {
        let full_rows = r + R <= rows.end;
        let mut c = cols.start;
        while c < cols.end {
            match (full_rows, c + C <= cols.end) {
                (true, true) => micro::<DOT, R, C>(w, a, r, c, out, n),
                (true, false) => micro::<DOT, R, 1>(w, a, r, c, out, n),
                (false, _) => micro::<DOT, 1, 1>(w, a, r, c, out, n),
            }
            c += if full_rows && c + C <= cols.end { C } else { 1 };
        }
        r += if full_rows { R } else { 1 };
    }
}

/// `tiles` on plain NEON.
///
/// # Safety
/// As `tile`.
#[target_feature(enable = "neon")]
unsafe fn tile_neon(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    tiles::<false>(w, a, rows, cols, out, n)
}

/// `tiles` with `sdot`.
///
/// # Safety
/// As `tile`; the CPU must have `dotprod`.
#[target_feature(enable = "neon,dotprod")]
unsafe fn tile_dotprod(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    tiles::<true>(w, a, rows, cols, out, n)
}

/// Two activation rows × two weight rows from (`r0`, `c0`) with `smmla`: per block, 4
/// instructions for 128 products, the four outputs in the lanes of one register.
///
/// # Safety
/// The CPU must have `i8mm` (the caller enabling it); rows `r0, r0 + 1` of `a` and `c0, c0 + 1`
/// of `w` must exist and `out` be valid for writes of their four cells.
#[inline(always)]
unsafe fn pair_i8mm(w: &Q8Rows, a: &Q8Rows, r0: usize, c0: usize, out: *mut f32, n: usize) {
    let nb = w.blocks_per_row;
    let mut acc = vdupq_n_f32(0.0);
    for b in 0..nb {
        let (i0, i1) = (r0 * nb + b, (r0 + 1) * nb + b);
        let (j0, j1) = (c0 * nb + b, (c0 + 1) * nb + b);
        let (x0, x1) = (a.values.as_ptr().add(i0) as *const i8, a.values.as_ptr().add(i1) as *const i8);
        let (y0, y1) = (w.values.as_ptr().add(j0) as *const i8, w.values.as_ptr().add(j1) as *const i8);
        let mut sum = vdupq_n_s32(0);
        for k in (0..BLOCK).step_by(8) {
            let x = vcombine_s8(vld1_s8(x0.add(k)), vld1_s8(x1.add(k)));
            let y = vcombine_s8(vld1_s8(y0.add(k)), vld1_s8(y1.add(k)));
            sum = smmla(sum, x, y);
        }
        let (s0, s1) = (*a.scales.get_unchecked(i0), *a.scales.get_unchecked(i1));
        let (t0, t1) = (*w.scales.get_unchecked(j0), *w.scales.get_unchecked(j1));
        let scales = [s0 * t0, s0 * t1, s1 * t0, s1 * t1];
        acc = vfmaq_f32(acc, vcvtq_f32_s32(sum), vld1q_f32(scales.as_ptr()));
    }
    let cells = [r0 * n + c0, r0 * n + c0 + 1, (r0 + 1) * n + c0, (r0 + 1) * n + c0 + 1];
    let mut values = [0f32; 4];
    vst1q_f32(values.as_mut_ptr(), acc);
    for (cell, value) in cells.into_iter().zip(values) {
        *out.add(cell) = value;
    }
}

/// 2 × 2 tiles with `smmla`, the odd row or column left with `sdot`.
///
/// # Safety
/// As `tile`; the CPU must have `dotprod` and `i8mm`.
#[target_feature(enable = "neon,dotprod,i8mm")]
unsafe fn tile_i8mm(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    let mut r = rows.start;
    while r + 2 <= rows.end {
        let mut c = cols.start;
        while c + 2 <= cols.end {
            pair_i8mm(w, a, r, c, out, n);
            c += 2;
        }
        if c < cols.end {
            micro::<true, 2, 1>(w, a, r, c, out, n);
        }
        r += 2;
    }
    if r < rows.end {
        tiles::<true>(w, a, r..rows.end, cols, out, n);
    }
}
