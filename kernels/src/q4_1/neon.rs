//! The Q4_1 kernel on aarch64: tiles of activation rows × weight rows, per block the nibbles
//! unpacked to 32 bytes (0..15, so signed bytes hold them) and an exact integer dot product
//! (`sdot`, or widening multiplies on plain NEON) summed across lanes, then scaled and added
//! as every path does (the same bits). i8mm runs the dotprod tiles (see the module above).

use super::Q4Rows;
use crate::isa::Isa;
use crate::neon_dot::{sdot, sdot_neon};
use crate::q8_0::Q8Rows;
use std::arch::aarch64::*;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols` on `isa` (one of the NEON paths).
///
/// # Safety
/// The CPU must support `isa`. `w` and `a` must hold whole rows of equal width and `sums` one
/// entry per block of `a`; `rows` must lie inside `a`'s rows and `cols` inside `w`'s; `out`
/// must be valid for writes of `a.rows * n` cells with `n = w.rows`, and no other thread may
/// touch the cells of `rows` × `cols` meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile(isa: Isa, w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    match isa {
        Isa::NeonI8mm | Isa::NeonDotprod => tile_dotprod(w, a, sums, rows, cols, out, n),
        _ => tile_neon(w, a, sums, rows, cols, out, n),
    }
}

/// `R` activation rows × `C` weight rows from (`r0`, `c0`).
///
/// # Safety
/// The CPU must have NEON, and `sdot` where `DOT` (the caller enabling it); the rows named
/// must exist, `sums` hold every block of `a`, and `out` be valid for writes of their cells
/// `r * n + c`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn micro<const DOT: bool, const R: usize, const C: usize>(w: &Q4Rows, a: &Q8Rows, sums: &[f32], r0: usize, c0: usize, out: *mut f32, n: usize) {
    let nb = w.blocks_per_row;
    let mask = vdupq_n_u8(0x0f);
    let mut acc = [[0f32; C]; R];
    for b in 0..nb {
        let mut wv = [[vdupq_n_s8(0); 2]; C];
        let (mut ws, mut wm) = ([0f32; C], [0f32; C]);
        for c in 0..C {
            let i = (c0 + c) * nb + b;
            let packed = vld1q_u8(w.nibbles.as_ptr().add(i) as *const u8);
            wv[c] = [vreinterpretq_s8_u8(vandq_u8(packed, mask)), vreinterpretq_s8_u8(vshrq_n_u8::<4>(packed))];
            ws[c] = *w.scales.get_unchecked(i);
            wm[c] = *w.mins.get_unchecked(i);
        }
        for r in 0..R {
            let i = (r0 + r) * nb + b;
            let p = a.values.as_ptr().add(i) as *const i8;
            let x = [vld1q_s8(p), vld1q_s8(p.add(16))];
            let (scale, sum) = (*a.scales.get_unchecked(i), *sums.get_unchecked(i));
            for c in 0..C {
                let zero = vdupq_n_s32(0);
                let dot = if DOT {
                    sdot(sdot(zero, x[0], wv[c][0]), x[1], wv[c][1])
                } else {
                    sdot_neon(sdot_neon(zero, x[0], wv[c][0]), x[1], wv[c][1])
                };
                // Exact integer sum, then the block's value and one addition, as every path.
                let dot = vaddvq_s32(dot) as f32;
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

/// Tiles of 4 × 4 and their remainders; a lone activation row reads one weight row at a time.
///
/// # Safety
/// As `micro`, for every row of `rows` and `cols`.
#[inline(always)]
unsafe fn tiles<const DOT: bool>(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    const R: usize = 4;
    const C: usize = 4;
    let mut r = rows.start;
    while r < rows.end {
        let full_rows = r + R <= rows.end;
        let mut c = cols.start;
        while c < cols.end {
            match (full_rows, c + C <= cols.end) {
                (true, true) => micro::<DOT, R, C>(w, a, sums, r, c, out, n),
                (true, false) => micro::<DOT, R, 1>(w, a, sums, r, c, out, n),
                (false, _) => micro::<DOT, 1, 1>(w, a, sums, r, c, out, n),
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
unsafe fn tile_neon(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    tiles::<false>(w, a, sums, rows, cols, out, n)
}

/// `tiles` with `sdot`.
///
/// # Safety
/// As `tile`; the CPU must have `dotprod`.
#[target_feature(enable = "neon,dotprod")]
unsafe fn tile_dotprod(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, out: *mut f32, n: usize) {
    tiles::<true>(w, a, sums, rows, cols, out, n)
}
