//! Q4_K and Q6_K matrix products read straight from the weights as the GGUF file stores them,
//! with activations quantized to Q8_K (blocks of 256 signed bytes with one f32 scale).
//!
//! Why our own: candle 0.11 multiplies these types from copies it makes on first use — a tiled
//! copy for its AVX-512/AVX2 kernels (Q4_K 192 bytes per 256 weights against the file's 144;
//! Q6_K 320 against 210) and, on AMX CPUs, a second one for prompts (320 bytes). On the 1.5B
//! model that is several times the file in memory, and a decode step streams the larger tiled
//! copy from memory. Here nothing is copied: weight blocks are unpacked in registers.
//!
//! - Fewer than 8 activation rows (decode): a weight row at a time, prefetched ahead. Per
//!   super-block the sums are exact integers: `vpdpbusd` multiplies the unsigned 4/6-bit
//!   weights by the signed activation bytes (four products per 32-bit lane) and `vpdpwssd`
//!   scales each lane by its sub-block's integer scale while adding it up.
//! - 8 rows or more (prompts): panels. A super-block of 16 weight rows is laid out once, one
//!   32-bit lane per weight row holding 4 of its values, and serves up to 64 activation rows:
//!   each `vpdpbusd` multiplies 4 broadcast activation values by 4 values of all 16 rows, a
//!   sub-block's integer sums are multiplied by its scale in f32 once per 16 outputs, and the
//!   offsets are one integer per output and super-block (`vpdpwssd` of the weights' integer
//!   mins or scales by the activations' integer sums of 16).
//!
//! In both the weights' offsets (Q4_K's mins, Q6_K's -32) go through the activations' sums of
//! 16, and results equal candle's to float rounding (it sums in another order); the tests check
//! both paths against the plain definition.
//!
//! Paths ([`Isa`]): AVX-512 VNNI as above (`avx512`); AVX2 and AVX-VNNI the same with 256-bit
//! registers, panels 8 weight rows wide (`avx2`); NEON, dotprod and i8mm on aarch64, a weight
//! row at a time (`neon`); and plain Rust everywhere (`scalar`), the reference the others are
//! tested against.
//!
//! On the x86 paths the weights can instead be stored 16 rows interleaved at load
//! ([`InterleavedKQuant`], `interleaved`): then decode runs the panel arithmetic too, straight
//! from memory laid out for it, which streams weights 1.5–2× faster than a row at a time (the
//! file's layout stays for matrices shared with an embedding lookup, for rows past the last
//! whole 16, and on ARM).

use crate::{rounded_to_i8, Parallel, SharedOut};
use crate::isa::Isa;
use std::ops::Range;

/// Values per super-block.
pub const QK_K: usize = 256;

/// The weight types this kernel reads, with ggml's block layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightType {
    /// f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit values.
    Q4K,
    /// 128 bytes of low 4 bits, 64 of high 2 bits, 16 signed 8-bit scales, f16 d.
    Q6K,
}

impl WeightType {
    /// Bytes per super-block of 256 weights.
    pub const fn block_bytes(self) -> usize {
        match self {
            WeightType::Q4K => 144,
            WeightType::Q6K => 210,
        }
    }
}

/// Activation rows in Q8_K: `scales[i]` and `values[i]` make block `i`; row `r` is blocks
/// `r * blocks_per_row ..`. `int_sums[i][k]` is the sum of values `16k .. 16k+16` (at most
/// 16 · 128 in magnitude) and `sums[i][k]` the same times the scale: the weights' offsets
/// multiply one or the other.
#[derive(Debug, Clone, Default)]
pub struct Q8KRows {
    pub rows: usize,
    pub blocks_per_row: usize,
    pub scales: Vec<f32>,
    pub values: Vec<[i8; QK_K]>,
    pub sums: Vec<[f32; 16]>,
    pub int_sums: Vec<[i16; 16]>,
}

impl Q8KRows {
    /// Whether every part holds `rows × blocks_per_row` blocks (the kernels rely on it).
    pub fn is_whole(&self) -> bool {
        let blocks = self.rows * self.blocks_per_row;
        [self.scales.len(), self.values.len(), self.sums.len(), self.int_sums.len()].iter().all(|&n| n == blocks)
    }

