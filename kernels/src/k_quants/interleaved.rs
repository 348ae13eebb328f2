//! Q4_K weights stored 16 rows interleaved, for the AVX-512 path's decode.
//!
//! Read in the file's layout, a decoded token's product unpacks each weight row's super-blocks
//! alone: scales and mins bit by bit, values into registers, a horizontal sum per output. On
//! an AMD Zen 4 that held one core to ~15 GB/s of weights where llama.cpp, which repacks Q4_K
//! rows in eights at load, streamed ~20 (docs/runtime.md). Here each super-block of 16 rows is
//! one record, each 32-bit word of a row beside the same word of the other 15 rows, so one
//! 64-byte load gives a word of all 16 rows, one lane each: the panel layout the prompt
//! product builds at run time (`avx512::panel_q4k`) comes from plain loads, the 6-bit scales
//! and mins are unpacked with the same bit operations for 16 rows at once, and every product,
//! decode or prompt, runs on panels. A record holds the same bytes as the 16 blocks it
//! replaces (2,304), so memory does not grow.
//!
//! Record of super-block `b` of rows `16P .. 16P + 16` (at `(P · blocks_per_row + b) · 2304`):
//! the 16 rows' f16 `d`, then their f16 `dmin`, then the 3 words of packed scales and mins
//! (word `j` of row `i` at `64 + 64j + 4i`), then the 32 words of values (word `t` of row `i`
//! at `256 + 64t + 4i`). Rows past the last whole 16 stay in the file's layout after the
//! records, for the row-at-a-time kernel.

use super::{Q8KRows, WeightType, QK_K};
use crate::isa::Isa;
use crate::{Parallel, SharedOut};

/// Weight rows per record: one 32-bit lane each in a 512-bit register.
pub(super) const ROWS: usize = 16;
/// Bytes per record: 16 Q4_K blocks of 144.
pub(super) const RECORD: usize = ROWS * 144;

/// A Q4_K matrix of `rows` rows of `blocks_per_row` super-blocks, interleaved as above.
#[derive(Debug, Clone)]
pub struct InterleavedQ4K {
    pub rows: usize,
    pub blocks_per_row: usize,
    bytes: Vec<u8>,
}

impl InterleavedQ4K {
    /// The matrix whose rows `w` holds in the file's layout; None when the sizes disagree.
    pub fn from_file_bytes(w: &[u8], rows: usize, blocks_per_row: usize) -> Option<Self> {
        let block = WeightType::Q4K.block_bytes();
        let row_bytes = blocks_per_row.checked_mul(block)?;
        if rows.checked_mul(row_bytes)? != w.len() {
            return None;
        }
        let whole = rows / ROWS * ROWS;
        let mut bytes = Vec::with_capacity(w.len());
        for first in (0..whole).step_by(ROWS) {
            for b in 0..blocks_per_row {
                let start = bytes.len();
                bytes.resize(start + RECORD, 0);
                let record = &mut bytes[start..];
                for i in 0..ROWS {
                    let src = &w[(first + i) * row_bytes + b * block..][..block];
                    record[2 * i..2 * i + 2].copy_from_slice(&src[0..2]);
                    record[32 + 2 * i..32 + 2 * i + 2].copy_from_slice(&src[2..4]);
                    for j in 0..3 {
                        record[64 + 64 * j + 4 * i..][..4].copy_from_slice(&src[4 + 4 * j..8 + 4 * j]);
                    }
                    for t in 0..32 {
                        record[256 + 64 * t + 4 * i..][..4].copy_from_slice(&src[16 + 4 * t..20 + 4 * t]);
                    }
                }
            }
        }
        bytes.extend_from_slice(&w[whole * row_bytes..]);
        Some(Self { rows, blocks_per_row, bytes })
    }

    /// `dst[r * rows + c]` = row `r` of `a` · weight row `c`, as `k_quants::matmul` with
    /// panels gives (to the bit on rows in whole records, for any number of activation rows);
    /// `isa` must be AVX-512 VNNI, the only path with this layout.
    pub fn matmul(&self, isa: Isa, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) -> Result<(), String> {
        let (rows, nb) = (self.rows, self.blocks_per_row);
        let blocks = a.rows * nb;
        if a.blocks_per_row != nb
            || a.scales.len() != blocks
            || a.values.len() != blocks
            || a.sums.len() != blocks
            || a.int_sums.len() != blocks
            || dst.len() != a.rows * rows
        {
            return Err(format!("interleaved Q4K matmul: {rows}×{} weights, {}×{} activations, {} outputs", nb * QK_K, a.rows, a.blocks_per_row * QK_K, dst.len()));
        }
        if isa != Isa::Avx512Vnni || !isa.supported() {
            return Err(format!("interleaved Q4K matmul: runs on the avx512 path only, not {isa}"));
        }
        // Only x86-64 CPUs report AVX-512 as supported.
        #[cfg(target_arch = "x86_64")]
        self.run(a, dst, parallel);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = parallel;
        Ok(())
    }

    #[cfg(target_arch = "x86_64")]
    fn run(&self, a: &Q8KRows, dst: &mut [f32], parallel: Parallel) {
        let (rows, nb) = (self.rows, self.blocks_per_row);
        let whole = rows / ROWS * ROWS;
        let (records, tail) = self.bytes.split_at(whole * nb * WeightType::Q4K.block_bytes());
        let out = SharedOut(dst.as_mut_ptr());
        let group_rows = if a.rows >= super::PANEL_MIN_ROWS { super::PANEL_ROWS } else { a.rows };
        crate::for_each_output_tile(parallel, a.rows, rows, group_rows, ROWS, &|r, c| {
            if c.start < whole {
                // SAFETY: checked in `matmul`: the CPU runs AVX-512 VNNI, `a` has `nb` blocks a
                // row and `dst` a.rows × rows cells; records `c.start / 16 · nb ..` exist as
                // `c` lies inside the whole records; work items cover disjoint cells.
                unsafe { super::avx512::interleaved_tile(records.as_ptr(), nb, a, r, c.start, out.ptr(), rows) }
            } else {
                // SAFETY: as above; the tail holds rows `whole ..` in the file's layout, and the
                // output pointer moved by `whole` keeps cell `r * rows + whole + c` in `dst`.
                unsafe { super::avx512::tile(WeightType::Q4K, tail.as_ptr(), a, r, c.start - whole..c.end - whole, out.ptr().add(whole), rows) }
            }
        });
    }
}
