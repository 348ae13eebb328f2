//! The Q4_1 kernel in plain Rust: the reference every SIMD path is tested against, and the path
//! on CPUs none of them runs on. Per block an exact integer dot product of the nibbles with the
//! activation bytes, scaled by both scales, plus the weight block's minimum times the
//! activation block's sum (one product and one fused multiply-add per block), added in f32
//! block after block, as every SIMD path adds them (so all paths give the same bits).

use super::Q4Rows;
use crate::q8_0::Q8Rows;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols`, each result handed to `store` with its cell
/// `r * w.rows + c`; `sums[i]` is activation block `i`'s scale times its byte sum. Panics
/// (slice bounds) where `w`, `a` or `sums` lack the rows named; the caller checks the sizes.
pub(super) fn tile(w: &Q4Rows, a: &Q8Rows, sums: &[f32], rows: Range<usize>, cols: Range<usize>, store: &mut dyn FnMut(usize, f32)) {
    let nb = w.blocks_per_row;
    for r in rows {
        for c in cols.clone() {
            let mut acc = 0f32;
            for b in 0..nb {
                let (i, j) = (r * nb + b, c * nb + b);
                let (x, q) = (&a.values[i], &w.nibbles[j]);
                let dot: i32 = (0..16).map(|k| i32::from(q[k] & 0x0f) * i32::from(x[k]) + i32::from(q[k] >> 4) * i32::from(x[k + 16])).sum();
                // The block's value apart, then one addition (as every SIMD path does: the
                // same bits), so the chain from block to block is one addition long.
                acc += (dot as f32).mul_add(w.scales[j] * a.scales[i], w.mins[j] * sums[i]);
            }
            store(r * w.rows + c, acc);
        }
    }
}
