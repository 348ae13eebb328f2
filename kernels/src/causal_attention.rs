//! Causal attention over a KV cache in one pass per query row: scores, softmax and the
//! weighted sum of values, for the prompt and for one token alike.
//!
//! Why: done as tensor operations (a product of the queries by every key, a mask added, a
//! softmax, a product by the values) each query row is scored against every cached position,
//! the half past its own position only to be masked to zero; the scores are written, read and
//! written again as an f32 matrix (12 MiB a layer for the 1.5B model's 512-token prompt); the
//! softmax's `exp` runs one value at a time through libm; and each step is a hand-off to the
//! thread pool. Here each row reads only the keys it sees, keeps its scores in a small buffer,
//! takes `exp` in a form the compiler vectorises, and writes its result straight in the layout
//! the output projection reads (positions × heads · head width), so no transpose copy follows.
//!
//! A prompt's rows score 16 keys at a time from a transposed copy of the keys in blocks (so no
//! sum across lanes per score), all 16 rows of a work item against one block before the next,
//! and take their weighted sums of the values a run of positions at a time likewise, so what
//! they share is read from the L1 cache; one token's row takes dot products with the cache as
//! it is. On AVX-512, AVX2 and NEON the scores, and on AVX-512 and AVX2 the weighted sums, are written
//! with intrinsics (sums held in registers): written as plain loops the compiler vectorised
//! them across the wrong dimension or left the sums in memory, which measured slower than
//! candle's product (docs/runtime.md). Every path runs the
//! same fused products in the same order, so the paths give the same bits (tested); the numbers
//! differ from the tensor operations' by rounding (another `exp`, the scale applied to the score
//! rather than the query, another order of sums).

use crate::exp::exp_of_non_positive;
use crate::isa::Isa;
use crate::{Parallel, SharedOut};
use std::ops::Range;

/// Lanes the sums are kept in: one AVX-512 register, two AVX2 ones.
const LANES: usize = 16;
/// Query rows per work item: enough to amortise a hand-off, few enough to balance the threads.
const ROWS_PER_ITEM: usize = 16;
/// Bytes of values read for all the rows of an item before moving on: with the rows' sums
/// (16 KiB at head width 256), what the L1 cache holds.
const VALUE_RUN_BYTES: usize = 8 * 1024;

/// The sizes of one attention step.
#[derive(Debug, Clone, Copy)]
pub struct AttentionShape {
    /// Query heads; `query_heads / kv_heads` consecutive query heads share one KV head.
    pub query_heads: usize,
    pub kv_heads: usize,
    /// New positions (query rows per head).
    pub seq: usize,
    /// Positions already in the cache before them; the keys and values hold `past + seq` rows.
    pub past: usize,
    pub head_dim: usize,
    /// Sliding window: a query sees only the last `window` positions up to its own.
    pub window: Option<usize>,
    /// Factor of every score (1/√head_dim, or the model's own).
    pub scale: f32,
}

/// Rows of `head_dim` values per head inside a larger buffer: row `r` of head `h` starts at
/// `offset + h * head_stride + r * row_stride` (a KV cache's view of its first positions, or a
/// contiguous `[heads, rows, head_dim]` tensor).
#[derive(Debug, Clone, Copy)]
pub struct HeadRows<'a> {
    pub values: &'a [f32],
    pub offset: usize,
    pub head_stride: usize,
    pub row_stride: usize,
}

impl HeadRows<'_> {
    /// Whether `heads` heads of `rows` rows of `width` values lie inside `values`.
    fn holds(&self, heads: usize, rows: usize, width: usize) -> bool {
        if heads == 0 || rows == 0 {
            return true;
        }
        let last = (heads - 1)
            .checked_mul(self.head_stride)
            .and_then(|h| (rows - 1).checked_mul(self.row_stride).and_then(|r| h.checked_add(r)))
            .and_then(|start| start.checked_add(self.offset)?.checked_add(width));
        last.is_some_and(|end| end <= self.values.len())
    }

    fn row(&self, head: usize, row: usize, width: usize) -> &[f32] {
        let start = self.offset + head * self.head_stride + row * self.row_stride;
        &self.values[start..start + width]
    }
}

