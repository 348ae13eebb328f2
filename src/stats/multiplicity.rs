//! Adjusting p-values for testing many metrics (or groups) at once. Holm–Bonferroni controls
//! the chance of any false "better" among the family (used for the secondary metrics of a
//! comparison); Benjamini–Hochberg controls the expected share of false findings (used for
//! exploratory breakdowns, where some false leads are acceptable).

/// Holm's step-down adjusted p-values, in the input's order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, i) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the input's order.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*b].total_cmp(&p[*a]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 1.0;
    for (k, i) in order.into_iter().enumerate() {
        let rank = m - k;
        running = running.min((p[i] * m as f64 / rank as f64).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_and_bh_match_hand_worked_values() {
        // statsmodels' multipletests(..., method="holm" / "fdr_bh") on the same input.
        let p = [0.01, 0.04, 0.03, 0.005];
        let h = holm(&p);
        for (got, want) in h.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert!((got - want).abs() < 1e-12, "{h:?}");
        }
        let q = benjamini_hochberg(&p);
        for (got, want) in q.iter().zip([0.02, 0.04, 0.04, 0.02]) {
            assert!((got - want).abs() < 1e-12, "{q:?}");
        }
        assert!(holm(&[]).is_empty());
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0], "capped at 1");
    }
}
