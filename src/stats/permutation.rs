//! The paired randomization (sign-flip permutation) test of a mean difference: under "no
//! difference" each question's B − A is as likely to have the other sign, so the p-value is the
//! share of sign assignments whose mean is at least as far from zero as the one observed.
//! Exact (all 2^n assignments) up to `EXACT_MAX_PAIRS` non-zero differences, Monte Carlo with
//! `PERMUTATION_RESAMPLES` seeded draws above. This is the test IR and NLP evaluations use for
//! paired system comparisons; unlike the bootstrap it holds its level at small n.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Up to this many non-zero differences every sign assignment is counted (2^20 ≈ 1M sums).
pub const EXACT_MAX_PAIRS: usize = 20;
pub const PERMUTATION_RESAMPLES: usize = 100_000;

/// Two-sided p-value of the mean paired difference; 1 when there is no non-zero difference.
/// Zero differences are the same under either sign, so they change nothing and are left out.
pub fn paired_permutation_p(diffs: &[f64], seed: u64) -> f64 {
    let nonzero: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    if nonzero.is_empty() {
        return 1.0;
    }
    let observed = nonzero.iter().sum::<f64>().abs();
    // Sums equal to the observed one up to rounding count as "as extreme" (scipy does the same).
    let threshold = observed * (1.0 - 1e-12) - 1e-12;
    if nonzero.len() <= EXACT_MAX_PAIRS {
        exact(&nonzero, threshold)
    } else {
        monte_carlo(&nonzero, threshold, seed)
    }
}

/// Every sign assignment, visited in Gray-code order so each step flips one sign.
fn exact(values: &[f64], threshold: f64) -> f64 {
    let n = values.len();
    let total: u64 = 1 << n;
    let mut sum: f64 = values.iter().sum();
    let mut positive = vec![true; n];
    let mut extreme: u64 = u64::from(sum.abs() >= threshold);
    for step in 1..total {
        let flip = step.trailing_zeros() as usize;
        sum += if positive[flip] { -2.0 * values[flip] } else { 2.0 * values[flip] };
        positive[flip] = !positive[flip];
        extreme += u64::from(sum.abs() >= threshold);
    }
    extreme as f64 / total as f64
}

/// Random sign assignments; the observed one counts as one of them, so p is never 0.
fn monte_carlo(values: &[f64], threshold: f64, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut extreme = 0usize;
    for _ in 0..PERMUTATION_RESAMPLES {
        let mut sum = 0.0;
        // 64 signs per random word.
        for block in values.chunks(64) {
            let bits: u64 = rng.random();
            for (i, v) in block.iter().enumerate() {
                sum += if bits >> i & 1 == 1 { *v } else { -*v };
            }
        }
        extreme += usize::from(sum.abs() >= threshold);
    }
    (extreme + 1) as f64 / (PERMUTATION_RESAMPLES + 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_wins_of_equal_size_give_the_two_extreme_assignments() {
        // 10 equal wins: only all-plus and all-minus are as extreme: 2 / 1024.
        assert!((paired_permutation_p(&[1.0; 10], 0) - 2.0 / 1024.0).abs() < 1e-15);
        assert_eq!(paired_permutation_p(&[0.0; 5], 0), 1.0);
        assert_eq!(paired_permutation_p(&[], 0), 1.0);
        // Zeros change nothing.
        let mut with_zeros = vec![1.0; 10];
        with_zeros.extend([0.0; 7]);
        assert_eq!(paired_permutation_p(&with_zeros, 0), paired_permutation_p(&[1.0; 10], 0));
    }

    #[test]
    fn monte_carlo_is_seeded_and_close_to_exact() {
        let diffs: Vec<f64> = (0..30).map(|i| if i % 3 == 0 { -0.4 } else { 0.3 + (i as f64) / 100.0 }).collect();
        let p = paired_permutation_p(&diffs, 1);
        assert_eq!(p, paired_permutation_p(&diffs, 1));
        assert!(p > 0.0 && p < 0.05, "{p}");
    }
}
