//! Bootstrap intervals for a mean: the percentile interval for a run's own means, and the BCa
//! (bias-corrected and accelerated) interval for paired differences, whose coverage holds at
//! the small n of a comparison where the percentile interval is too narrow.
//!
//! Written here rather than taken from a crate: it is a few dozen lines, and the statistics
//! crates on offer either lack a seeded bootstrap or pull in a linear-algebra stack.

use super::normal::{normal_cdf, normal_quantile};
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

/// 95% BCa interval of the mean (Efron 1987, as `scipy.stats.bootstrap(method='BCa')`): the
/// percentile interval's levels moved by the bias of the bootstrap distribution (z0) and the
/// skewness measured by the jackknife (acceleration a). None for no values; a point for
/// constant values; the percentile interval where the correction is undefined (every resample
/// on one side of the mean, as with a handful of equal values and one outlier).
pub fn mean_bca95(values: &[f64], seed: u64) -> Option<(f64, f64)> {
    let n = values.len();
    let estimate = mean(values)?;
    if values.iter().all(|v| *v == values[0]) {
        return Some((values[0], values[0]));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    // The mean's rank among the resampled means, ties counted half (as scipy does): with
    // pass/fail scores many resamples land exactly on the mean.
    let strictly_below = means.iter().filter(|m| **m < estimate).count();
    let at_or_below = means.iter().filter(|m| **m <= estimate).count();
    let below = (strictly_below + at_or_below) as f64 / (2 * means.len()) as f64;
    let z0 = normal_quantile(below);
    let total: f64 = values.iter().sum();
    let jackknife: Vec<f64> = values.iter().map(|v| (total - v) / (n - 1).max(1) as f64).collect();
    let jack_mean = jackknife.iter().sum::<f64>() / n as f64;
    let (num, den) = jackknife.iter().fold((0.0, 0.0), |(num, den), j| {
        let d = jack_mean - j;
        (num + d.powi(3), den + d.powi(2))
    });
    let acceleration = if den > 0.0 { num / (6.0 * den.powf(1.5)) } else { 0.0 };
    let level = |z_alpha: f64| normal_cdf(z0 + (z0 + z_alpha) / (1.0 - acceleration * (z0 + z_alpha)));
    let (low, high) = (level(normal_quantile(0.025)), level(normal_quantile(0.975)));
    if !(low.is_finite() && high.is_finite()) || !z0.is_finite() {
        return Some((percentile(&means, 0.025), percentile(&means, 0.975)));
    }
    Some((percentile(&means, low), percentile(&means, high)))
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
    fn bca_holds_the_mean_leans_with_skew_and_is_seeded() {
        let values: Vec<f64> = (0..40).map(|i| if i % 8 == 0 { 1.0 } else { 0.05 * (i % 3) as f64 }).collect();
        let m = mean(&values).unwrap();
        let (lo, hi) = mean_bca95(&values, 3).unwrap();
        assert!(lo < m && m < hi, "{lo} < {m} < {hi}");
        assert_eq!(mean_bca95(&values, 3), mean_bca95(&values, 3));
        // Right-skewed data: the interval reaches further above the mean than below it.
        assert!(hi - m > m - lo, "{lo} {m} {hi}");
        assert_eq!(mean_bca95(&[0.5; 6], 0), Some((0.5, 0.5)));
        assert_eq!(mean_bca95(&[], 0), None);
    }

    #[test]
    fn constant_values_give_a_point_interval() {
        assert_eq!(mean_ci95(&[1.0; 10], 0), Some((1.0, 1.0)));
        assert_eq!(mean_ci95(&[], 0), None);
    }
}
