//! Q4_1 × Q8_0 matrix products: weights in ggml's Q4_1 format (blocks of 32 unsigned 4-bit
//! values with a scale and a minimum, value = d · q + m), activations in Q8_0 (as `q8_0`
//! quantizes them).
//!
//! Why our own: candle 0.11 has no SIMD kernel for Q4_1, so Assay used to re-quantize such
//! files to Q8_0 at load (8.5 bits per weight held against the file's 5; SmolLM2-135M ships as
//! Q4_1). Here the file's blocks are kept as they are, the nibbles unpacked in registers, and a
//! decode step streams 0.625 bytes per weight instead of 1.125.
//!
//! Per block the product is d_w · d_a · Σ q·x + m_w · d_a · Σ x: the first sum exact in
//! integers (`vpdpbusd` takes the unsigned nibbles against the signed activation bytes
//! directly, no offset needed; on AVX2 `vpmaddubsw`, whose pair sums of 15 · 128 cannot
//! saturate), the second the activation block's byte sum, computed once per product and
//! rounded to f16 as ggml's Q8_1 blocks keep it (llama.cpp and candle multiply Q4_1 weights by
//! Q8_1 activations: the same values as Q8_0 plus that sum), so results stay llama.cpp's.
//!
//! Shapes follow `q8_0`: fewer than 8 activation rows in tiles (a lone row reads one weight
//! row at a time, bound by memory); from 8 rows on x86, panels of 16 (AVX-512) or 8 (AVX2,
//! AVX-VNNI) weight rows in the lanes of one register, one `vpdpbusd` for 4 values of every
//! row. Paths: scalar everywhere (the reference), x86 in `x86`, aarch64 tiles (NEON, dotprod;
//! i8mm runs the dotprod tiles: the nibbles would need a second layout for `smmla`) in
//! `neon`. Every path and shape turns each block's exact integer sum into the block's value
//! with the same operations (d_w · d_a · Σ q·x fused onto m_w · s) and adds the blocks in the
//! same order, so all give the same bits (tested): a prefix's
//! continuation read a few rows at a time gets the numbers reading it in a prompt gives (on
//! SmolLM2, whose activations are re-quantized at every layer, a 1e-7 difference between two
//! summation orders moved an option's log-probability by 0.018).

use crate::{Parallel, SharedOut};
use crate::isa::Isa;
use crate::q8_0::{Q8Rows, BLOCK};

/// Bytes of one block in a GGUF file: f16 d, f16 m, 16 bytes of nibbles.
pub const BLOCK_BYTES: usize = 4 + BLOCK / 2;

/// Rows of Q4_1 blocks as three arrays: block `i` is `scales[i]`, `mins[i]` and `nibbles[i]`
/// (byte `j` holds value `j` in its low half and value `j + 16` in its high half, as in
/// ggml); row `r` is blocks `r * blocks_per_row .. (r + 1) * blocks_per_row`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Q4Rows {
    pub rows: usize,
    pub blocks_per_row: usize,
    /// Each block's f16 scale and minimum, widened (exactly) to f32 once.
    pub scales: Vec<f32>,
    pub mins: Vec<f32>,
    pub nibbles: Vec<[u8; BLOCK / 2]>,
}

impl Q4Rows {
    /// From ggml's layout: 20-byte blocks, `rows` rows of `width` values. None when the sizes
    /// disagree.
    pub fn from_ggml_bytes(bytes: &[u8], rows: usize, width: usize) -> Option<Self> {
        if !width.is_multiple_of(BLOCK) || bytes.len() != rows.checked_mul(width / BLOCK)?.checked_mul(BLOCK_BYTES)? {
            return None;
        }
        let blocks = bytes.len() / BLOCK_BYTES;
        let mut out = Self {
            rows,
            blocks_per_row: width / BLOCK,
            scales: Vec::with_capacity(blocks),
            mins: Vec::with_capacity(blocks),
            nibbles: Vec::with_capacity(blocks),
        };
        for block in bytes.chunks_exact(BLOCK_BYTES) {
            out.scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
            out.mins.push(half::f16::from_le_bytes([block[2], block[3]]).to_f32());
            let mut q = [0u8; BLOCK / 2];
            q.copy_from_slice(&block[4..]);
            out.nibbles.push(q);
        }
        Some(out)
    }

    /// Value `j` (0..32) of block `i`: d · q + m.
    pub fn value(&self, i: usize, j: usize) -> f32 {
        let byte = self.nibbles[i][j % 16];
        let q = if j < 16 { byte & 0x0f } else { byte >> 4 };
        self.scales[i] * f32::from(q) + self.mins[i]
    }
}

