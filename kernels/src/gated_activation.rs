//! The feed-forward's gated activation, act(gate) · up, in one pass over the fused gate/up
//! product's output: SiLU (Llama, Qwen, SmolLM2) or GELU in its tanh form (Gemma).
//!
//! Why: done as two tensor operations it reads the gate half (strided, a row's gate values
//! followed by its up values), writes act(gate) as a new tensor, then reads that and the up
//! half and writes their product: on the 1.5B model's 512-token prompt three passes over
//! 18 MiB a layer, the first two on one thread each for the strided half. Here each value is
//! read once and the product written once, rows spread over the threads. silu(g) is computed
//! as candle computes it, g / (1 + e^-g) with the same `exp`, and then multiplied by u, so the
//! result is the two-pass one's to the bit (tested). GELU's tanh goes through a vectorised
//! `exp` instead of libm's `tanh` (candle's `gelu` took 28 ms a layer of gemma3-270m's 512-token
//! prompt, half the prompt's time), so it matches candle's to rounding, not to the bit (tested
//! against the definition in f64).

use crate::exp::exp_of_non_positive;
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

/// gelu(g) in the tanh form (candle's `gelu`, Gemma's `gelu_pytorch_tanh`):
/// 0.5·g·(1 + tanh(√(2/π)·(g + 0.044715·g³))), with tanh(z) = sign(z)·(1 − t)/(1 + t) for
/// t = e^(−2|z|) ≤ 1, which needs `exp` only where it is at most 1.
#[inline(always)]
fn gelu_tanh(g: f32) -> f32 {
    const SQRT_TWO_OVER_PI: f32 = 0.797_884_6;
    let z = SQRT_TWO_OVER_PI * g * (1.0 + 0.044_715 * g * g);
    let t = exp_of_non_positive(-2.0 * z.abs());
    let tanh = ((1.0 - t) / (1.0 + t)).copysign(z);
    0.5 * g * (1.0 + tanh)
}

/// `out[r * width + j]` = silu(gate value j of row r) · (up value j of row r), the rows spread
/// over `parallel`. An error names the sizes when `values` or `out` do not hold `layout`.
pub fn silu_times_up(values: &[f32], layout: GateUpLayout, out: &mut [f32], parallel: Parallel) -> Result<(), String> {
    gate_times_up(values, layout, out, parallel, "silu(gate) · up", silu)
}

/// `out[r * width + j]` = gelu_tanh(gate value j of row r) · (up value j of row r), as
/// [`silu_times_up`].
pub fn gelu_tanh_times_up(values: &[f32], layout: GateUpLayout, out: &mut [f32], parallel: Parallel) -> Result<(), String> {
    gate_times_up(values, layout, out, parallel, "gelu(gate) · up", gelu_tanh)
}

/// Values of a row per work item: a 1.5B model's row (8,960) makes 9 items.
const ROW_PIECE: usize = 1024;

#[inline(always)]
fn gate_times_up(
    values: &[f32],
    layout: GateUpLayout,
    out: &mut [f32],
    parallel: Parallel,
    what: &str,
    activation: impl Fn(f32) -> f32 + Sync,
) -> Result<(), String> {
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
            "{what}: {} values for {rows} rows of stride {row_stride} (gate at {gate_at}, up at {up_at}, {width} each), {} outputs",
            values.len(),
            out.len()
        ));
    }
    let dst = SharedOut(out.as_mut_ptr());
    // Work items are pieces of rows, so a decoded token's one row is spread over the threads too.
    let pieces = width.div_ceil(ROW_PIECE).max(1);
    parallel(rows * pieces, &|part: Range<usize>| {
        for item in part {
            let (r, piece) = (item / pieces, item % pieces);
            let cols = piece * ROW_PIECE..width.min((piece + 1) * ROW_PIECE);
            let row = &values[r * row_stride..];
            let (gate, up) = (&row[gate_at + cols.start..gate_at + cols.end], &row[up_at + cols.start..up_at + cols.end]);
            // SAFETY: these outputs of row `r` lie inside `out` (its size was checked above)
            // and are written by this work item alone.
            let out_piece = unsafe { std::slice::from_raw_parts_mut(dst.ptr().add(r * width + cols.start), cols.len()) };
            for ((o, &g), &u) in out_piece.iter_mut().zip(gate).zip(up) {
                *o = activation(g) * u;
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
    /// and with the two halves in either order; rows shorter than a work item's piece and rows
    /// of several pieces, the last one partial.
    #[test]
    fn equals_silu_then_product_to_the_bit() {
        let shapes = [(5, 37), (3, 2 * ROW_PIECE + 452)];
        for (rows, width, gate_at, up_at) in shapes.into_iter().flat_map(|(r, w)| [(r, w, 0, w), (r, w, w, 0)]) {
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

    /// gelu(g)·u against the definition in f64 (libm's tanh), over the range a model produces
    /// and its edges: within 1e-6 of the input's scale (the tanh is added to 1, so its error is
    /// absolute), the sign and zeros kept, ±large g giving g·u and 0.
    #[test]
    fn gelu_times_up_equals_the_definition_to_rounding() {
        let (rows, width) = (3, 101);
        let row_stride = 2 * width;
        let mut values: Vec<f32> = pseudo_random_bits(rows * row_stride, 29).iter().map(|&b| (b as f32 / (1u32 << 24) as f32 - 0.5) * 20.0).collect();
        for (j, g) in [0.0, -0.0, 1e-8, -1e-8, 30.0, -30.0, 1e6, -1e6].into_iter().enumerate() {
            values[j] = g;
        }
        let layout = GateUpLayout { rows, row_stride, gate_at: 0, up_at: width, width };
        let mut out = vec![f32::NAN; rows * width];
        gelu_tanh_times_up(&values, layout, &mut out, &serial).unwrap();
        for r in 0..rows {
            for j in 0..width {
                let (g, u) = (values[r * row_stride + j] as f64, values[r * row_stride + width + j] as f64);
                let z = (2.0 / std::f64::consts::PI).sqrt() * (g + 0.044715 * g * g * g);
                let exact = 0.5 * g * (1.0 + z.tanh()) * u;
                let ours = out[r * width + j] as f64;
                assert!((ours - exact).abs() <= 1e-6 * (1.0 + g.abs()) * (1.0 + u.abs()), "row {r}, value {j}: g {g}, u {u}: {ours} against {exact}");
            }
        }
        assert_eq!(out[0], 0.0);
        assert_eq!(out[6], 1e6 * values[width + 6]);
        assert_eq!(out[7], 0.0);
        let mut nan = vec![0f32; 1];
        let one = GateUpLayout { rows: 1, row_stride: 2, gate_at: 0, up_at: 1, width: 1 };
        gelu_tanh_times_up(&[f32::NAN, 1.0], one, &mut nan, &serial).unwrap();
        assert!(nan[0].is_nan(), "NaN in, NaN out");
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