/// softmax(scale · q kᵀ, causal and windowed) · v for every query head and row, written to
/// `out` as `[seq, query_heads · head_dim]` (row `i`'s head `h` at `i * query_heads * head_dim +
/// h * head_dim`). `q` holds `query_heads` heads of `seq` rows; `k` and `v` hold `kv_heads` heads
/// of `past + seq` rows. Query row `i` sits at position `past + i` and sees the keys up to it
/// (and no further back than the window). Work items (16 rows of one head) go to `parallel`. An
/// error names the sizes when a buffer does not hold its part.
pub fn attention(
    isa: Isa,
    q: HeadRows,
    k: HeadRows,
    v: HeadRows,
    shape: AttentionShape,
    out: &mut [f32],
    parallel: Parallel,
) -> Result<(), String> {
    let AttentionShape { query_heads, kv_heads, seq, past, head_dim, window, .. } = shape;
    if kv_heads == 0 || query_heads % kv_heads != 0 || head_dim == 0 || window == Some(0) {
        return Err(format!(
            "attention: {query_heads} query heads do not share {kv_heads} KV heads evenly, or head width {head_dim} / window {window:?} is 0"
        ));
    }
    let positions = past.checked_add(seq).ok_or("attention: positions overflow")?;
    let out_len = seq.checked_mul(query_heads).and_then(|n| n.checked_mul(head_dim));
    if !q.holds(query_heads, seq, head_dim)
        || !k.holds(kv_heads, positions, head_dim)
        || !v.holds(kv_heads, positions, head_dim)
        || out_len != Some(out.len())
    {
        return Err(format!(
            "attention: buffers of {} query, {} key, {} value and {} output values do not hold {query_heads} query heads × {seq} rows, {kv_heads} KV heads × {positions} positions, head width {head_dim}",
            q.values.len(),
            k.values.len(),
            v.values.len(),
            out.len()
        ));
    }
    // A prompt's rows score the keys from a transposed copy in blocks of 16 keys (per block,
    // one row of 16 keys per dimension, contiguous; the last block padded with zeros), so 16
    // scores take no sum across lanes and a block (16 KiB at head width 256) stays in the L1
    // cache while every row of a work item is scored against it. Read from one matrix of
    // positions, the rows of a block were a power-of-two stride apart and fell into a few
    // cache sets, so every row re-read its keys from L2. One token's row reads the cache as it
    // is, since copying it would cost more than the scores.
    let key_blocks = positions.div_ceil(LANES);
    let keys_by_block = (seq >= ROWS_PER_ITEM).then(|| {
        let mut t = vec![0f32; kv_heads * key_blocks * head_dim * LANES];
        for g in 0..kv_heads {
            for j in 0..positions {
                let block = &mut t[(g * key_blocks + j / LANES) * head_dim * LANES..][..head_dim * LANES];
                for (d, &value) in k.row(g, j, head_dim).iter().enumerate() {
                    block[d * LANES + j % LANES] = value;
                }
            }
        }
        t
    });
    let keys_by_block = keys_by_block.as_deref();
    let dst = SharedOut(out.as_mut_ptr());
    let blocks = seq.div_ceil(ROWS_PER_ITEM);
    // A row of scores per query row of an item, padded to whole key blocks.
    let score_row = key_blocks * LANES;
    parallel(query_heads * blocks, &|items: Range<usize>| {
        // One buffer of scores and one of sums per work range, reused by its items.
        let mut scores = vec![0f32; seq.min(ROWS_PER_ITEM) * score_row];
        let mut sums = vec![0f32; seq.min(ROWS_PER_ITEM) * head_dim];
        for item in items {
            let (head, block) = (item / blocks, item % blocks);
            let rows = block * ROWS_PER_ITEM..seq.min((block + 1) * ROWS_PER_ITEM);
            let job = HeadJob { q, k, v, keys_by_block, score_row, shape, head, rows, dst };
            match isa {
                // SAFETY: each path runs only where `Isa::supported` found its instructions
                // (the caller's isa comes from there).
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512Vnni => unsafe { x86::head_rows_avx512(&job, &mut scores, &mut sums) },
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 | Isa::AvxVnni => unsafe { x86::head_rows_avx2(&job, &mut scores, &mut sums) },
                #[cfg(target_arch = "aarch64")]
                Isa::Neon | Isa::NeonDotprod | Isa::NeonI8mm => head_rows::<{ path::NEON }>(&job, &mut scores, &mut sums),
                _ => head_rows::<{ path::PORTABLE }>(&job, &mut scores, &mut sums),
            }
        }
    });
    Ok(())
}

/// Which instructions an item's scores and weighted sums are written with (the const
/// parameter of [`head_rows`], so each path's copy is compiled for its own instructions).
mod path {
    pub const PORTABLE: u8 = 0;
    #[cfg(target_arch = "x86_64")]
    pub const AVX2: u8 = 1;
    #[cfg(target_arch = "x86_64")]
    pub const AVX512: u8 = 2;
    #[cfg(target_arch = "aarch64")]
    pub const NEON: u8 = 3;
}

/// One work item: `rows` of query head `head`.
struct HeadJob<'a> {
    q: HeadRows<'a>,
    k: HeadRows<'a>,
    v: HeadRows<'a>,
    /// The keys transposed in blocks of 16 (`[kv_heads, key blocks, head_dim, 16]`), for a prompt.
    keys_by_block: Option<&'a [f32]>,
    /// Values per row of the scores buffer (whole key blocks).
    score_row: usize,
    shape: AttentionShape,
    head: usize,
    rows: Range<usize>,
    dst: SharedOut<f32>,
}