    /// `m` rows of `width` values quantized as candle's `BlockQ8K::from_float` does (scale
    /// from the value of largest magnitude, -127/max, rounded), rows spread over `parallel`.
    /// None when the sizes disagree.
    pub fn quantize(x: &[f32], m: usize, width: usize, parallel: Parallel) -> Option<Self> {
        if !width.is_multiple_of(QK_K) || x.len() != m.checked_mul(width)? {
            return None;
        }
        let nb = width / QK_K;
        let blocks = m * nb;
        let mut out = Self {
            rows: m,
            blocks_per_row: nb,
            scales: vec![0.0; blocks],
            values: vec![[0; QK_K]; blocks],
            sums: vec![[0.0; 16]; blocks],
            int_sums: vec![[0; 16]; blocks],
        };
        let (scales, values, sums, int_sums) = (
            SharedOut(out.scales.as_mut_ptr()),
            SharedOut(out.values.as_mut_ptr()),
            SharedOut(out.sums.as_mut_ptr()),
            SharedOut(out.int_sums.as_mut_ptr()),
        );
        parallel(blocks, &|range: Range<usize>| {
            for i in range {
                // SAFETY: `i < blocks`, the length of all four vectors; each block index is
                // written by exactly one work item.
                unsafe {
                    let block = &x[i * QK_K..(i + 1) * QK_K];
                    quantize_block(block, &mut *scales.ptr().add(i), &mut *values.ptr().add(i), &mut *sums.ptr().add(i), &mut *int_sums.ptr().add(i));
                }
            }
        });
        Some(out)
    }
}

fn quantize_block(xs: &[f32], d: &mut f32, q: &mut [i8; QK_K], sums: &mut [f32; 16], int_sums: &mut [i16; 16]) {
    // Written so that the compiler keeps every step in vector registers (a running "largest so
    // far" with its value, and `as i8`'s saturating conversion, compiled to one value at a time:
    // 6% of a 1.5B prompt's time). The results are the running form's to the bit (tested):
    // the largest magnitude is exact in any order, and the first value reaching it is the one
    // a running strict comparison keeps.
    let mut lanes = [0f32; 8];
    for chunk in xs.chunks_exact(lanes.len()) {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(x.abs());
        }
    }
    let amax = lanes.iter().fold(0f32, |a, &lane| a.max(lane));
    if amax == 0.0 {
        return;
    }
    let Some(&max) = xs.iter().find(|x| x.abs() == amax) else { return };
    let iscale = -127f32 / max;
    for (q, &x) in q.iter_mut().zip(xs) {
        *q = rounded_to_i8(iscale * x);
    }
    *d = 1.0 / iscale;
    for ((sum, int_sum), group) in sums.iter_mut().zip(int_sums.iter_mut()).zip(q.chunks_exact(16)) {
        let total = group.iter().map(|v| i16::from(*v)).sum::<i16>();
        *int_sum = total;
        *sum = *d * f32::from(total);
    }
}

/// Activation rows per work item: one weight block, unpacked once, serves all of them.
const ROW_GROUP: usize = 8;
/// Weight rows per work item.
const COL_BLOCK: usize = 32;

/// `dst[r * rows + c]` = row `r` of `a` · row `c` of the weights `w` (`rows` rows of
/// `a.blocks_per_row` blocks of type `ty`, in the file's bytes), computed on `isa`.
#[allow(clippy::too_many_arguments)]
pub fn matmul(isa: Isa, ty: WeightType, w: &[u8], rows: usize, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
    let nb = a.blocks_per_row;
    if Some(w.len()) != rows.checked_mul(nb).and_then(|b| b.checked_mul(ty.block_bytes())) || !a.is_whole() || dst.len() != a.rows * rows
    {
        return Err(format!(
            "{ty:?} matmul: {} bytes for {rows}×{} weights, {}×{} activations, {} outputs",
            w.len(),
            nb * QK_K,
            a.rows,
            nb * QK_K,
            dst.len()
        ));
    }
    if !isa.supported() {
        return Err(format!("{ty:?} matmul: this CPU cannot run the {isa} path"));
    }
    let out = SharedOut(dst.as_mut_ptr());
    // Prompts: panels of weight rows laid out in registers once per super-block and used by
    // up to 64 activation rows. Fewer rows would not pay for the layout.
    let width = panel_width(isa);
    let panels = width > 0 && a.rows >= PANEL_MIN_ROWS;
    let (group_rows, block_cols) = if panels { (PANEL_ROWS, width) } else { (ROW_GROUP, COL_BLOCK) };
    crate::for_each_output_tile(parallel, a.rows, rows, group_rows, block_cols, &|r, c| {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
        let full_panel = panels && c.len() == width;
        match isa {
            // SAFETY (all four): the CPU supports `isa` (checked above); the sizes were
            // checked above, so every block read is inside `w` and `a` and every cell written
            // inside `dst`; work items cover disjoint cells.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni if full_panel => unsafe { avx512::panel_tile(ty, w.as_ptr(), a, r, c.start, out.ptr(), rows) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni => unsafe { avx512::tile(ty, w.as_ptr(), a, r, c, out.ptr(), rows) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 | Isa::AvxVnni => unsafe { avx2::tile(isa, full_panel, ty, w.as_ptr(), a, r, c, out.ptr(), rows) },
            #[cfg(target_arch = "aarch64")]
            Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => unsafe { neon::tile(isa, ty, w.as_ptr(), a, r, c, out.ptr(), rows) },
            // SAFETY: `store` gets cells `r * rows + c` of the item's own rows and columns,
            // inside `dst` (sizes checked above) and written by no other work item.
            _ => scalar::tile(ty, w, rows, a, r, c, &mut |i, v| unsafe { *out.ptr().add(i) = v }),
        }
    });
    Ok(())
}

