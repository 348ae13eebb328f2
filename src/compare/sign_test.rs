//! The two-sided exact sign test (a binomial test with p = 1/2, ties dropped).
//!
//! Written here rather than pulled from a statistics crate: it is a sum of binomial terms, and
//! computing them in log space keeps it exact enough (1e-12) for thousands of pairs.

/// P-value of `wins` out of `wins + losses` under H0: wins and losses equally likely.
/// Matches scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue; 1.0 when there are no pairs.
pub fn sign_test_p(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    if n == 0 {
        return 1.0;
    }
    // With p = 1/2 the distribution is symmetric: the two-sided p-value is twice the smaller
    // tail, including the observed count, capped at 1.
    let k = wins.min(losses);
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        tail += (ln_choose + ln_half_n).exp();
        // ln C(n, i+1) = ln C(n, i) + ln(n - i) - ln(i + 1)
        ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::sign_test_p;

    #[test]
    fn known_values() {
        // 10 wins, 0 losses: 2 * 0.5^10.
        assert!((sign_test_p(10, 0) - 2.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test_p(5, 5), 1.0);
        assert_eq!(sign_test_p(0, 0), 1.0);
        assert_eq!(sign_test_p(3, 7), sign_test_p(7, 3));
    }
}
