//! Statistics of a pairwise comparison, from each question's order-averaged preference.
//!
//! - wins / ties / losses: the most probable of B / tie / A on each question;
//! - the win rate of B: the mean of `p_b` (B better, a tie counted half), with a seeded 95%
//!   BCa interval; 0.5 is no preference;
//! - the paired permutation (sign-flip) test on P(B better) − P(A better) per question: under
//!   "no difference" swapping which run is called A leaves every question's preference as
//!   likely negated as not;
//! - the order-consistency rate: the share of questions whose winner survives the swap of
//!   positions (a judge that follows position, not content, scores low);
//! - the length-controlled win rate: `p_b` regressed (logistic, soft labels) on the two
//!   answers' length difference, read off at equal length. A judge that likes long answers
//!   gives the longer run wins its content did not earn; the intercept keeps only what is left
//!   at equal length. The difference enters as tanh(Δwords / sd(Δwords)), so a few very long
//!   answers cannot dominate the fit.

use super::bootstrap::{mean, mean_bca95};
use super::permutation::paired_permutation_p;
use crate::record::{PairwiseJudgment, Preferred};
use serde::Serialize;

/// What a pairwise comparison found over its scored questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseStatistics {
    /// Questions judged in both orders.
    pub pairs: usize,
    /// Questions the judge could not score (each judgment keeps its error).
    pub unscored: usize,
    /// Questions whose most probable outcome is B better / a tie / A better.
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    /// Mean `p_b`: how often B's answer is the better one, ties counted half.
    pub win_rate: f64,
    /// 95% BCa interval of the win rate.
    pub win_rate_ci95: [f64; 2],
    /// Mean of P(B better) − P(A better) (= 2 · win rate − 1).
    pub mean_preference: f64,
    /// Two-sided paired permutation test of the mean preference against 0.
    pub permutation_p: f64,
    /// Questions whose winner is the same in both orders, and their share.
    pub order_consistent: usize,
    pub order_consistency: f64,
    /// The win rate at equal answer length (None when the fit cannot be made).
    pub length_controlled: Option<LengthControlled>,
}

/// The length-controlled win rate and the fit behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthControlled {
    /// The win rate of B predicted for answers of equal length: sigmoid(intercept).
    pub win_rate: f64,
    /// The fit's slope on tanh(Δwords / scale): above 0, the judge prefers the longer answer.
    pub slope: f64,
    /// The standard deviation of words(B) − words(A) over the questions (the scale of Δwords).
    pub length_scale: f64,
}

/// The statistics of the scored judgments (those with a preference); None when none is scored.
/// `seed` fixes the bootstrap and any Monte Carlo permutation draws.
pub fn pairwise_statistics(judgments: &[PairwiseJudgment], seed: u64) -> Option<PairwiseStatistics> {
    let scored: Vec<(&PairwiseJudgment, crate::record::PairPreference)> =
        judgments.iter().filter_map(|j| j.preference.map(|p| (j, p))).collect();
    if scored.is_empty() {
        return None;
    }
    let count = |preferred: Preferred| scored.iter().filter(|(_, p)| p.preferred == preferred).count();
    let p_b: Vec<f64> = scored.iter().map(|(_, p)| p.p_b).collect();
    let diffs: Vec<f64> = scored.iter().map(|(_, p)| p.b_better - p.a_better).collect();
    let win_rate = mean(&p_b)?;
    let (low, high) = mean_bca95(&p_b, seed)?;
    let order_consistent = scored.iter().filter(|(_, p)| p.order_consistent).count();
    let length_differences: Vec<f64> = scored.iter().map(|(j, _)| j.words_b as f64 - j.words_a as f64).collect();
    Some(PairwiseStatistics {
        pairs: scored.len(),
        unscored: judgments.len() - scored.len(),
        wins: count(Preferred::B),
        ties: count(Preferred::Tie),
        losses: count(Preferred::A),
        win_rate,
        win_rate_ci95: [low, high],
        mean_preference: mean(&diffs)?,
        permutation_p: paired_permutation_p(&diffs, seed),
        order_consistent,
        order_consistency: order_consistent as f64 / scored.len() as f64,
        length_controlled: length_controlled_win_rate(&p_b, &length_differences),
    })
}