/// Activation rows per work item of the tiles.
const ROW_GROUP: usize = 16;
/// Weight rows per work item of the tiles.
const COL_BLOCK: usize = 64;
/// Activation rows from which products use panels.
const PANEL_MIN_ROWS: usize = 8;
/// Activation rows per panel work item: their sums stay in the item's accumulators.
const PANEL_ROWS: usize = 64;

/// Weight rows per panel on `isa`, 0 where the path has no panels.
fn panel_width(isa: Isa) -> usize {
    match isa {
        Isa::Avx512Vnni => 16,
        Isa::AvxVnni | Isa::Avx2 => 8,
        Isa::Scalar | Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => 0,
    }
}

/// `dst[r * w.rows + c]` = row `r` of `a` · row `c` of `w` (dequantized), for every activation
/// row `r` and weight row `c`, using `isa`.
pub fn matmul(isa: Isa, w: &Q4Rows, a: &Q8Rows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
    let blocks = w.rows * w.blocks_per_row;
    if w.blocks_per_row != a.blocks_per_row
        || w.scales.len() != blocks
        || w.mins.len() != blocks
        || w.nibbles.len() != blocks
        || a.scales.len() != a.rows * a.blocks_per_row
        || a.values.len() != a.scales.len()
        || dst.len() != a.rows * w.rows
    {
        return Err(format!(
            "Q4_1 matmul: {}×{} weights, {}×{} activations, {} outputs",
            w.rows,
            w.blocks_per_row * BLOCK,
            a.rows,
            a.blocks_per_row * BLOCK,
            dst.len()
        ));
    }
    if !isa.supported() {
        return Err(format!("Q4_1 matmul: this CPU cannot run the {isa} path"));
    }
    // What each weight block's minimum multiplies: the activation block's sum d_a · Σ x, in
    // f16 as a Q8_1 block holds it.
    let sums: Vec<f32> = a
        .values
        .iter()
        .zip(&a.scales)
        .map(|(v, d)| half::f16::from_f32(d * v.iter().map(|x| i32::from(*x)).sum::<i32>() as f32).to_f32())
        .collect();
    let n = w.rows;
    let out = SharedOut(dst.as_mut_ptr());
    let width = panel_width(isa);
    let panels = width > 0 && a.rows >= PANEL_MIN_ROWS;
    let (group_rows, block_cols) = if panels { (PANEL_ROWS, width) } else { (ROW_GROUP, COL_BLOCK) };
    crate::for_each_output_tile(parallel, a.rows, n, group_rows, block_cols, &|rows, cols| {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
        let full_panel = panels && cols.len() == width;
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports `isa` (checked above); the shapes were checked above,
            // so every block the tile reads is in bounds and every cell it writes is inside
            // `dst`; `sums` has one entry per activation block; work items cover disjoint
            // cells, so no two threads write the same cell.
            Isa::Avx2 | Isa::AvxVnni | Isa::Avx512Vnni => unsafe {
                x86::tile(isa, full_panel, w, a, &sums, rows, cols, out.ptr(), n)
            },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: as for x86 above.
            Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => unsafe { neon::tile(isa, w, a, &sums, rows, cols, out.ptr(), n) },
            // SAFETY: `store` gets cells `r * n + c` of the item's own rows and columns,
            // inside `dst` (shapes checked above) and written by no other work item.
            _ => scalar::tile(w, a, &sums, rows, cols, &mut |i, v| unsafe { *out.ptr().add(i) = v }),
        }
    });
    Ok(())
}

