//! Q8_0 × Q8_0 matrix products: weights and activations in ggml's Q8_0 format (blocks of 32
//! signed bytes with one scale), computed a tile of activation rows × weight rows at a time.
//!
//! Why our own: candle 0.11 takes its tiled kernels only for widths that are multiples of 256
//! (and, for Q8_0, only on CPUs with VNNI); otherwise, as for SmolLM2 (576 wide) and
//! Qwen2.5-0.5B (896), it computes one dot product per (activation row, weight row), each
//! loading both blocks and re-deriving the activation's absolute values. Here a weight block is
//! loaded once per tile of activation rows, an activation block's absolute values once per tile
//! of weight rows, and on AVX-512 VNNI one instruction does the byte products and their sums.
//!
//! Tiles give outputs bit-identical to candle's (and ggml's) AVX2 `vec_dot_q8_0_q8_0`: per
//! block the 32 byte products are summed in eight groups of four as exact integers, converted
//! to f32 and multiply-added with the product of the two scales into eight lanes, block after
//! block, and the lanes are summed at the end in the same order. Activations are quantized
//! exactly as candle quantizes them.
//!
//! Prompts (8 activation rows or more) on AVX-512 VNNI take panels instead, 3–4× faster
//! (docs/runtime.md): 16 weight rows side by side in one register, one `vpdpbusd` for 4 values
//! of all 16, each block's exact integer sum scaled and added once per output. The same
//! integers, one f32 addition per block in another order: results equal to rounding. AVX-VNNI
//! has the same panels 8 weight rows wide; plain AVX2 too, with the tiles' sign trick in place
//! of the unsigned offset (which `vpmaddubsw` would saturate on).
//!
//! Paths: [`Isa::Scalar`] everywhere (the reference), the x86 paths in `x86`, the aarch64
//! ones (NEON, dotprod, i8mm tiles; no panels yet) in `neon`.

use crate::{rounded_to_i8, Parallel, SharedOut};
use std::ops::Range;
use crate::isa::Isa;

/// Values per block.
pub const BLOCK: usize = 32;
/// Bytes of one block in ggml's layout: the f16 scale, then the values.
pub const GGML_BLOCK_BYTES: usize = 2 + BLOCK;

/// Rows of Q8_0 blocks as two arrays: `scales[i]` belongs to `values[i]`; row `r` is blocks
/// `r * blocks_per_row .. (r + 1) * blocks_per_row`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Q8Rows {
    pub rows: usize,
    pub blocks_per_row: usize,
    /// Each block's f16 scale, widened (exactly) to f32 once.
    pub scales: Vec<f32>,
    pub values: Vec<[i8; BLOCK]>,
}

impl Q8Rows {
    /// From ggml's layout: 34-byte blocks (little-endian f16 scale, then 32 signed bytes),
    /// `rows` rows of `width` values. None when the sizes disagree.
    pub fn from_ggml_bytes(bytes: &[u8], rows: usize, width: usize) -> Option<Self> {
        if !width.is_multiple_of(BLOCK) || bytes.len() != rows.checked_mul(width / BLOCK)?.checked_mul(GGML_BLOCK_BYTES)? {
            return None;
        }
        let mut out = Self::with_capacity(rows, width / BLOCK);
        out.push_ggml_blocks(bytes);
        Some(out)
    }

    /// The same rows read in pieces from ggml's layout: `read` fills each buffer it is given
    /// with the next bytes. A large table (Gemma 3's embeddings, 170 MiB) is then never held
    /// twice while it loads. `Ok(None)` when `width` is not whole blocks or the size overflows;
    /// the caller bounds `rows × width` by the bytes it has (the allocation is made first).
    pub fn read_ggml<E>(
        rows: usize,
        width: usize,
        mut read: impl FnMut(&mut [u8]) -> Result<(), E>,
    ) -> Result<Option<Self>, E> {
        const PIECE_BLOCKS: usize = 4096;
        let Some(blocks) = rows.checked_mul(width / BLOCK).filter(|_| width.is_multiple_of(BLOCK)) else {
            return Ok(None);
        };
        let mut out = Self::with_capacity(rows, width / BLOCK);
        let mut piece = vec![0u8; PIECE_BLOCKS.min(blocks) * GGML_BLOCK_BYTES];
        let mut left = blocks;
        while left > 0 {
            let n = left.min(PIECE_BLOCKS);
            let bytes = &mut piece[..n * GGML_BLOCK_BYTES];
            read(bytes)?;
            out.push_ggml_blocks(bytes);
            left -= n;
        }
        Ok(Some(out))
    }

