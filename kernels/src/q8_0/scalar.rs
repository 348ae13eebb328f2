//! The Q8_0 kernel in plain Rust: the reference every SIMD path is tested against, and the path
//! on CPUs none of them runs on. Per block an exact integer dot product, scaled by both blocks'
//! scales and added in f32, block after block (the SIMD paths add the same products in another
//! order).

use super::Q8Rows;
use std::ops::Range;

/// Activation rows `rows` × weight rows `cols`, each result handed to `store` with its cell
/// `r * w.rows + c`. Panics (slice bounds) where `w` or `a` lack the rows named; the caller
/// checks the sizes first.
pub(super) fn tile(w: &Q8Rows, a: &Q8Rows, rows: Range<usize>, cols: Range<usize>, store: &mut dyn FnMut(usize, f32)) {
    let nb = w.blocks_per_row;
    for r in rows {
        for c in cols.clone() {
            let mut acc = 0f32;
            for b in 0..nb {
                let (i, j) = (r * nb + b, c * nb + b);
                let dot: i32 = a.values[i].iter().zip(&w.values[j]).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
                acc += dot as f32 * (a.scales[i] * w.scales[j]);
            }
            store(r * w.rows + c, acc);
        }
    }
}