/// The work of one item, inlined into each path's function so the compiler vectorises it for
/// that path's instructions.
#[inline(always)]
fn head_rows<const PATH: u8>(job: &HeadJob, scores: &mut [f32], sums: &mut [f32]) {
    let AttentionShape { query_heads, kv_heads, past, head_dim, window, scale, .. } = job.shape;
    let kv_head = job.head / (query_heads / kv_heads);
    // The positions row `i` sees: from the window's start to its own.
    let seen_by = |i: usize| {
        let position = past + i;
        (window.map_or(0, |w| (position + 1).saturating_sub(w)), position)
    };
    let rows = job.rows.clone();
    // The positions any of the item's rows sees.
    let (lowest, highest) = (seen_by(rows.start).0, seen_by(rows.end - 1).1);
    // Every score of the item's rows first, one key block at a time for all the rows, so the
    // block is read from memory once per item.
    if let Some(keys) = job.keys_by_block {
        let (key_blocks, block_len) = (job.score_row / LANES, head_dim * LANES);
        for b in lowest / LANES..=highest / LANES {
            let block = &keys[(kv_head * key_blocks + b) * block_len..][..block_len];
            for (r, i) in rows.clone().enumerate() {
                let (first, position) = seen_by(i);
                if b * LANES > position || (b + 1) * LANES <= first {
                    continue;
                }
                let query = job.q.row(job.head, i, head_dim);
                let out = &mut scores[r * job.score_row + b * LANES..][..LANES];
                match PATH {
                    // SAFETY: PATH is AVX512 only in `x86::head_rows_avx512`, which runs where the
                    // CPU has AVX-512; the block holds `head_dim` rows of 16 keys.
                    #[cfg(target_arch = "x86_64")]
                    path::AVX512 => unsafe { x86::scores_avx512(query, block, out) },
                    // SAFETY: likewise `x86::head_rows_avx2`, where the CPU has AVX2 and FMA.
                    #[cfg(target_arch = "x86_64")]
                    path::AVX2 => unsafe { x86::scores_avx2(query, block, out) },
                    // SAFETY: NEON is part of every aarch64 CPU; the block as above.
                    #[cfg(target_arch = "aarch64")]
                    path::NEON => unsafe { arm::scores_neon(query, block, out) },
                    _ => scores_by_dim(query, block, out),
                }
                for o in out.iter_mut() {
                    *o *= scale;
                }
            }
        }
    }
    // Each row's softmax weights in place of its scores.
    let mut totals = [0f32; ROWS_PER_ITEM];
    for ((r, i), total) in rows.clone().enumerate().zip(totals.iter_mut()) {
        let (first, position) = seen_by(i);
        let seen = &mut scores[r * job.score_row..][first..=position];
        if job.keys_by_block.is_none() {
            let query = job.q.row(job.head, i, head_dim);
            for (j, score) in (first..=position).zip(seen.iter_mut()) {
                *score = dot(query, job.k.row(kv_head, j, head_dim)) * scale;
            }
        }
        let max = largest(seen);
        // Separate passes, none a running sum, so each vectorises.
        for score in seen.iter_mut() {
            *score = exp_of_non_positive(*score - max);
        }
        *total = sum(seen);
    }
    // The weighted sums of the values, a run of positions at a time for all the rows (as the
    // keys above): each row's sums are carried from run to run in order of position, so the
    // products are the same, in the same order, as one pass over the row's positions.
    let sums = &mut sums[..rows.len() * head_dim];
    sums.fill(0.0);
    // One row alone (a decoded token) gains nothing from runs and would pay for carrying its sums.
    let run = if rows.len() > 1 { (VALUE_RUN_BYTES / (head_dim * 4)).max(4) } else { usize::MAX };
    for from in (lowest..=highest).step_by(run) {
        let to = from.saturating_add(run).min(highest + 1);
        for ((r, i), row_sums) in rows.clone().enumerate().zip(sums.chunks_exact_mut(head_dim)) {
            let (first, position) = seen_by(i);
            let (start, end) = (from.max(first), to.min(position + 1));
            if start >= end {
                continue;
            }
            let weights = &scores[r * job.score_row..][start..end];
            // SAFETY: as above; the value rows hold `head_dim` values each (checked by `attention`).
            #[cfg(target_arch = "x86_64")]
            if PATH == path::AVX512 && unsafe { x86::weighted_sum_avx512(weights, &job.v, kv_head, start, row_sums) } {
                continue;
            }
            // SAFETY: likewise, where the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            if PATH == path::AVX2 && unsafe { x86::weighted_sum_avx2(weights, &job.v, kv_head, start, row_sums) } {
                continue;
            }
            weighted_sum(weights, &job.v, kv_head, start, row_sums);
        }
    }
    for ((i, row_sums), total) in rows.zip(sums.chunks_exact(head_dim)).zip(totals) {
        write_row(job, i, row_sums, total);
    }
}