    fn with_capacity(rows: usize, blocks_per_row: usize) -> Self {
        let blocks = rows * blocks_per_row;
        Self { rows, blocks_per_row, scales: Vec::with_capacity(blocks), values: Vec::with_capacity(blocks) }
    }

    /// Appends whole ggml blocks (`bytes.len()` a multiple of [`GGML_BLOCK_BYTES`]).
    fn push_ggml_blocks(&mut self, bytes: &[u8]) {
        for block in bytes.chunks_exact(GGML_BLOCK_BYTES) {
            self.scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
            let mut v = [0i8; BLOCK];
            for (dst, src) in v.iter_mut().zip(&block[2..]) {
                *dst = *src as i8;
            }
            self.values.push(v);
        }
    }

    /// `m` rows of `width` values quantized as candle's `BlockQ8_0::from_float` does: per
    /// block, scale = max |x| / 127 (kept as f16), value = round(x / scale) with the f32 scale.
    /// Blocks go to `parallel`. None when the sizes disagree.
    pub fn quantize(x: &[f32], m: usize, width: usize, parallel: Parallel) -> Option<Self> {
        if !width.is_multiple_of(BLOCK) || x.len() != m.checked_mul(width)? {
            return None;
        }
        let blocks = x.len() / BLOCK;
        let mut scales = vec![0f32; blocks];
        let mut values = vec![[0i8; BLOCK]; blocks];
        // A decoded token's row (20–50 blocks) costs less than handing it to another thread.
        if blocks < PARALLEL_BLOCKS {
            for ((xs, scale), q) in x.chunks_exact(BLOCK).zip(&mut scales).zip(&mut values) {
                quantize_block(xs, scale, q);
            }
        } else {
            let (scales_out, values_out) = (SharedOut(scales.as_mut_ptr()), SharedOut(values.as_mut_ptr()));
            parallel(blocks, &|range: Range<usize>| {
                for i in range {
                    // SAFETY: `i < blocks`, the length of both vectors; each block index is
                    // written by exactly one work item.
                    unsafe { quantize_block(&x[i * BLOCK..][..BLOCK], &mut *scales_out.ptr().add(i), &mut *values_out.ptr().add(i)) };
                }
            });
        }
        Some(Self { rows: m, blocks_per_row: width / BLOCK, scales, values })
    }
}

/// Blocks below which [`Q8Rows::quantize`] works alone.
const PARALLEL_BLOCKS: usize = 256;

/// One block as `BlockQ8_0::from_float` quantizes it, written so that it vectorizes (the
/// running maximum and `as i8`'s saturating conversion compiled one value at a time, on the
/// main thread, were 2% of gemma3's prompt). The bits are the running form's (tested): the
/// largest magnitude is exact in any order, and |x / scale| ≤ 127 rounds inside i8's range.
#[inline]
fn quantize_block(xs: &[f32], scale: &mut f32, q: &mut [i8; BLOCK]) {
    let mut lanes = [0f32; 8];
    for chunk in xs.chunks_exact(lanes.len()) {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(x.abs());
        }
    }
    let amax = lanes.iter().fold(0f32, |a, &lane| a.max(lane));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    *scale = half::f16::from_f32(d).to_f32();
    for (dst, &x) in q.iter_mut().zip(xs) {
        *dst = rounded_to_i8(x * id);
    }
}

/// Activation rows per work item: they stay in L1 while the item's weight rows stream past.
const ROW_GROUP: usize = 16;
/// Weight rows per work item.
const COL_BLOCK: usize = 64;