/// Activation rows from which products use panels.
const PANEL_MIN_ROWS: usize = 8;
/// Activation rows per panel work item: their sums stay in the item's accumulators.
const PANEL_ROWS: usize = 64;

/// Weight rows per panel on `isa` (one 32-bit lane each in a vector register), 0 where the
/// path has no panels.
fn panel_width(isa: Isa) -> usize {
    match isa {
        Isa::Avx512Vnni => 16,
        Isa::Avx2 | Isa::AvxVnni => 8,
        Isa::Scalar | Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => 0,
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;
mod interleaved;
pub use interleaved::InterleavedKQuant;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{paths_under_test, pseudo_random_bits, serial};

    fn pseudo_random(n: usize, seed: u32) -> Vec<u8> {
        pseudo_random_bits(n, seed).into_iter().map(|b| (b >> 16) as u8).collect()
    }

    fn f16_bytes(x: f32) -> [u8; 2] {
        half::f16::from_f32(x).to_le_bytes()
    }

    /// Random blocks with small positive super-block scales (random bytes there would make
    /// f16 infinities and NaNs).
    fn random_weights(ty: WeightType, rows: usize, nb: usize, seed: u32) -> Vec<u8> {
        let mut w = pseudo_random(rows * nb * ty.block_bytes(), seed);
        for (i, block) in w.chunks_exact_mut(ty.block_bytes()).enumerate() {
            let d = 0.001 + (i % 7) as f32 * 0.0005;
            match ty {
                WeightType::Q4K => {
                    block[0..2].copy_from_slice(&f16_bytes(d));
                    block[2..4].copy_from_slice(&f16_bytes(d * 0.7));
                }
                WeightType::Q6K => block[208..210].copy_from_slice(&f16_bytes(d)),
            }
        }
        w
    }

    /// The definition, value by value: ggml's dequantization of each block.
    fn dequantize(ty: WeightType, block: &[u8]) -> Vec<f64> {
        let f16 = |i: usize| f64::from(half::f16::from_le_bytes([block[i], block[i + 1]]).to_f32());
        match ty {
            WeightType::Q4K => {
                let (d, dmin, s, qs) = (f16(0), f16(2), &block[4..16], &block[16..144]);
                let scale_min = |j: usize| -> (f64, f64) {
                    if j < 4 {
                        (f64::from(s[j] & 63), f64::from(s[j + 4] & 63))
                    } else {
                        (f64::from((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4)), f64::from((s[j + 4] >> 4) | ((s[j] >> 6) << 4)))
                    }
                };
                (0..QK_K)
                    .map(|i| {
                        let (chunk, l) = (i / 64, i % 64);
                        let byte = qs[32 * chunk + l % 32];
                        let q = if l < 32 { byte & 0xf } else { byte >> 4 };
                        let (sc, m) = scale_min(i / 32);
                        d * sc * f64::from(q) - dmin * m
                    })
                    .collect()
            }
            WeightType::Q6K => {
                let (ql, qh, sc, d) = (&block[0..128], &block[128..192], &block[192..208], f16(208));
                (0..QK_K)
                    .map(|i| {
                        let (h, j) = (i / 128, i % 128);
                        let (l, part) = (j % 32, j / 32);
                        let low = ql[64 * h + l + 32 * (part % 2)];
                        let low = if part < 2 { low & 0xf } else { low >> 4 };
                        let high = (qh[32 * h + l] >> (2 * part)) & 3;
                        let q = i32::from(low | (high << 4)) - 32;
                        d * f64::from(sc[i / 16] as i8) * f64::from(q)
                    })
                    .collect()
            }
        }
    }

    /// The activation quantization gives, to the bit, what a running comparison and `as i8`
    /// give: on values with ties of magnitude and sign (the first one sets the scale's sign),
    /// halves that round away from zero, zeros, infinities and NaN.
    #[test]
    fn quantized_blocks_equal_the_running_form() {
        fn running_form(xs: &[f32]) -> (f32, Vec<i8>, Vec<f32>) {
            let (mut max, mut amax) = (0f32, 0f32);
            for &x in xs {
                if amax < x.abs() {
                    amax = x.abs();
                    max = x;
                }
            }
            if amax == 0.0 {
                return (0.0, vec![0; QK_K], vec![0.0; 16]);
            }
            let iscale = -127f32 / max;
            let q: Vec<i8> = xs.iter().map(|&x| (iscale * x).round().clamp(-128.0, 127.0) as i8).collect();
            let d = 1.0 / iscale;
            let sums = q.chunks_exact(16).map(|g| d * g.iter().map(|v| i32::from(*v)).sum::<i32>() as f32).collect();
            (d, q, sums)
        }
        let bits = pseudo_random_bits(8 * QK_K, 17);
        let mut blocks: Vec<Vec<f32>> = bits.chunks_exact(QK_K).map(|b| b.iter().map(|v| (*v as i32) as f32 / 1e9).collect()).collect();
        // Ties: the same magnitude with both signs, negative first and positive first.
        blocks[1][3] = -9.0;
        blocks[1][200] = 9.0;
        blocks[2][5] = 9.0;
        blocks[2][6] = -9.0;
        // Values that land on halves: 127 / 2.54 = 50 per unit, so x = k / 100 gives k / 2.
        blocks[3] = (0..QK_K).map(|i| if i == 0 { 2.54 } else { (i as f32 - 128.0) / 100.0 }).collect();
        blocks[4] = vec![0.0; QK_K];
        blocks[5][7] = f32::INFINITY;
        blocks[6][9] = f32::NAN;
        blocks[7] = vec![-0.0; QK_K];
        blocks[7][100] = 1e-30;
        for (i, xs) in blocks.iter().enumerate() {
            let ours = Q8KRows::quantize(xs, 1, QK_K, &serial).unwrap();
            let (d, q, sums) = running_form(xs);
            assert_eq!(ours.scales[0].to_bits(), d.to_bits(), "block {i}: scale");
            assert_eq!(ours.values[0].to_vec(), q, "block {i}: values");
            let (a, b): (Vec<u32>, Vec<u32>) = (ours.sums[0].iter().map(|v| v.to_bits()).collect(), sums.iter().map(|v| v.to_bits()).collect());
            assert_eq!(a, b, "block {i}: sums");
            let int_sums: Vec<i16> = q.chunks_exact(16).map(|g| g.iter().map(|v| i16::from(*v)).sum()).collect();
            assert_eq!(ours.int_sums[0].to_vec(), int_sums, "block {i}: integer sums");
        }
    }

    #[test]
    fn every_path_matches_the_definition_and_the_scalar_path() {
        let nb = 3;
        let width = nb * QK_K;
        let paths = paths_under_test("k_quants");
        for ty in [WeightType::Q4K, WeightType::Q6K] {
            // 37 weight rows (two panels of 16 or four of 8, and 5 more) and 1, 19 or 70
            // activation rows: one row, and panels with full groups of 4 rows, remainders and
            // two groups of 64.
            let rows = 37;
            let w = random_weights(ty, rows, nb, 7);
            for m in [1, 19, 70] {
                let x: Vec<f32> = pseudo_random(m * width, 3).iter().map(|b| f32::from(*b) / 40.0 - 3.0).collect();
                let a = Q8KRows::quantize(&x, m, width, &serial).unwrap();
                let mut scalar = vec![f32::NAN; m * rows];
                matmul(Isa::Scalar, ty, &w, rows, &a, &mut scalar, &serial).unwrap();
                for &isa in &paths {
                    let mut dst = vec![f32::NAN; m * rows];
                    matmul(isa, ty, &w, rows, &a, &mut dst, &serial).unwrap();
                    for r in 0..m {
                        for c in 0..rows {
                            let want: f64 = (0..nb)
                                .flat_map(|b| {
                                    let i = r * nb + b;
                                    let values = dequantize(ty, &w[(c * nb + b) * ty.block_bytes()..][..ty.block_bytes()]);
                                    let (d, q) = (f64::from(a.scales[i]), a.values[i]);
                                    values.into_iter().zip(q).map(move |(v, q)| v * d * f64::from(q))
                                })
                                .sum();
                            let (got, reference) = (f64::from(dst[r * rows + c]), f64::from(scalar[r * rows + c]));
                            let tolerance = 1e-4 * want.abs().max(1.0);
                            assert!((got - want).abs() < tolerance, "{isa} {ty:?} m={m} ({r},{c}): {got} vs definition {want}");
                            assert!((got - reference).abs() < tolerance, "{isa} {ty:?} m={m} ({r},{c}): {got} vs scalar {reference}");
                        }
                    }
                }
            }
        }
    }

    /// AVX2 and AVX-VNNI sum the same exact integers in the same order, and so do NEON and
    /// dotprod (i8mm sums each output's integers in one lane: to rounding only, checked above).
    #[test]
    fn paths_of_one_family_give_the_same_bits() {
        let nb = 2;
        let supported = paths_under_test("k_quants families");
        for family in [&[Isa::Avx2, Isa::AvxVnni][..], &[Isa::Neon, Isa::NeonDotprod]] {
            let paths: Vec<Isa> = family.iter().copied().filter(|isa| supported.contains(isa)).collect();
            for ty in [WeightType::Q4K, WeightType::Q6K] {
                let w = random_weights(ty, 24, nb, 5);
                for m in [1, 9] {
                    let x: Vec<f32> = pseudo_random(m * nb * QK_K, 11).iter().map(|b| f32::from(*b) / 50.0 - 2.5).collect();
                    let a = Q8KRows::quantize(&x, m, nb * QK_K, &serial).unwrap();
                    let results: Vec<Vec<u32>> = paths
                        .iter()
                        .map(|isa| {
                            let mut dst = vec![0.0; m * 24];
                            matmul(*isa, ty, &w, 24, &a, &mut dst, &serial).unwrap();
                            dst.iter().map(|v| v.to_bits()).collect()
                        })
                        .collect();
                    for (isa, bits) in paths.iter().zip(&results) {
                        assert_eq!(bits, &results[0], "{isa} {ty:?} m={m}");
                    }
                }
            }
        }
    }

    /// Interleaved weights give the panel product's bits on the rows in whole records, for any
    /// number of activation rows (also a few, which the file's layout multiplies a weight row at
    /// a time), and the row-at-a-time kernel's bits on the rows left over; so a row's result
    /// does not depend on whether it is decoded or read in a prompt.
    #[test]
    fn interleaved_weights_give_the_panel_products_bits() {
        let paths: Vec<Isa> = paths_under_test("interleaved K-quants").into_iter().filter(|isa| InterleavedKQuant::runs_on(*isa)).collect();
        let (nb, rows, whole) = (3, 16 * 3 + 7, 16 * 3);
        let width = nb * QK_K;
        let x: Vec<f32> = pseudo_random(70 * width, 5).iter().map(|b| f32::from(*b) / 40.0 - 3.0).collect();
        for isa in paths {
            for ty in [WeightType::Q4K, WeightType::Q6K] {
                let w = random_weights(ty, rows, nb, 21);
                let interleaved = InterleavedKQuant::from_file_bytes(ty, &w, rows, nb, &serial).unwrap();
                let product = |m: usize, layout: &dyn Fn(&Q8KRows, &mut [f32])| {
                    let a = Q8KRows::quantize(&x[..m * width], m, width, &serial).unwrap();
                    let mut dst = vec![f32::NAN; m * rows];
                    layout(&a, &mut dst);
                    dst
                };
                let file = |a: &Q8KRows, dst: &mut [f32]| matmul(isa, ty, &w, rows, a, dst, &serial).unwrap();
                let panels = product(70, &file);
                for m in [1, 3, 4, 5, 7, 8, 19, 70] {
                    let got = product(m, &|a, dst| interleaved.matmul(isa, a, dst, &serial).unwrap());
                    let row_at_a_time = product(m, &file);
                    for r in 0..m {
                        for c in 0..rows {
                            let want = if c < whole { panels[r * rows + c] } else { row_at_a_time[r * rows + c] };
                            assert_eq!(got[r * rows + c].to_bits(), want.to_bits(), "{isa} {ty:?} m={m} ({r},{c}): {} vs {want}", got[r * rows + c]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn interleaved_sizes_and_paths_are_checked() {
        let w = random_weights(WeightType::Q4K, 16, 1, 1);
        assert!(InterleavedKQuant::from_file_bytes(WeightType::Q4K, &w, 16, 2, &serial).is_none());
        assert!(InterleavedKQuant::from_file_bytes(WeightType::Q4K, &w[1..], 16, 1, &serial).is_none());
        assert!(InterleavedKQuant::from_file_bytes(WeightType::Q6K, &w, 16, 1, &serial).is_none());
        let interleaved = InterleavedKQuant::from_file_bytes(WeightType::Q4K, &w, 16, 1, &serial).unwrap();
        let a = Q8KRows::quantize(&[1.0; QK_K], 1, QK_K, &serial).unwrap();
        assert!(interleaved.matmul(Isa::Scalar, &a, &mut [0.0; 16], &serial).is_err());
        assert!(interleaved.matmul(Isa::Avx512Vnni, &a, &mut [0.0; 15], &serial).is_err());
        let wide = Q8KRows::quantize(&[1.0; 2 * QK_K], 1, 2 * QK_K, &serial).unwrap();
        assert!(interleaved.matmul(Isa::Avx512Vnni, &wide, &mut [0.0; 16], &serial).is_err());
        for isa in Isa::ALL {
            assert_eq!(interleaved.matmul(isa, &a, &mut [0.0; 16], &serial).is_ok(), isa.supported() && InterleavedKQuant::runs_on(isa), "{isa}");
        }
        // Which matrices take the layout: an x86 path, a whole record of rows, whole super-blocks.
        assert!(InterleavedKQuant::suits(Isa::Avx2, 16, QK_K) && InterleavedKQuant::suits(Isa::Avx512Vnni, 1536, 6 * QK_K));
        assert!(!InterleavedKQuant::suits(Isa::Avx2, 15, QK_K) && !InterleavedKQuant::suits(Isa::Avx2, 16, QK_K + 32));
        assert!(!InterleavedKQuant::suits(Isa::Scalar, 16, QK_K));
    }

    #[test]
    fn activations_are_quantized_as_candle_does() {
        let mut x = vec![0.0f32; 2 * QK_K];
        x[5] = -2.0;
        x[6] = 1.0;
        x[QK_K + 1] = 0.5;
        let a = Q8KRows::quantize(&x, 1, 2 * QK_K, &serial).unwrap();
        // The value of largest magnitude always becomes -127; the scale takes its sign.
        assert_eq!((a.values[0][5], a.values[0][6], a.scales[0]), (-127, 64, 1.0 / 63.5));
        assert!((a.sums[0][0] - a.scales[0] * -63.0).abs() < 1e-6);
        assert_eq!((a.values[1][1], a.scales[1]), (-127, -0.5 / 127.0));
        assert!(Q8KRows::quantize(&x, 1, 3 * QK_K, &serial).is_none());
        assert!(Q8KRows::quantize(&x[..100], 1, 100, &serial).is_none());
        let zero = Q8KRows::quantize(&[0.0; QK_K], 1, QK_K, &serial).unwrap();
        assert_eq!((zero.scales[0], zero.values[0][0], zero.sums[0][0]), (0.0, 0, 0.0));
    }

    #[test]
    fn sizes_are_checked() {
        let a = Q8KRows::quantize(&[1.0; QK_K], 1, QK_K, &serial).unwrap();
        let w = random_weights(WeightType::Q4K, 2, 1, 1);
        for isa in Isa::all_supported() {
            assert!(matmul(isa, WeightType::Q4K, &w, 3, &a, &mut [0.0; 3], &serial).is_err());
            assert!(matmul(isa, WeightType::Q6K, &w, 2, &a, &mut [0.0; 2], &serial).is_err());
            assert!(matmul(isa, WeightType::Q4K, &w, 2, &a, &mut [0.0; 5], &serial).is_err());
            assert!(matmul(isa, WeightType::Q4K, &w, 2, &a, &mut [0.0; 2], &serial).is_ok());
        }
        for isa in Isa::ALL.into_iter().filter(|isa| !isa.supported()) {
            assert!(matmul(isa, WeightType::Q4K, &w, 2, &a, &mut [0.0; 2], &serial).is_err(), "{isa} is not on this CPU");
        }
    }
}
