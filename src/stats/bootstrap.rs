//! Percentile bootstrap intervals for a mean.
//!
//! Written here rather than taken from a crate: it is a dozen lines, and the statistics crates
//! on offer either lack a seeded bootstrap or pull in a linear-algebra stack.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// 95% percentile-bootstrap interval of the mean; None for no values.
pub fn mean_ci95(values: &[f64], seed: u64) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    Some((percentile(&means, 0.025), percentile(&means, 0.975)))
}

/// Linear interpolation between order statistics (numpy's default "linear" method).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let fraction = position - lower as f64;
    sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_holds_the_mean_and_is_seeded() {
        let values: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 6.0).collect();
        let m = mean(&values).unwrap();
        let (lo, hi) = mean_ci95(&values, 1).unwrap();
        assert!(lo < m && m < hi, "{lo} < {m} < {hi}");
        assert_eq!(mean_ci95(&values, 1), mean_ci95(&values, 1));
        assert_ne!(mean_ci95(&values, 1), mean_ci95(&values, 2));
    }

    #[test]
    fn constant_values_give_a_point_interval() {
        assert_eq!(mean_ci95(&[1.0; 10], 0), Some((1.0, 1.0)));
        assert_eq!(mean_ci95(&[], 0), None);
    }
}