/// `dst[r * w.rows + c]` = row `r` of `a` · row `c` of `w`, for every activation row `r` and
/// weight row `c`, using `isa`.
pub fn matmul(isa: Isa, w: &Q8Rows, a: &Q8Rows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
    if w.blocks_per_row != a.blocks_per_row
        || w.scales.len() != w.rows * w.blocks_per_row
        || w.values.len() != w.scales.len()
        || a.scales.len() != a.rows * a.blocks_per_row
        || a.values.len() != a.scales.len()
        || dst.len() != a.rows * w.rows
    {
        return Err(format!(
            "Q8_0 matmul: {}×{} weights, {}×{} activations, {} outputs",
            w.rows,
            w.blocks_per_row * BLOCK,
            a.rows,
            a.blocks_per_row * BLOCK,
            dst.len()
        ));
    }
    if !isa.supported() {
        return Err(format!("Q8_0 matmul: this CPU cannot run the {isa} path"));
    }
    let n = w.rows;
    let out = SharedOut(dst.as_mut_ptr());
    // Prompts: panels of weight rows laid out in registers once per block for up to 64
    // activation rows (as in `k_quants`); on VNNI with each activation block's byte sum for
    // the offset that makes the weights unsigned.
    let panel_width = panel_width(isa);
    let panels = panel_width > 0 && a.rows >= PANEL_MIN_ROWS;
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    let activation_sums: Vec<i32> = if panels && isa != Isa::Avx2 {
        a.values.iter().map(|v| v.iter().map(|x| i32::from(*x)).sum()).collect()
    } else {
        Vec::new()
    };
    let (group_rows, block_cols) = if panels { (PANEL_ROWS, panel_width) } else { (ROW_GROUP, COL_BLOCK) };
    crate::for_each_output_tile(parallel, a.rows, n, group_rows, block_cols, &|rows, cols| {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
        let full_panel = panels && cols.len() == panel_width;
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU supports `isa` (checked above); the shapes were checked above,
            // so every index the tile reads is in bounds and every cell it writes is inside
            // `dst`; `activation_sums` has one sum per activation block where `full_panel`;
            // work items cover disjoint (row, column) cells, so no two threads write the
            // same cell.
            Isa::Avx2 | Isa::AvxVnni | Isa::Avx512Vnni => unsafe {
                x86::tile(isa, full_panel, w, a, &activation_sums, rows, cols, out.ptr(), n)
            },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: as for x86 above.
            Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => unsafe { neon::tile(isa, w, a, rows, cols, out.ptr(), n) },
            // SAFETY: `store` gets cells `r * n + c` of the item's own rows and columns,
            // inside `dst` (shapes checked above) and written by no other work item.
            _ => scalar::tile(w, a, rows, cols, &mut |i, v| unsafe { *out.ptr().add(i) = v }),
        }
    });
    Ok(())
}

/// Activation rows from which products use panels.
const PANEL_MIN_ROWS: usize = 8;

/// Weight rows per panel on `isa` (one 32-bit lane each in a vector register), 0 where the
/// path has no panels.
fn panel_width(isa: Isa) -> usize {
    match isa {
        Isa::Avx512Vnni => 16,
        Isa::AvxVnni | Isa::Avx2 => 8,
        Isa::Scalar | Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => 0,
    }
}
/// Activation rows per panel work item.
const PANEL_ROWS: usize = 64;

