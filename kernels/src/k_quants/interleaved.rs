//! Q4_K and Q6_K weights stored 16 rows interleaved, for the x86 paths (AVX-512, AVX2).
//!
//! Read in the file's layout, a decoded token's product unpacks each weight row's super-blocks
//! alone: scales bit by bit, values into registers, a horizontal sum per output. On an AMD
//! Zen 4 that held one core to ~15 GB/s of weights where llama.cpp, which repacks Q4_K rows
//! in eights at load, streamed ~20 (docs/runtime.md). Here each super-block of 16 rows is one
//! record in which every field's words (2 bytes for the f16 scales, 4 for the rest) of the 16
//! rows sit side by side, so one 64-byte load gives a word of all 16 rows, one lane each: the
//! panel layout the prompt product builds at run time (`avx512::panel_q4k`) comes from plain
//! loads, the scales are unpacked with the same bit operations for 16 rows at once, and
//! every product, decode or prompt, runs on panels. A record holds the same bytes as the 16
//! blocks it replaces, so memory does not grow.
//!
//! Record of super-block `b` of rows `16P .. 16P + 16`, at `(P · blocks_per_row + b)` records:
//! the words of [`record_words`] one after another, each for rows 0..16 side by side. Rows
//! past the last whole 16 stay in the file's layout after the records, for the row-at-a-time
//! kernel.

use super::{Q8KRows, WeightType, QK_K};
use crate::isa::Isa;
use crate::Parallel;

/// Weight rows per record: one 32-bit lane each in a 512-bit register.
pub(super) const ROWS: usize = 16;

/// The words of a block in record order, as (offset in the file's block, size): in the order
/// `avx512` reads them, so that a record streams from memory front to back (a Q6_K record read
/// field by field, low bits and high bits from two places at once, streamed at half the speed
/// on an AMD Zen 4). Q4_K: d, dmin, the 3 words of packed scales and mins, the 32 words of
/// values. Q6_K: d, the 4 words of scales, then for each half `h` and word `k` of its 8: word
/// `k` of the low bits of values 128h .. and of 128h + 32 .., and word `k` of the high bits.
fn record_words(ty: WeightType) -> Vec<(usize, usize)> {
    match ty {
        WeightType::Q4K => [(0, 2), (2, 2)].into_iter().chain((0..3).map(|j| (4 + 4 * j, 4))).chain((0..32).map(|t| (16 + 4 * t, 4))).collect(),
        WeightType::Q6K => std::iter::once((208, 2))
            .chain((0..4).map(|j| (192 + 4 * j, 4)))
            .chain((0..2).flat_map(|h| (0..8).flat_map(move |k| [(64 * h + 4 * k, 4), (64 * h + 32 + 4 * k, 4), (128 + 32 * h + 4 * k, 4)])))
            .collect(),
    }
}

/// Where fields start in a record (`record_words` in bytes, times 16 rows). Q4_K: d at 0.
pub(super) const Q4K_DMIN: usize = 32;
pub(super) const Q4K_SCALES: usize = 64;
pub(super) const Q4K_VALUES: usize = Q4K_SCALES + 3 * 64;
/// Q6_K: d at 0; the values' words three at a time (`record_words`).
pub(super) const Q6K_SCALES: usize = 32;
pub(super) const Q6K_VALUES: usize = Q6K_SCALES + 4 * 64;

/// Bytes per record of `ty`: 16 of its blocks.
pub(super) const fn record_bytes(ty: WeightType) -> usize {
    ROWS * ty.block_bytes()
}

/// A Q4_K or Q6_K matrix of `rows` rows of `blocks_per_row` super-blocks, interleaved as above.
#[derive(Debug, Clone)]
pub struct InterleavedKQuant {
    pub ty: WeightType,
    pub rows: usize,
    pub blocks_per_row: usize,
    // Read by the x86 kernels only; elsewhere `matmul` refuses every path.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    bytes: Vec<u8>,
}

impl InterleavedKQuant {
    /// The matrix whose rows `w` holds in the file's layout, records laid out through
    /// `parallel`; None when the sizes disagree.
    pub fn from_file_bytes(ty: WeightType, w: &[u8], rows: usize, blocks_per_row: usize, parallel: Parallel) -> Option<Self> {
        let block = ty.block_bytes();
        let row_bytes = blocks_per_row.checked_mul(block)?;
        if rows.checked_mul(row_bytes)? != w.len() {
            return None;
        }
        let whole = rows / ROWS * ROWS;
        let words = record_words(ty);
        let mut bytes = vec![0; w.len()];
        bytes[whole * row_bytes..].copy_from_slice(&w[whole * row_bytes..]);
        let records = crate::SharedOut(bytes.as_mut_ptr());
        parallel(whole / ROWS * blocks_per_row, &|items| {
            for index in items {
                // SAFETY: `index` is below the number of records, each `record_bytes(ty)` long
                // inside `bytes`; each record is written by exactly one work item.
                let record = unsafe { std::slice::from_raw_parts_mut(records.ptr().add(index * record_bytes(ty)), record_bytes(ty)) };
                let (first, b) = (index / blocks_per_row * ROWS, index % blocks_per_row);
                let mut at = 0;
                for &(offset, size) in &words {
                    for i in 0..ROWS {
                        let src = (first + i) * row_bytes + b * block + offset;
                        record[at + i * size..][..size].copy_from_slice(&w[src..src + size]);
                    }
                    at += ROWS * size;
                }
            }
        });
        Some(Self { ty, rows, blocks_per_row, bytes })
    }