/// The win rate at equal length: a logistic regression of each question's `p_b` (a soft label
/// in [0, 1]) on tanh(Δwords / sd(Δwords)), by Newton's method on the log-likelihood; the
/// answer is sigmoid(intercept). When the lengths never differ the fit has no slope and this
/// is the plain win rate. None for no values, a fit that does not settle, or equal length
/// outside what was observed (`equal_length_observed`).
pub fn length_controlled_win_rate(p_b: &[f64], length_differences: &[f64]) -> Option<LengthControlled> {
    let n = p_b.len();
    if n == 0 || n != length_differences.len() || !equal_length_observed(length_differences) {
        return None;
    }
    let mean_difference = length_differences.iter().sum::<f64>() / n as f64;
    let scale = (length_differences.iter().map(|d| (d - mean_difference).powi(2)).sum::<f64>() / n as f64).sqrt();
    let x: Vec<f64> = length_differences.iter().map(|d| if scale > 0.0 { (d / scale).tanh() } else { 0.0 }).collect();
    let y: Vec<f64> = p_b.iter().map(|p| p.clamp(0.0, 1.0)).collect();
    let with_slope = x.iter().any(|v| (v - x[0]).abs() > 1e-12);
    let (intercept, slope) = logistic_fit(&x, &y, with_slope)?;
    Some(LengthControlled { win_rate: sigmoid(intercept), slope, length_scale: scale })
}

/// Whether equal length lies inside the observed differences: at least a tenth of the
/// questions (and two) on each side of it, ties counting for both. When one run's answer is
/// the longer on nearly every question, the intercept is an extrapolation along the fitted
/// curve and read off a fit of a few points (it came out 1.000 on such a set), so no rate
/// at equal length is claimed.
pub fn equal_length_observed(length_differences: &[f64]) -> bool {
    let needed = ((length_differences.len() as f64 / 10.0).ceil() as usize).max(2);
    let not_longer = length_differences.iter().filter(|d| **d <= 0.0).count();
    let not_shorter = length_differences.iter().filter(|d| **d >= 0.0).count();
    not_longer >= needed && not_shorter >= needed
}

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// Soft-label log-likelihood of (α, β).
fn log_likelihood(x: &[f64], y: &[f64], alpha: f64, beta: f64) -> f64 {
    x.iter()
        .zip(y)
        .map(|(x, y)| {
            let eta = alpha + beta * x;
            // log σ(η) = −log(1 + e^{−η}), log(1 − σ(η)) = −log(1 + e^{η}), both kept finite.
            -(y * softplus(-eta) + (1.0 - y) * softplus(eta))
        })
        .sum()
}

fn softplus(t: f64) -> f64 {
    if t > 30.0 {
        t
    } else {
        t.exp().ln_1p()
    }
}