#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{paths_under_test, pseudo_random_bits, serial};

    /// The plain definition: per block, exact integer dot product times both scales, summed
    /// in f64 (so the tolerance below is the kernel's float rounding only).
    fn reference(w: &Q8Rows, a: &Q8Rows) -> Vec<f64> {
        let nb = w.blocks_per_row;
        let mut out = vec![0.0; a.rows * w.rows];
        for r in 0..a.rows {
            for c in 0..w.rows {
                out[r * w.rows + c] = (0..nb)
                    .map(|b| {
                        let (x, y) = (&a.values[r * nb + b], &w.values[c * nb + b]);
                        let dot: i32 = x.iter().zip(y).map(|(p, q)| i32::from(*p) * i32::from(*q)).sum();
                        f64::from(dot) * f64::from(a.scales[r * nb + b]) * f64::from(w.scales[c * nb + b])
                    })
                    .sum();
            }
        }
        out
    }

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        pseudo_random_bits(n, seed).into_iter().map(|b| b as f32 / (1u32 << 24) as f32 * 2.0 - 1.0).collect()
    }

    /// The quantizer in its running form, as candle's `BlockQ8_0::from_float` writes it.
    fn quantize_running(xs: &[f32]) -> (f32, [i8; BLOCK]) {
        let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut v = [0i8; BLOCK];
        for (dst, &x) in v.iter_mut().zip(xs) {
            *dst = f32::round(x * id) as i8;
        }
        (half::f16::from_f32(d).to_f32(), v)
    }

    /// The vectorized, parallel quantizer gives the running form's bits: random blocks of
    /// several magnitudes, values exactly half-way between two steps, zeros, a lone NaN or
    /// infinity, the largest and smallest floats, and blocks split over several work items.
    #[test]
    fn quantize_gives_the_running_forms_bits() {
        let mut blocks: Vec<Vec<f32>> = (0..40u32).map(|b| pseudo_random(BLOCK, 100 + b).iter().map(|v| v * 10f32.powi(b as i32 % 9 - 4)).collect()).collect();
        let mut halves: Vec<f32> = (0..BLOCK).map(|i| (i as f32 - 16.0) + 0.5).collect();
        halves[0] = 127.0;
        blocks.push(halves);
        blocks.push(vec![0.0; BLOCK]);
        for special in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN_POSITIVE, -0.0] {
            let mut b = pseudo_random(BLOCK, 7);
            b[5] = special;
            blocks.push(b);
        }
        let x: Vec<f32> = blocks.concat();
        let width = 3 * BLOCK;
        let rows = x.len() / width;
        let x = &x[..rows * width];
        let parallel = |n: usize, f: &(dyn Fn(Range<usize>) + Sync)| {
            for start in (0..n).step_by(5) {
                f(start..n.min(start + 5));
            }
        };
        // Below the threshold the blocks are quantized in one pass; repeated past it, in parts.
        let many: Vec<f32> = x.iter().copied().cycle().take(rows * width * (PARALLEL_BLOCKS / (rows * 3) + 1)).collect();
        for x in [x, &many[..]] {
            let rows = x.len() / width;
            let q = Q8Rows::quantize(x, rows, width, &parallel).unwrap();
            for (i, xs) in x.chunks_exact(BLOCK).enumerate() {
                let (scale, values) = quantize_running(xs);
                assert_eq!(q.scales[i].to_bits(), scale.to_bits(), "block {i} of {}: scale", q.scales.len());
                assert_eq!(q.values[i], values, "block {i} of {}: values", q.scales.len());
            }
        }
        assert!(Q8Rows::quantize(&x[..BLOCK], 1, BLOCK + 1, &serial).is_none());
    }

    #[test]
    fn every_path_matches_the_definition_and_the_scalar_path_on_every_tile_shape() {
        let width = 96;
        // 23 weight rows and 7 activation rows: full tiles and every kind of remainder.
        let w = Q8Rows::quantize(&pseudo_random(23 * width, 1), 23, width, &serial).unwrap();
        let paths = paths_under_test("q8_0");
        // 1 and 7 rows: tiles; 70: panels (one of 16 or two of 8 weight rows, 7 left for the
        // tiles) in two groups, with full groups of 4 rows and a remainder.
        for m in [1, 7, 70] {
            let a = Q8Rows::quantize(&pseudo_random(m * width, 2), m, width, &serial).unwrap();
            let expected = reference(&w, &a);
            let mut scalar = vec![f32::NAN; m * w.rows];
            matmul(Isa::Scalar, &w, &a, &mut scalar, &serial).unwrap();
            for &isa in &paths {
                let mut dst = vec![f32::NAN; m * w.rows];
                matmul(isa, &w, &a, &mut dst, &serial).unwrap();
                for ((got, want), reference) in dst.iter().zip(&expected).zip(&scalar) {
                    let tolerance = 1e-5 * want.abs().max(1.0);
                    assert!((f64::from(*got) - want).abs() < tolerance, "{isa} m={m}: {got} vs definition {want}");
                    assert!(f64::from(got - reference).abs() < tolerance, "{isa} m={m}: {got} vs scalar {reference}");
                }
            }
        }
    }

    /// The tiles of one family of paths add the same products in the same order (on x86 as
    /// candle's AVX2 kernel does), so they give the same bits. (i8mm sums whole blocks in one
    /// lane: to rounding only, checked above.)
    #[test]
    fn simd_tiles_of_one_family_give_the_same_bits() {
        let width = 576;
        let w = Q8Rows::quantize(&pseudo_random(40 * width, 3), 40, width, &serial).unwrap();
        // Fewer rows than panels take: panels sum each output in another order.
        let a = Q8Rows::quantize(&pseudo_random(7 * width, 4), 7, width, &serial).unwrap();
        let supported = paths_under_test("q8_0 tiles");
        for family in [&[Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni][..], &[Isa::Neon, Isa::NeonDotprod]] {
            let paths: Vec<Isa> = family.iter().copied().filter(|isa| supported.contains(isa)).collect();
            let results: Vec<Vec<u32>> = paths
                .iter()
                .map(|isa| {
                    let mut x = vec![0.0; 7 * 40];
                    matmul(*isa, &w, &a, &mut x, &serial).unwrap();
                    x.iter().map(|v| v.to_bits()).collect()
                })
                .collect();
            for (isa, bits) in paths.iter().zip(&results) {
                assert_eq!(bits, &results[0], "{isa} against {}", paths[0]);
            }
        }
    }

    #[test]
    fn ggml_bytes_and_shapes_are_checked() {
        let mut bytes = vec![0u8; 2 * 34];
        bytes[0..2].copy_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
        bytes[2] = (-3i8) as u8;
        let rows = Q8Rows::from_ggml_bytes(&bytes, 2, 32).unwrap();
        assert_eq!((rows.scales[0], rows.values[0][0]), (0.5, -3));
        assert!(Q8Rows::from_ggml_bytes(&bytes, 3, 32).is_none());
        assert!(Q8Rows::from_ggml_bytes(&bytes, 1, 48).is_none());
        let a = Q8Rows::quantize(&[0.0; 64], 1, 64, &serial).unwrap();
        assert!(a.values.iter().all(|v| v.iter().all(|x| *x == 0)) && a.scales.iter().all(|s| *s == 0.0));
        for isa in Isa::all_supported() {
            assert!(matmul(isa, &rows, &a, &mut [0.0; 2], &serial).is_err(), "{isa}: widths 32 and 64 differ");
        }
        for isa in Isa::ALL.into_iter().filter(|isa| !isa.supported()) {
            let (w, a) = (Q8Rows::quantize(&[0.0; 32], 1, 32, &serial).unwrap(), Q8Rows::quantize(&[0.0; 32], 1, 32, &serial).unwrap());
            assert!(matmul(isa, &w, &a, &mut [0.0; 1], &serial).is_err(), "{isa} is not on this CPU");
        }
    }

    /// Rows read in pieces (more blocks than one piece holds, the last piece short) equal the
    /// rows made from the bytes whole; a reader's error stops the read and comes back.
    #[test]
    fn rows_read_in_pieces_equal_rows_read_whole() {
        let (rows, width) = (130, 1024); // 4,160 blocks: one whole piece of 4,096 and 64 more
        let mut bytes: Vec<u8> = (0..rows * width / BLOCK * GGML_BLOCK_BYTES).map(|i| (i * 7919 % 251) as u8).collect();
        for (i, block) in bytes.chunks_exact_mut(GGML_BLOCK_BYTES).enumerate() {
            block[..2].copy_from_slice(&half::f16::from_f32(i as f32 / 64.0 - 30.0).to_le_bytes()); // no NaN scales
        }
        let whole = Q8Rows::from_ggml_bytes(&bytes, rows, width).unwrap();
        let mut at = 0;
        let mut pieces = 0;
        let read = Q8Rows::read_ggml(rows, width, |buf: &mut [u8]| {
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            at += buf.len();
            pieces += 1;
            Ok::<(), ()>(())
        });
        assert!(read == Ok(Some(whole)), "rows read in pieces differ"); // not assert_eq: 4,160 blocks
        assert_eq!((at, pieces), (bytes.len(), 2));
        assert_eq!(Q8Rows::read_ggml(rows, 48, |_| Ok::<(), ()>(())), Ok(None), "48 is not whole blocks");
        assert_eq!(Q8Rows::read_ggml(usize::MAX, 64, |_| Ok::<(), ()>(())), Ok(None), "the size overflows");
        assert_eq!(Q8Rows::read_ggml(rows, width, |_| Err("short file")), Err("short file"));
    }
}