#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{paths_under_test, pseudo_random_bits, serial};

    /// Random blocks: random nibbles, scales in (0, 0.01] and minimums in [-0.08, 0) as
    /// ggml's quantizer makes them (the minimum is the block's smallest value).
    fn random_weights(rows: usize, width: usize, seed: u32) -> Vec<u8> {
        let nb = width / BLOCK;
        let bits = pseudo_random_bits(rows * nb * BLOCK_BYTES, seed);
        let mut bytes: Vec<u8> = bits.iter().map(|b| (b >> 16) as u8).collect();
        for (i, block) in bytes.chunks_exact_mut(BLOCK_BYTES).enumerate() {
            let d = 0.001 + (i % 10) as f32 * 0.001;
            let m = -0.01 - (i % 8) as f32 * 0.01;
            block[0..2].copy_from_slice(&half::f16::from_f32(d).to_le_bytes());
            block[2..4].copy_from_slice(&half::f16::from_f32(m).to_le_bytes());
        }
        bytes
    }

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        pseudo_random_bits(n, seed).into_iter().map(|b| b as f32 / (1u32 << 24) as f32 * 2.0 - 1.0).collect()
    }

    /// The definition, as ggml's Q4_1 × Q8_1 product is: each weight's d · q times each
    /// activation dequantized (d · x), plus each weight block's minimum times the activation
    /// block's sum in f16 (ggml's Q8_1 keeps it so), summed in f64.
    fn reference(w: &Q4Rows, a: &Q8Rows) -> Vec<f64> {
        let nb = w.blocks_per_row;
        let mut out = vec![0.0; a.rows * w.rows];
        for r in 0..a.rows {
            for c in 0..w.rows {
                out[r * w.rows + c] = (0..nb)
                    .map(|b| {
                        let (i, j) = (r * nb + b, c * nb + b);
                        let x = |k: usize| f64::from(a.scales[i]) * f64::from(a.values[i][k]);
                        let q = |k: usize| if k < 16 { w.nibbles[j][k] & 0x0f } else { w.nibbles[j][k - 16] >> 4 };
                        let scaled: f64 = (0..BLOCK).map(|k| f64::from(w.scales[j]) * f64::from(q(k)) * x(k)).sum();
                        let sum: f64 = (0..BLOCK).map(x).sum();
                        scaled + f64::from(w.mins[j]) * f64::from(half::f16::from_f64(sum).to_f32())
                    })
                    .sum();
            }
        }
        out
    }

    #[test]
    fn every_path_matches_the_definition_and_the_scalar_path_on_every_tile_shape() {
        let width = 96;
        // 23 weight rows: full tiles and panels of 16 or 8, and every kind of remainder.
        let w = Q4Rows::from_ggml_bytes(&random_weights(23, width, 11), 23, width).unwrap();
        let paths = paths_under_test("q4_1");
        for m in [1, 7, 70] {
            let a = Q8Rows::quantize(&pseudo_random(m * width, 12), m, width, &serial).unwrap();
            let expected = reference(&w, &a);
            let scale = expected.iter().fold(1f64, |s, v| s.max(v.abs()));
            let mut scalar = vec![f32::NAN; m * w.rows];
            matmul(Isa::Scalar, &w, &a, &mut scalar, &serial).unwrap();
            for &isa in &paths {
                let mut dst = vec![f32::NAN; m * w.rows];
                matmul(isa, &w, &a, &mut dst, &serial).unwrap();
                for ((got, want), reference) in dst.iter().zip(&expected).zip(&scalar) {
                    // f32 sums of 3 blocks, each of them rounded once or twice.
                    let tolerance = 1e-5 * scale;
                    assert!((f64::from(*got) - want).abs() < tolerance, "{isa} m={m}: {got} vs definition {want}");
                    // Every path adds each block's exact sum with the same operations: the
                    // same bits on every shape (tiles, panels, remainders).
                    assert_eq!(got.to_bits(), reference.to_bits(), "{isa} m={m}: {got} vs scalar {reference}");
                }
            }
        }
    }

    #[test]
    fn ggml_bytes_and_shapes_are_checked() {
        let mut bytes = vec![0u8; 2 * BLOCK_BYTES];
        bytes[0..2].copy_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
        bytes[2..4].copy_from_slice(&half::f16::from_f32(-1.0).to_le_bytes());
        // Value 0 in the low half of byte 0, value 16 in its high half.
        bytes[4] = 0x93;
        let rows = Q4Rows::from_ggml_bytes(&bytes, 2, 32).unwrap();
        assert_eq!((rows.value(0, 0), rows.value(0, 16), rows.value(0, 1)), (0.5 * 3.0 - 1.0, 0.5 * 9.0 - 1.0, -1.0));
        assert!(Q4Rows::from_ggml_bytes(&bytes, 3, 32).is_none());
        assert!(Q4Rows::from_ggml_bytes(&bytes, 1, 48).is_none());
        let a = Q8Rows::quantize(&[0.0; 64], 1, 64, &serial).unwrap();
        for isa in Isa::all_supported() {
            assert!(matmul(isa, &rows, &a, &mut [0.0; 2], &serial).is_err(), "{isa}: widths 32 and 64 differ");
        }
        for isa in Isa::ALL.into_iter().filter(|isa| !isa.supported()) {
            let a = Q8Rows::quantize(&[0.0; 32], 1, 32, &serial).unwrap();
            assert!(matmul(isa, &rows, &a, &mut [0.0; 2], &serial).is_err(), "{isa} is not on this CPU");
        }
    }
}