/// Newton's method with step halving (the likelihood never decreases). `with_slope` false
/// fits the intercept alone (every x the same: the slope is not identified).
fn logistic_fit(x: &[f64], y: &[f64], with_slope: bool) -> Option<(f64, f64)> {
    let (mut alpha, mut beta) = (0.0f64, 0.0f64);
    let mut current = log_likelihood(x, y, alpha, beta);
    for _ in 0..200 {
        let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (xi, yi) in x.iter().zip(y) {
            let p = sigmoid(alpha + beta * xi);
            let w = p * (1.0 - p);
            g0 += yi - p;
            g1 += (yi - p) * xi;
            h00 += w;
            h01 += w * xi;
            h11 += w * xi * xi;
        }
        let gradient = if with_slope { g0.abs().max(g1.abs()) } else { g0.abs() };
        if gradient < 1e-10 * x.len() as f64 {
            return Some((alpha, beta));
        }
        let (step0, step1) = if with_slope {
            let det = h00 * h11 - h01 * h01;
            if !(det > 1e-300) {
                // The weights vanished (every prediction at 0 or 1): as close as it gets.
                return Some((alpha, beta));
            }
            ((h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det)
        } else {
            if !(h00 > 1e-300) {
                return Some((alpha, beta));
            }
            (g0 / h00, 0.0)
        };
        let mut size = 1.0;
        loop {
            let (a, b) = (alpha + size * step0, beta + size * step1);
            let next = log_likelihood(x, y, a, b);
            if next >= current || size < 1e-8 {
                alpha = a;
                beta = b;
                current = next;
                break;
            }
            size /= 2.0;
        }
        if !(alpha.is_finite() && beta.is_finite()) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PairPreference;

    fn judged(p_b: f64, tie: f64, consistent: bool, words_a: usize, words_b: usize) -> PairwiseJudgment {
        let b_better = p_b - tie / 2.0;
        let a_better = 1.0 - b_better - tie;
        let preferred = if tie >= a_better && tie >= b_better {
            Preferred::Tie
        } else if b_better > a_better {
            Preferred::B
        } else {
            Preferred::A
        };
        PairwiseJudgment {
            id: format!("q{words_a}-{words_b}-{p_b}"),
            preference: Some(PairPreference { a_better, b_better, tie, p_b, order_consistent: consistent, preferred }),
            words_a,
            words_b,
            ..PairwiseJudgment::default()
        }
    }

    #[test]
    fn counts_rates_and_the_test_follow_the_preferences() {
        // Ten questions B wins alike, two ties, one A win, one unscored.
        let mut judgments: Vec<PairwiseJudgment> = (0..10).map(|_| judged(0.9, 0.0, true, 10, 10)).collect();
        judgments.push(judged(0.5, 0.6, true, 10, 10));
        judgments.push(judged(0.5, 0.6, false, 10, 10));
        judgments.push(judged(0.2, 0.0, false, 10, 10));
        judgments.push(PairwiseJudgment { id: "broken".into(), error: Some("overflow".into()), ..PairwiseJudgment::default() });
        let s = pairwise_statistics(&judgments, 7).unwrap();
        assert_eq!((s.pairs, s.unscored, s.wins, s.ties, s.losses), (13, 1, 10, 2, 1));
        let expected_rate = (10.0 * 0.9 + 0.5 + 0.5 + 0.2) / 13.0;
        assert!((s.win_rate - expected_rate).abs() < 1e-12);
        assert!((s.mean_preference - (2.0 * expected_rate - 1.0)).abs() < 1e-12);
        assert!(s.win_rate_ci95[0] < s.win_rate && s.win_rate < s.win_rate_ci95[1], "{s:?}");
        assert_eq!(s.order_consistent, 11);
        assert!((s.order_consistency - 11.0 / 13.0).abs() < 1e-12);
        // Equal lengths: the length-controlled rate is the plain one.
        let lc = s.length_controlled.unwrap();
        assert!((lc.win_rate - expected_rate).abs() < 1e-9 && lc.slope == 0.0, "{lc:?}");
        // The permutation p of the differences: 11 non-zero (ties give 0), 10 of +0.8 and one
        // of −0.6: as extreme as observed (|Σ| = 7.4) are the sign patterns with every +0.8
        // the same sign (either sign of the −0.6 reaches 7.4 or 8.6): 4 of 2^11.
        assert!((s.permutation_p - 4.0 / 2048.0).abs() < 1e-15, "{}", s.permutation_p);
        assert_eq!(pairwise_statistics(&judgments[13..], 7), None);
    }

    #[test]
    fn length_control_reads_the_fit_at_equal_length() {
        // Two length groups, Δwords = +10 and −10: the saturated fit meets each group's mean
        // p_b, so sigmoid(intercept) = sigmoid((logit ȳ₊ + logit ȳ₋) / 2).
        let longer = [0.9, 0.8, 0.9, 0.8, 0.9, 0.8];
        let shorter = [0.4, 0.2];
        let mut p_b: Vec<f64> = longer.to_vec();
        p_b.extend(shorter);
        let mut differences = vec![10.0; longer.len()];
        differences.extend(vec![-10.0; shorter.len()]);
        let logit = |p: f64| (p / (1.0 - p)).ln();
        let (up, down) = (0.85f64, 0.3f64);
        let expected = 1.0 / (1.0 + (-(logit(up) + logit(down)) / 2.0).exp());
        let lc = length_controlled_win_rate(&p_b, &differences).unwrap();
        assert!((lc.win_rate - expected).abs() < 1e-9, "{} vs {expected}", lc.win_rate);
        assert!(lc.slope > 0.0, "the longer answers won more");
        let plain = p_b.iter().sum::<f64>() / p_b.len() as f64;
        assert!(lc.win_rate < plain, "B's length bought it wins: {} < {plain}", lc.win_rate);
        // sd of Δwords: the mean is +5, deviations 5 and 15: sqrt((6·25 + 2·225) / 8).
        assert!((lc.length_scale - (600.0f64 / 8.0).sqrt()).abs() < 1e-12);
        assert_eq!(length_controlled_win_rate(&[], &[]), None);
    }

    #[test]
    fn no_rate_at_equal_length_when_one_run_is_nearly_always_longer() {
        // 19 of 20 questions B longer: equal length is outside what was seen.
        let mut differences = vec![25.0; 19];
        differences.push(-5.0);
        let p_b: Vec<f64> = (0..20).map(|i| if i < 19 { 0.9 } else { 0.4 }).collect();
        assert!(!equal_length_observed(&differences));
        assert_eq!(length_controlled_win_rate(&p_b, &differences), None);
        // Two of 20 on the other side (a tenth): read.
        differences[18] = -3.0;
        assert!(equal_length_observed(&differences));
        assert!(length_controlled_win_rate(&p_b, &differences).is_some());
        // Equal lengths everywhere count for both sides.
        assert!(equal_length_observed(&[0.0, 0.0]));
    }
}
