//! CPU kernels of Assay's model runtime: matrix products, attention over the KV cache and the
//! feed-forward's gated activation. A crate of their own so that the dev profile, which builds
//! the main crate at opt-level 1 for compile time, can build them at opt-level 3 like candle's: SIMD code
//! unoptimised is many times slower.

use std::ops::Range;

pub mod causal_attention;
mod exp;
pub mod gated_activation;
pub mod isa;
pub mod k_quants;
#[cfg(target_arch = "aarch64")]
mod neon_dot;
pub mod q4_1;
pub mod q8_0;

/// Runs `f` over a split of `0..n` on worker threads and returns when every part is done
/// (candle's thread pool in Assay, so the kernels never compete for the cores).
pub type Parallel<'p> = &'p dyn Fn(usize, &(dyn Fn(Range<usize>) + Sync));

/// Splits an output of `m` activation rows × `n` weight rows into work items of
/// `group_rows` × `block_cols` cells and runs `tile(rows, cols)` on each through `parallel`.
/// Items cover disjoint cells, which is what lets the kernels write the output unsynchronised.
fn for_each_output_tile(
    parallel: Parallel,
    m: usize,
    n: usize,
    group_rows: usize,
    block_cols: usize,
    tile: &(dyn Fn(Range<usize>, Range<usize>) + Sync),
) {
    let col_blocks = n.div_ceil(block_cols);
    parallel(m.div_ceil(group_rows) * col_blocks, &|items: Range<usize>| {
        for item in items {
            let (group, block) = (item / col_blocks, item % col_blocks);
            tile(group * group_rows..m.min((group + 1) * group_rows), block * block_cols..n.min((block + 1) * block_cols));
        }
    });
}

/// `v` (a product already scaled to i8's range) rounded half away from zero and saturated to
/// i8, NaN to 0: what `v.round() as i8` gives, in a form the compiler vectorizes (`as i8`'s
/// saturating conversion compiles to one value at a time). Adding 1.5 · 2^23 puts a whole
/// number of magnitude below 2^22 in a float's low mantissa bits, exactly.
#[inline(always)]
pub(crate) fn rounded_to_i8(v: f32) -> i8 {
    const SHIFT: f32 = 12_582_912.0;
    let v = v.round();
    let v = if v.is_nan() { 0.0 } else { v.clamp(-128.0, 127.0) };
    ((v + SHIFT).to_bits() as i32 - SHIFT.to_bits() as i32) as i8
}

/// An output buffer written by several threads at disjoint places (the work items of
/// `for_each_output_tile` or of a quantizer's blocks), shared by every kernel module.
#[derive(Clone, Copy)]
pub(crate) struct SharedOut<T>(pub(crate) *mut T);
impl<T> SharedOut<T> {
    // A method, so closures capture the Sync wrapper rather than its raw pointer field.
    pub(crate) fn ptr(&self) -> *mut T {
        self.0
    }
}
// SAFETY: every user writes each element from exactly one work item.
unsafe impl<T> Sync for SharedOut<T> {}
unsafe impl<T> Send for SharedOut<T> {}

/// What the kernels' tests share: a serial stand-in for the thread pool and reproducible
/// pseudo-random numbers.
#[cfg(test)]
mod test_support {
    use crate::isa::Isa;
    use std::ops::Range;

    /// The paths this CPU runs, said on stderr with the ones it cannot (`cargo test -- --nocapture`
    /// shows it), so a green run tells which kernels it tested.
    pub fn paths_under_test(kernel: &str) -> Vec<Isa> {
        let (ran, skipped): (Vec<Isa>, Vec<Isa>) = Isa::ALL.into_iter().partition(|isa| isa.supported());
        let names = |paths: &[Isa]| paths.iter().map(|isa| isa.name()).collect::<Vec<_>>().join(", ");
        eprintln!("{kernel}: testing the {} paths; this CPU lacks: {}", names(&ran), if skipped.is_empty() { "none".into() } else { names(&skipped) });
        ran
    }

    /// Runs the work in two uneven parts, to exercise item ranges that split row groups.
    pub fn serial(n: usize, f: &(dyn Fn(Range<usize>) + Sync)) {
        let mid = n / 3;
        f(0..mid);
        f(mid..n);
    }

    /// `n` numbers from a linear congruential generator, each `(state >> 8)` (24 bits).
    pub fn pseudo_random_bits(n: usize, seed: u32) -> Vec<u32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                s >> 8
            })
            .collect()
    }
}
