//! CPU matrix kernels of Assay's model runtime. A crate of their own so that the dev profile,
//! which builds the main crate at opt-level 1 for compile time, can build them at opt-level 3
//! like candle's: SIMD code unoptimised is many times slower.

pub mod k_quants;
pub mod q8_0;

/// What the kernels' tests share: a serial stand-in for the thread pool and reproducible
/// pseudo-random numbers.
#[cfg(test)]
mod test_support {
    use std::ops::Range;

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