    /// `dst[r * rows + c]` = row `r` of `a` · weight row `c`, as `k_quants::matmul` with
    /// panels gives on `isa` (to the bit on rows in whole records, for any number of
    /// activation rows); `isa` must be one of the x86 paths (AVX-512 VNNI, AVX-VNNI, AVX2).
    pub fn matmul(&self, isa: Isa, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
        let (rows, nb) = (self.rows, self.blocks_per_row);
        if a.blocks_per_row != nb || !a.is_whole() || dst.len() != a.rows * rows {
            return Err(format!(
                "interleaved {:?} matmul: {rows}×{} weights, {}×{} activations, {} outputs",
                self.ty,
                nb * QK_K,
                a.rows,
                a.blocks_per_row * QK_K,
                dst.len()
            ));
        }
        if !Self::runs_on(isa) || !isa.supported() {
            return Err(format!("interleaved {:?} matmul: runs on the x86 paths, not {isa} (or not on this CPU)", self.ty));
        }
        // Only x86-64 CPUs report these paths as supported.
        #[cfg(target_arch = "x86_64")]
        self.run(isa, a, dst, parallel);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = parallel;
        Ok(())
    }

    /// Whether `isa` has kernels for this layout.
    pub fn runs_on(isa: Isa) -> bool {
        matches!(isa, Isa::Avx512Vnni | Isa::AvxVnni | Isa::Avx2)
    }

    /// Whether a `rows`×`width` matrix gains from this layout on `isa`: kernels for it, at
    /// least one whole record of rows, and whole super-blocks per row.
    pub fn suits(isa: Isa, rows: usize, width: usize) -> bool {
        Self::runs_on(isa) && rows >= ROWS && width.is_multiple_of(QK_K)
    }

    #[cfg(target_arch = "x86_64")]
    fn run(&self, isa: Isa, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) {
        let (ty, rows, nb) = (self.ty, self.rows, self.blocks_per_row);
        let whole = rows / ROWS * ROWS;
        let (records, tail) = self.bytes.split_at(whole * nb * ty.block_bytes());
        let out = crate::SharedOut(dst.as_mut_ptr());
        // Prompts in groups of panel rows; a few rows (decode) in one group.
        let group_rows = if a.rows >= super::PANEL_MIN_ROWS { super::PANEL_ROWS } else { super::PANEL_MIN_ROWS };
        crate::for_each_output_tile(parallel, a.rows, rows, group_rows, ROWS, &|r, c| {
            if c.start < whole {
                // SAFETY: checked in `matmul`: the CPU runs `isa` (an x86 path), `a` has `nb`
                // blocks a row and `dst` a.rows × rows cells; records `c.start / 16 · nb ..` exist as
                // `c` lies inside the whole records; work items cover disjoint cells.
                unsafe {
                    match isa {
                        Isa::Avx512Vnni => super::avx512::interleaved_tile(ty, records.as_ptr(), a, r, c.start, out.ptr(), rows),
                        _ => super::avx2::interleaved_tile(isa, ty, records.as_ptr(), a, r, c.start, out.ptr(), rows),
                    }
                }
            } else {
                // SAFETY: as above; the tail holds rows `whole ..` in the file's layout, and the
                // output pointer moved by `whole` keeps cell `r * rows + whole + c` in `dst`.
                let (tail, cols, out) = (tail.as_ptr(), c.start - whole..c.end - whole, unsafe { out.ptr().add(whole) });
                unsafe {
                    match isa {
                        Isa::Avx512Vnni => super::avx512::tile(ty, tail, a, r, cols, out, rows),
                        _ => super::avx2::tile(isa, false, ty, tail, a, r, cols, out, rows),
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The field offsets the kernels read at are where `record_words` puts the fields.
    #[test]
    fn field_offsets_follow_the_record_words() {
        let start_of = |ty: WeightType, offset: usize| -> usize {
            let words = record_words(ty);
            let index = words.iter().position(|&(at, _)| at == offset).expect("a word starts there");
            words[..index].iter().map(|&(_, size)| ROWS * size).sum()
        };
        assert_eq!(start_of(WeightType::Q4K, 2), Q4K_DMIN);
        assert_eq!(start_of(WeightType::Q4K, 4), Q4K_SCALES);
        assert_eq!(start_of(WeightType::Q4K, 16), Q4K_VALUES);
        assert_eq!(start_of(WeightType::Q6K, 192), Q6K_SCALES);
        assert_eq!(start_of(WeightType::Q6K, 0), Q6K_VALUES);
        for ty in [WeightType::Q4K, WeightType::Q6K] {
            let mut covered: Vec<usize> = record_words(ty).iter().flat_map(|&(at, size)| at..at + size).collect();
            covered.sort_unstable();
            assert_eq!(covered, (0..ty.block_bytes()).collect::<Vec<_>>(), "{ty:?}: every byte once");
            assert_eq!(record_words(ty).iter().map(|&(_, size)| ROWS * size).sum::<usize>(), record_bytes(ty));
        }
    }
}