/// Adds weights[n] · value row `first + n` to `sums`, one fused product per value, in order of n.
#[inline(always)]
fn weighted_sum(weights: &[f32], v: &HeadRows, kv_head: usize, first: usize, sums: &mut [f32]) {
    let head_dim = sums.len();
    // Four positions a pass: one load and store of the sums per four products.
    let mut groups = weights.chunks_exact(4);
    let mut j = first;
    for w in groups.by_ref() {
        let [r0, r1, r2, r3] = [0, 1, 2, 3].map(|n| v.row(kv_head, j + n, head_dim));
        let (blocks, tail) = sums.split_at_mut(head_dim - head_dim % LANES);
        fn chunks(r: &[f32]) -> std::slice::ChunksExact<'_, f32> {
            r.chunks_exact(LANES)
        }
        for ((s, (a, b)), (c, e)) in blocks.chunks_exact_mut(LANES).zip(chunks(r0).zip(chunks(r1))).zip(chunks(r2).zip(chunks(r3))) {
            for l in 0..LANES {
                let mut acc = w[0].mul_add(a[l], s[l]);
                acc = w[1].mul_add(b[l], acc);
                acc = w[2].mul_add(c[l], acc);
                s[l] = w[3].mul_add(e[l], acc);
            }
        }
        let at = head_dim - tail.len();
        for (d, s) in tail.iter_mut().enumerate() {
            let mut acc = w[0].mul_add(r0[at + d], *s);
            acc = w[1].mul_add(r1[at + d], acc);
            acc = w[2].mul_add(r2[at + d], acc);
            *s = w[3].mul_add(r3[at + d], acc);
        }
        j += 4;
    }
    for &weight in groups.remainder() {
        for (s, &value) in sums.iter_mut().zip(v.row(kv_head, j, head_dim)) {
            *s = weight.mul_add(value, *s);
        }
        j += 1;
    }
}

/// Query row `i`'s output for the item's head: the weighted sums over the weights' total.
#[inline(always)]
fn write_row(job: &HeadJob, i: usize, sums: &[f32], total: f32) {
    let AttentionShape { query_heads, head_dim, .. } = job.shape;
    // The query's own position is always seen, so the total is at least e^0 = 1.
    let inverse = 1.0 / total;
    // SAFETY: row `i`'s head `head` lies inside `out` (its size was checked) and is written
    // by this work item alone.
    let out = unsafe { std::slice::from_raw_parts_mut(job.dst.ptr().add((i * query_heads + job.head) * head_dim), head_dim) };
    for (o, &sum) in out.iter_mut().zip(sums.iter()) {
        *o = sum * inverse;
    }
}

/// The query's products with one block of 16 keys (row `d` of the block holds dimension `d` of
/// the 16 keys), written to `out[..16]`, each summed exactly as [`dot`] sums it: dimension `d`'s product goes to lane
/// `d % 16` (fused, in order of `d`), then the lanes are added pairwise. So a score has the same
/// bits whether its row was read with a prompt (here) or alone (`dot`): reading a prompt whole
/// and reading it in two parts, the second continuing the cache, give the same numbers. Summed
/// in another order they differed in the last bits, and a small model amplified that to logits
/// 0.5 apart (docs/runtime.md).
#[inline(always)]
fn scores_by_dim(query: &[f32], block: &[f32], out: &mut [f32]) {
    // Four keys at a time, so the 16 lanes' sums fit the registers of a 128-bit vector unit
    // (NEON has 32): a whole block's 256 sums would be kept in memory.
    const PART: usize = 4;
    let whole = query.len() - query.len() % LANES;
    for part in 0..LANES / PART {
        let mut lanes = [[0f32; PART]; LANES];
        for d0 in (0..whole).step_by(LANES) {
            for (l, lane) in lanes.iter_mut().enumerate() {
                let d = d0 + l;
                let keys = &block[d * LANES + part * PART..][..PART];
                for j in 0..PART {
                    lane[j] = query[d].mul_add(keys[j], lane[j]);
                }
            }
        }
        for (l, lane) in lanes.iter_mut().enumerate().take(query.len() - whole) {
            let d = whole + l;
            let keys = &block[d * LANES + part * PART..][..PART];
            for j in 0..PART {
                lane[j] = query[d].mul_add(keys[j], lane[j]);
            }
        }
        let mut width = LANES / 2;
        while width > 0 {
            let (low, high) = lanes.split_at_mut(width);
            for (a, b) in low.iter_mut().zip(high.iter()) {
                for j in 0..PART {
                    a[j] += b[j];
                }
            }
            width /= 2;
        }
        out[part * PART..][..PART].copy_from_slice(&lanes[0]);
    }
}

/// Σ a·b, kept in 16 lanes (fused products) and added pairwise, so every path gives the same bits.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; LANES];
    let (a_blocks, a_tail) = a.split_at(a.len() - a.len() % LANES);
    let (b_blocks, b_tail) = b.split_at(a_blocks.len());
    for (x, y) in a_blocks.chunks_exact(LANES).zip(b_blocks.chunks_exact(LANES)) {
        for l in 0..LANES {
            lanes[l] = x[l].mul_add(y[l], lanes[l]);
        }
    }
    for (l, (&x, &y)) in a_tail.iter().zip(b_tail).enumerate() {
        lanes[l] = x.mul_add(y, lanes[l]);
    }
    let mut width = LANES / 2;
    while width > 0 {
        for l in 0..width {
            lanes[l] += lanes[l + width];
        }
        width /= 2;
    }
    lanes[0]
}

