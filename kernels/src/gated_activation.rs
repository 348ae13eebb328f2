//! The feed-forward's gated activation, silu(gate) · up, in one pass over the fused gate/up
//! product's output.
//!
//! Why: done as two tensor operations it reads the gate half (strided, a row's gate values
//! followed by its up values), writes silu(gate) as a new tensor, then reads that and the up
//! half and writes their product: on the 1.5B model's 512-token prompt three passes over
//! 18 MiB a layer, the first two on one thread each for the strided half. Here each value is
//! read once and the product written once, rows spread over the threads. silu(g) is computed
//! as candle computes it, g / (1 + e^-g) with the same `exp`, and then multiplied by u, so the
//! result is the two-pass one's to the bit (tested).

use crate::{Parallel, SharedOut};
use std::ops::Range;

/// Where the gate and up values sit in the product's output: row `r`'s gate value `j` at
/// `r * row_stride + gate_at + j`, its up value at `r * row_stride + up_at + j`, `width` of
/// each per row.
#[derive(Debug, Clone, Copy)]
pub struct GateUpLayout {
    pub rows: usize,
    pub row_stride: usize,
    pub gate_at: usize,
    pub up_at: usize,
    pub width: usize,
}

/// silu(g) as candle's `silu` computes it.
#[inline(always)]
fn silu(g: f32) -> f32 {
    g / (1.0 + (-g).exp())
}

/// `out[r * width + j]` = silu(gate value j of row r) · (up value j of row r), the rows spread
/// over `parallel`. An error names the sizes when `values` or `out` do not hold `layout`.
pub fn silu_times_up(values: &[f32], layout: GateUpLayout, out: &mut [f32], parallel: Parallel) -> Result<(), String> {
    let GateUpLayout { rows, row_stride, gate_at, up_at, width } = layout;
    let last_needed = rows.checked_sub(1).map(|last| {
        let row_end = gate_at.max(up_at).checked_add(width)?;
        last.checked_mul(row_stride)?.checked_add(row_end)
    });
    let fits = match last_needed {
        None => true,
        Some(end) => end.is_some_and(|end| end <= values.len()),
    };
    if !fits || Some(out.len()) != rows.checked_mul(width) {
        return Err(format!(
            "silu(gate) · up: {} values for {rows} rows of stride {row_stride} (gate at {gate_at}, up at {up_at}, {width} each), {} outputs",
            values.len(),
            out.len()
        ));
    }
    let dst = SharedOut(out.as_mut_ptr());
    parallel(rows, &|part: Range<usize>| {
        for r in part {
            let row = &values[r * row_stride..];
            let (gate, up) = (&row[gate_at..gate_at + width], &row[up_at..up_at + width]);
            // SAFETY: row `r`'s `width` outputs lie inside `out` (its size was checked above)
            // and are written by this work item alone.
            let out_row = unsafe { std::slice::from_raw_parts_mut(dst.ptr().add(r * width), width) };
            for ((o, &g), &u) in out_row.iter_mut().zip(gate).zip(up) {
                *o = silu(g) * u;
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{pseudo_random_bits, serial};

    /// The result equals silu then a product, value by value, to the bit: on values across
    /// the range a model produces, zeros, large magnitudes where e^-g overflows or vanishes,
    /// and with the two halves in either order.
    #[test]
    fn equals_silu_then_product_to_the_bit() {
        let (rows, width) = (5, 37);
        for (gate_at, up_at) in [(0, width), (width, 0)] {
            let row_stride = 2 * width + 3;
            let mut values: Vec<f32> =
                pseudo_random_bits(rows * row_stride, 23).iter().map(|&b| (b as f32 / (1u32 << 24) as f32 - 0.5) * 24.0).collect();
            values[gate_at] = 0.0;
            values[gate_at + 1] = -100.0;
            values[gate_at + 2] = 100.0;
            values[gate_at + 3] = -0.0;
            let layout = GateUpLayout { rows, row_stride, gate_at, up_at, width };
            let mut out = vec![f32::NAN; rows * width];
            silu_times_up(&values, layout, &mut out, &serial).unwrap();
            for r in 0..rows {
                for j in 0..width {
                    let (g, u) = (values[r * row_stride + gate_at + j], values[r * row_stride + up_at + j]);
                    let two_pass = g / (1.0 + (-g).exp());
                    assert_eq!(out[r * width + j].to_bits(), (two_pass * u).to_bits(), "row {r}, value {j}: g {g}, u {u}");
                }
            }
        }
    }

    #[test]
    fn sizes_are_checked() {
        let values = vec![1.0; 20];
        let layout = GateUpLayout { rows: 2, row_stride: 10, gate_at: 0, up_at: 5, width: 5 };
        assert!(silu_times_up(&values, layout, &mut [0.0; 10], &serial).is_ok());
        assert!(silu_times_up(&values[..19], layout, &mut [0.0; 10], &serial).is_err());
        assert!(silu_times_up(&values, layout, &mut [0.0; 9], &serial).is_err());
        let past_the_end = GateUpLayout { up_at: 6, ..layout };
        assert!(silu_times_up(&values, past_the_end, &mut [0.0; 10], &serial).is_err());
        let none = GateUpLayout { rows: 0, ..layout };
        assert!(silu_times_up(&[], none, &mut [], &serial).is_ok());
    }
}