/// The largest of `values` (which are finite scores), taken in 16 lanes.
#[inline(always)]
fn largest(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let blocks = values.chunks_exact(LANES);
    for &v in blocks.remainder() {
        lanes[0] = if v > lanes[0] { v } else { lanes[0] };
    }
    for block in blocks {
        for l in 0..LANES {
            lanes[l] = if block[l] > lanes[l] { block[l] } else { lanes[l] };
        }
    }
    lanes.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// Σ values, kept in 16 lanes and added pairwise (the same order on every path).
#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; LANES];
    let blocks = values.chunks_exact(LANES);
    for (l, &v) in blocks.remainder().iter().enumerate() {
        lanes[l] = v;
    }
    for block in blocks {
        for l in 0..LANES {
            lanes[l] += block[l];
        }
    }
    let mut width = LANES / 2;
    while width > 0 {
        for l in 0..width {
            lanes[l] += lanes[l + width];
        }
        width /= 2;
    }
    lanes[0]
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{head_rows, HeadJob, HeadRows, LANES};
    use std::arch::x86_64::*;

    /// [`head_rows`] compiled for AVX-512, with the scores and weighted sums below.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
    pub(super) unsafe fn head_rows_avx512(job: &HeadJob, scores: &mut [f32], sums: &mut [f32]) {
        head_rows::<{ super::path::AVX512 }>(job, scores, sums)
    }

    /// [`head_rows`] compiled for AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn head_rows_avx2(job: &HeadJob, scores: &mut [f32], sums: &mut [f32]) {
        head_rows::<{ super::path::AVX2 }>(job, scores, sums)
    }

    /// [`super::scores_by_dim`] in registers: one register of sums per lane of `dot` (dimension
    /// `d` into register `d % 16`), then the 16 registers added pairwise in `dot`'s order, so
    /// the same bits as `dot`. The block holds `query.len()` rows of 16 keys.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn scores_avx512(query: &[f32], block: &[f32], out: &mut [f32]) {
        debug_assert!(block.len() >= query.len() * LANES && out.len() >= LANES);
        let mut lanes = [_mm512_setzero_ps(); LANES];
        let base = block.as_ptr();
        let whole = query.len() - query.len() % LANES;
        // Sixteen dimensions a step, so each lane's register is named at compile time.
        for d0 in (0..whole).step_by(LANES) {
            for (l, lane) in lanes.iter_mut().enumerate() {
                let d = d0 + l;
                *lane = _mm512_fmadd_ps(_mm512_set1_ps(*query.get_unchecked(d)), _mm512_loadu_ps(base.add(d * LANES)), *lane);
            }
        }
        for (l, lane) in lanes.iter_mut().enumerate().take(query.len() - whole) {
            let d = whole + l;
            *lane = _mm512_fmadd_ps(_mm512_set1_ps(*query.get_unchecked(d)), _mm512_loadu_ps(base.add(d * LANES)), *lane);
        }
        let mut width = LANES / 2;
        while width > 0 {
            for l in 0..width {
                lanes[l] = _mm512_add_ps(lanes[l], lanes[l + width]);
            }
            width /= 2;
        }
        _mm512_storeu_ps(out.as_mut_ptr(), lanes[0]);
    }

    /// [`super::scores_by_dim`] on AVX2's 16 registers, which cannot hold a register of sums
    /// per lane of `dot` for 16 keys: each half of the block (8 keys) is summed four lanes at a
    /// time with their partners eight lanes on (the pair `dot` adds first), then the pairs are
    /// added pairwise in `dot`'s order, so the same bits as `dot`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) unsafe fn scores_avx2(query: &[f32], block: &[f32], out: &mut [f32]) {
        debug_assert!(block.len() >= query.len() * LANES && out.len() >= LANES);
        let whole = query.len() - query.len() % LANES;
        let q = query.as_ptr();
        for half in 0..2 {
            let base = block.as_ptr().add(half * 8);
            // pairs[l] = lane l + lane l + 8 of `dot`, for l in 0..8.
            let mut pairs = [_mm256_setzero_ps(); 8];
            for group in 0..2 {
                // sums[i]: lane 4·group + i; sums[4 + i]: lane 4·group + i + 8.
                let mut sums = [_mm256_setzero_ps(); 8];
                let lane_of = |s: usize| 4 * group + s % 4 + 8 * (s / 4);
                for d0 in (0..whole).step_by(LANES) {
                    for (s, sum) in sums.iter_mut().enumerate() {
                        let d = d0 + lane_of(s);
                        *sum = _mm256_fmadd_ps(_mm256_set1_ps(*q.add(d)), _mm256_loadu_ps(base.add(d * LANES)), *sum);
                    }
                }
                for (s, sum) in sums.iter_mut().enumerate() {
                    let d = whole + lane_of(s);
                    if d < query.len() {
                        *sum = _mm256_fmadd_ps(_mm256_set1_ps(*q.add(d)), _mm256_loadu_ps(base.add(d * LANES)), *sum);
                    }
                }
                for i in 0..4 {
                    pairs[4 * group + i] = _mm256_add_ps(sums[i], sums[4 + i]);
                }
            }
            let mut width = 4;
            while width > 0 {
                for l in 0..width {
                    pairs[l] = _mm256_add_ps(pairs[l], pairs[l + width]);
                }
                width /= 2;
            }
            _mm256_storeu_ps(out.as_mut_ptr().add(half * 8), pairs[0]);
        }
    }

    /// Adds Σ weights[n] · value row `first + n` to `sums` (head_dim = `sums.len()`), the sums held
    /// in registers, one fused product per value in the portable loop's order; false, with
    /// nothing done, for a width other than 64, 128 or 256 (the caller takes the portable loop:
    /// calling it from here stopped this function being inlined).
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn weighted_sum_avx512(weights: &[f32], v: &HeadRows, kv_head: usize, first: usize, sums: &mut [f32]) -> bool {
        match sums.len() {
            64 => weighted_sum_regs::<4>(weights, v, kv_head, first, sums),
            128 => weighted_sum_regs::<8>(weights, v, kv_head, first, sums),
            256 => weighted_sum_regs::<16>(weights, v, kv_head, first, sums),
            _ => return false,
        }
        true
    }

    /// The sums of a head width of exactly `C` registers, so each stays in its register.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn weighted_sum_regs<const C: usize>(weights: &[f32], v: &HeadRows, kv_head: usize, first: usize, sums: &mut [f32]) {
        debug_assert!(sums.len() == C * LANES && v.holds(kv_head + 1, first + weights.len(), C * LANES));
        let mut acc = [_mm512_setzero_ps(); C];
        for (c, a) in acc.iter_mut().enumerate() {
            *a = _mm512_loadu_ps(sums.as_ptr().add(c * LANES));
        }
        let rows = v.values.as_ptr().add(v.offset + kv_head * v.head_stride + first * v.row_stride);
        for (n, &w) in weights.iter().enumerate() {
            let row = rows.add(n * v.row_stride);
            let w = _mm512_set1_ps(w);
            for (c, a) in acc.iter_mut().enumerate() {
                *a = _mm512_fmadd_ps(w, _mm512_loadu_ps(row.add(c * LANES)), *a);
            }
        }
        for (c, a) in acc.iter().enumerate() {
            _mm512_storeu_ps(sums.as_mut_ptr().add(c * LANES), *a);
        }
    }

    /// [`weighted_sum_avx512`] on AVX2: the sums of 64 dimensions at a time in 8 registers, each
    /// slice of the head a pass over the positions (a sum's products stay in order of position,
    /// so the same bits); false, with nothing done, for a width not a multiple of 64. The
    /// portable loop loaded and stored the sums every four positions.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) unsafe fn weighted_sum_avx2(weights: &[f32], v: &HeadRows, kv_head: usize, first: usize, sums: &mut [f32]) -> bool {
        const SLICE: usize = 64;
        if sums.is_empty() || !sums.len().is_multiple_of(SLICE) {
            return false;
        }
        debug_assert!(v.holds(kv_head + 1, first + weights.len(), sums.len()));
        let rows = v.values.as_ptr().add(v.offset + kv_head * v.head_stride + first * v.row_stride);
        for slice in (0..sums.len()).step_by(SLICE) {
            let mut acc = [_mm256_setzero_ps(); SLICE / 8];
            for (c, a) in acc.iter_mut().enumerate() {
                *a = _mm256_loadu_ps(sums.as_ptr().add(slice + c * 8));
            }
            for (n, &w) in weights.iter().enumerate() {
                let row = rows.add(n * v.row_stride + slice);
                let w = _mm256_set1_ps(w);
                for (c, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(w, _mm256_loadu_ps(row.add(c * 8)), *a);
                }
            }
            for (c, a) in acc.iter().enumerate() {
                _mm256_storeu_ps(sums.as_mut_ptr().add(slice + c * 8), *a);
            }
        }
        true
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use super::LANES;
    use std::arch::aarch64::*;

    /// [`super::scores_by_dim`] on NEON's 32 registers: a quarter of the block (4 keys) at a
    /// time with one register of sums per lane of `dot`, then the lanes added pairwise in
    /// `dot`'s order, so the same bits as `dot`. The block holds `query.len()` rows of 16 keys.
    #[inline]
    pub(super) unsafe fn scores_neon(query: &[f32], block: &[f32], out: &mut [f32]) {
        debug_assert!(block.len() >= query.len() * LANES && out.len() >= LANES);
        let whole = query.len() - query.len() % LANES;
        let q = query.as_ptr();
        for part in 0..LANES / 4 {
            let base = block.as_ptr().add(part * 4);
            let mut lanes = [vdupq_n_f32(0.0); LANES];
            for d0 in (0..whole).step_by(LANES) {
                for (l, lane) in lanes.iter_mut().enumerate() {
                    let d = d0 + l;
                    *lane = vfmaq_f32(*lane, vdupq_n_f32(*q.add(d)), vld1q_f32(base.add(d * LANES)));
                }
            }
            for (l, lane) in lanes.iter_mut().enumerate().take(query.len() - whole) {
                let d = whole + l;
                *lane = vfmaq_f32(*lane, vdupq_n_f32(*q.add(d)), vld1q_f32(base.add(d * LANES)));
            }
            let mut width = LANES / 2;
            while width > 0 {
                for l in 0..width {
                    lanes[l] = vaddq_f32(lanes[l], lanes[l + width]);
                }
                width /= 2;
            }
            vst1q_f32(out.as_mut_ptr().add(part * 4), lanes[0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{paths_under_test, pseudo_random_bits, serial};

    fn values(n: usize, seed: u32, spread: f32) -> Vec<f32> {
        pseudo_random_bits(n, seed).iter().map(|&b| (b as f32 / (1u32 << 24) as f32 - 0.5) * spread).collect()
    }

    /// The definition in f64: every score, the mask as −∞, softmax, the weighted sum.
    fn reference(q: &[f32], k: &[f32], v: &[f32], s: AttentionShape) -> Vec<f64> {
        let positions = s.past + s.seq;
        let (d, rep) = (s.head_dim, s.query_heads / s.kv_heads);
        let mut out = vec![0f64; s.seq * s.query_heads * d];
        for h in 0..s.query_heads {
            let g = h / rep;
            for i in 0..s.seq {
                let pos = s.past + i;
                let scores: Vec<f64> = (0..positions)
                    .map(|j| {
                        let visible = j <= pos && s.window.is_none_or(|w| pos - j < w);
                        if !visible {
                            return f64::NEG_INFINITY;
                        }
                        let dot: f64 = (0..d).map(|x| q[(h * s.seq + i) * d + x] as f64 * k[(g * positions + j) * d + x] as f64).sum();
                        dot * s.scale as f64
                    })
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let weights: Vec<f64> = scores.iter().map(|&x| (x - max).exp()).collect();
                let total: f64 = weights.iter().sum();
                for x in 0..d {
                    out[(i * s.query_heads + h) * d + x] =
                        (0..positions).map(|j| weights[j] * v[(g * positions + j) * d + x] as f64).sum::<f64>() / total;
                }
            }
        }
        out
    }

    /// Every path equals the definition within f32 rounding, and the paths equal each other to
    /// the bit: grouped heads, a cache with past positions, a window, a head width with a tail
    /// past the lanes, and one token (the decode step).
    #[test]
    fn equals_the_definition_and_every_path_the_same_bits() {
        let cases = [
            AttentionShape { query_heads: 6, kv_heads: 2, seq: 37, past: 0, head_dim: 64, window: None, scale: 0.125 },
            AttentionShape { query_heads: 4, kv_heads: 4, seq: 20, past: 13, head_dim: 40, window: None, scale: 0.158 },
            AttentionShape { query_heads: 4, kv_heads: 1, seq: 33, past: 5, head_dim: 32, window: Some(7), scale: 0.177 },
            AttentionShape { query_heads: 2, kv_heads: 1, seq: 1, past: 50, head_dim: 128, window: None, scale: 0.088 },
            AttentionShape { query_heads: 4, kv_heads: 1, seq: 41, past: 19, head_dim: 256, window: Some(30), scale: 0.0625 },
            AttentionShape { query_heads: 2, kv_heads: 2, seq: 18, past: 0, head_dim: 128, window: None, scale: 0.088 },
        ];
        let paths = paths_under_test("causal attention");
        for (c, s) in cases.into_iter().enumerate() {
            let positions = s.past + s.seq;
            let q = values(s.query_heads * s.seq * s.head_dim, 3 + c as u32, 8.0);
            let k = values(s.kv_heads * positions * s.head_dim, 5 + c as u32, 8.0);
            let v = values(s.kv_heads * positions * s.head_dim, 7 + c as u32, 4.0);
            let (q_stride, kv_stride) = (s.seq * s.head_dim, positions * s.head_dim);
            let expected = reference(&q, &k, &v, s);
            let mut first: Option<Vec<u32>> = None;
            for &isa in &paths {
                let mut out = vec![f32::NAN; expected.len()];
                attention(
                    isa,
                    HeadRows { values: &q, offset: 0, head_stride: q_stride, row_stride: s.head_dim },
                    HeadRows { values: &k, offset: 0, head_stride: kv_stride, row_stride: s.head_dim },
                    HeadRows { values: &v, offset: 0, head_stride: kv_stride, row_stride: s.head_dim },
                    s,
                    &mut out,
                    &serial,
                )
                .unwrap();
                for (n, (&ours, &exact)) in out.iter().zip(&expected).enumerate() {
                    assert!((ours as f64 - exact).abs() <= 1e-5 * (1.0 + exact.abs()), "case {c} {isa}: value {n} {ours} against {exact}");
                }
                let bits: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
                match &first {
                    None => first = Some(bits),
                    Some(expected_bits) => assert!(expected_bits == &bits, "case {c}: {isa} differs from {} in bits", paths[0]),
                }
            }
        }
    }

    /// Keys and values read through a cache's strides: a view of the first positions of a larger
    /// buffer, starting past an offset, gives what the same rows laid out alone give.
    #[test]
    fn reads_a_cache_through_its_strides() {
        let s = AttentionShape { query_heads: 2, kv_heads: 2, seq: 9, past: 3, head_dim: 16, window: None, scale: 0.25 };
        let (positions, capacity, offset) = (12, 20, 5);
        let q = values(2 * 9 * 16, 11, 6.0);
        let dense_k = values(2 * positions * 16, 12, 6.0);
        let dense_v = values(2 * positions * 16, 13, 6.0);
        let mut cache_k = vec![f32::NAN; offset + 2 * capacity * 16];
        let mut cache_v = cache_k.clone();
        for h in 0..2 {
            for j in 0..positions {
                let (from, to) = ((h * positions + j) * 16, offset + (h * capacity + j) * 16);
                cache_k[to..to + 16].copy_from_slice(&dense_k[from..from + 16]);
                cache_v[to..to + 16].copy_from_slice(&dense_v[from..from + 16]);
            }
        }
        let q_rows = HeadRows { values: &q, offset: 0, head_stride: 9 * 16, row_stride: 16 };
        let dense = |values| HeadRows { values, offset: 0, head_stride: positions * 16, row_stride: 16 };
        let cached = |values| HeadRows { values, offset, head_stride: capacity * 16, row_stride: 16 };
        let (mut a, mut b) = (vec![0f32; 9 * 2 * 16], vec![0f32; 9 * 2 * 16]);
        attention(Isa::Scalar, q_rows, dense(&dense_k), dense(&dense_v), s, &mut a, &serial).unwrap();
        attention(Isa::best(), q_rows, cached(&cache_k), cached(&cache_v), s, &mut b, &serial).unwrap();
        assert_eq!(a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }

    /// A prompt read whole, and read in two parts (a prefix, then the rest continuing the cache):
    /// the rows of the second part are the whole's rows to the bit, on every path, for rest
    /// lengths on both sides of the transposed-keys threshold (16 rows), prefixes on both
    /// sides of a key block, and a sliding window. The model's judges read a shared prefix once and continue it, and
    /// a small model turns a last-bit difference here into logits 0.5 apart.
    #[test]
    fn a_prompt_read_in_two_parts_gives_the_rows_of_reading_it_whole() {
        let paths = paths_under_test("causal attention");
        for (heads, kv_heads, d) in [(9, 3, 64), (12, 2, 128), (4, 4, 40), (4, 1, 256)] {
            for (prefix, rest, window) in [(40, 12, None), (40, 30, None), (70, 5, None), (64, 17, None), (3, 1, None), (100, 80, None), (100, 80, Some(37)), (70, 5, Some(20))] {
                let n = prefix + rest;
                let q = values(heads * n * d, 21, 8.0);
                let k = values(kv_heads * n * d, 22, 8.0);
                let v = values(kv_heads * n * d, 23, 4.0);
                let whole_shape = AttentionShape { query_heads: heads, kv_heads, seq: n, past: 0, head_dim: d, window, scale: 0.125 };
                let kv = |values| HeadRows { values, offset: 0, head_stride: n * d, row_stride: d };
                for &isa in &paths {
                    let mut whole = vec![f32::NAN; n * heads * d];
                    let q_whole = HeadRows { values: &q, offset: 0, head_stride: n * d, row_stride: d };
                    attention(isa, q_whole, kv(&k), kv(&v), whole_shape, &mut whole, &serial).unwrap();
                    // The rest's queries: rows prefix.. of each head, read through the whole's strides.
                    let q_rest = HeadRows { values: &q, offset: prefix * d, head_stride: n * d, row_stride: d };
                    let mut part = vec![f32::NAN; rest * heads * d];
                    let shape = AttentionShape { seq: rest, past: prefix, ..whole_shape };
                    attention(isa, q_rest, kv(&k), kv(&v), shape, &mut part, &serial).unwrap();
                    for (x, (&a, &b)) in part.iter().zip(&whole[prefix * heads * d..]).enumerate() {
                        assert_eq!(a.to_bits(), b.to_bits(), "{isa} heads {heads}/{kv_heads} d {d} prefix {prefix} rest {rest} window {window:?}: value {x} {a} against {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn sizes_are_checked() {
        let s = AttentionShape { query_heads: 2, kv_heads: 1, seq: 2, past: 1, head_dim: 4, window: None, scale: 1.0 };
        let q = vec![1f32; 2 * 2 * 4];
        let kv = vec![1f32; 3 * 4];
        fn rows(values: &[f32], head_stride: usize) -> HeadRows<'_> {
            HeadRows { values, offset: 0, head_stride, row_stride: 4 }
        }
        let run = |s: AttentionShape, k: &[f32], out: &mut [f32]| attention(Isa::Scalar, rows(&q, 8), rows(k, 12), rows(&kv, 12), s, out, &serial);
        assert!(run(s, &kv, &mut [0.0; 16]).is_ok());
        assert!(run(s, &kv[..11], &mut [0.0; 16]).is_err(), "a key buffer one value short");
        assert!(run(s, &kv, &mut [0.0; 15]).is_err(), "an output one value short");
        assert!(run(AttentionShape { kv_heads: 3, ..s }, &kv, &mut [0.0; 16]).is_err(), "heads that do not group");
        assert!(run(AttentionShape { window: Some(0), ..s }, &kv, &mut [0.0; 16]).is_err(), "an empty window");
    }
}
