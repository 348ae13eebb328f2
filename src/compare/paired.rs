//! Pairing two runs item by item and measuring their difference per metric.
//!
//! The decision rule: one metric is primary (named by the user; by default the first judge, else
//! token F1) and is tested first, on its own. The others are secondary and tested behind it (a
//! fixed sequence, as clinical trials gate secondary endpoints): a secondary metric's adjusted p
//! is the larger of its Holm p over the secondary family and the primary's p. So the chance
//! that two equivalent systems get a "better" on any metric stays at 5%, and the primary keeps
//! its full power. "B better" needs the adjusted permutation-test p below 0.05 and the BCa
//! interval of B − A above zero, so the words never contradict the figures shown beside them.

use super::settings::SettingsDiff;
use super::sign_test::sign_test_p;
use crate::stats::RunReport;
use crate::stats::{holm, mean, mean_bca95, mean_ci95, normal_quantile, paired_permutation_p};
use serde::Serialize;

/// How many of the most different questions a comparison keeps per metric.
const DISAGREEMENTS_KEPT: usize = 5;

/// The significance level of every verdict.
pub const ALPHA: f64 = 0.05;

/// The metric a comparison decides on when none is named: token F1 when no judge ran.
pub const DEFAULT_PRIMARY_METRIC: &str = "token_f1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Adjusted p < 0.05 and the interval of B − A lies below zero.
    ABetter,
    /// Adjusted p < 0.05 and the interval of B − A lies above zero.
    BBetter,
    NoSignificantDifference,
    /// Fewer than `MIN_PAIRS_FOR_VERDICT` questions scored in both runs.
    TooFewPairs,
    /// No question scored in both runs.
    NoPairs,
}

/// Fewer pairs than this get no verdict: on a handful of questions every interval is unreliable,
/// and even five wins out of five is not significant (sign test p = 0.0625).
pub const MIN_PAIRS_FOR_VERDICT: usize = 10;

impl Verdict {
    pub fn describe(self, a: &str, b: &str) -> String {
        match self {
            Verdict::ABetter => format!("{a} better"),
            Verdict::BBetter => format!("{b} better"),
            Verdict::NoSignificantDifference => "no significant difference".into(),
            Verdict::TooFewPairs => format!("too few pairs for a verdict (under {MIN_PAIRS_FOR_VERDICT})"),
            Verdict::NoPairs => "no paired items".into(),
        }
    }
}

/// One question where the runs differ, `b - a`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Disagreement {
    pub question_id: String,
    pub a: f64,
    pub b: f64,
    pub diff: f64,
}

/// The comparison of run B against baseline run A on one metric or judge.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairedDiff {
    pub metric: String,
    /// Questions scored in both runs.
    pub pairs: usize,
    /// Questions scored in only one of the runs (unscored or missing in the other).
    pub excluded: usize,
    pub mean_a: f64,
    pub ci95_a: [f64; 2],
    pub mean_b: f64,
    pub ci95_b: [f64; 2],
    /// Mean of B − A over the pairs.
    pub mean_diff: f64,
    pub ci95_diff: [f64; 2],
    /// Questions where B scored higher / the same / lower than A.
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    /// Descriptive: the two-sided sign test on wins against losses.
    pub sign_test_p: f64,
    /// Two-sided paired permutation (sign-flip) test of the mean difference.
    pub permutation_p: f64,
    /// `permutation_p` adjusted for testing several metrics: for a secondary metric the larger
    /// of its Holm p (over the secondary ones) and the primary's p; the primary's is its own.
    /// The verdict uses this one.
    pub adjusted_p: f64,
    /// True for the metric the comparison decides on.
    pub primary: bool,
    /// For a primary metric with no significant difference: the smallest true mean difference
    /// these pairs would detect with 80% power at the 5% level (from the spread of B − A).
    pub min_detectable_diff: Option<f64>,
    pub verdict: Verdict,
    /// The verdict in words that agree with the figures (`verdict_words`): which p decided,
    /// and "(confounded)" on runs that differ in more than one setting.
    pub verdict_text: String,
    pub disagreements: Vec<Disagreement>,
}

/// Run B compared with baseline run A.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub run_a: String,
    pub name_a: String,
    pub run_b: String,
    pub name_b: String,
    /// False when the runs were made on different versions of the dataset: pairs are still
    /// matched by question id, but the reader should know.
    pub same_dataset: bool,
    /// The metric the headline verdict is on (its diff has `primary` set); None when neither
    /// run has it.
    pub primary: Option<String>,
    /// The primary metric first, then the secondary ones by name.
    pub diffs: Vec<PairedDiff>,
    /// Both runs' settings side by side, and whether more than one differs (confounded).
    pub settings: SettingsDiff,
    /// The sentence the comparison leads with (`headline`), computed from the figures above.
    pub headline: String,
}

impl Comparison {
    pub fn primary_diff(&self) -> Option<&PairedDiff> {
        self.diffs.iter().find(|d| d.primary)
    }
}

/// The primary metric when none is named: the first judge the runs used that scored something
/// (in B's config order, then A's; a claims judge scores under other names), else token F1,
/// else the first metric either run has.
pub fn default_primary(a: &RunReport, b: &RunReport) -> String {
    let scored = |name: &str| a.summary.metrics.contains_key(name) || b.summary.metrics.contains_key(name);
    b.run
        .config
        .judges
        .iter()
        .chain(&a.run.config.judges)
        .map(String::as_str)
        .chain([DEFAULT_PRIMARY_METRIC])
        .find(|name| scored(name))
        .map(str::to_string)
        .or_else(|| a.summary.metrics.keys().chain(b.summary.metrics.keys()).min().cloned())
        .unwrap_or_else(|| DEFAULT_PRIMARY_METRIC.to_string())
}

/// The secondary metrics' adjusted p (Holm over those with pairs to test, gated by the
/// primary's p when the primary was tested), then every verdict again from the adjusted p.
/// The primary metric keeps its own p, and only it gets a minimum detectable difference.
pub fn adjust_secondary(diffs: &mut [PairedDiff]) {
    let gate = diffs.iter().find(|d| d.primary && d.pairs > 0).map_or(0.0, |d| d.permutation_p);
    let tested: Vec<usize> = (0..diffs.len()).filter(|i| !diffs[*i].primary && diffs[*i].pairs > 0).collect();
    let raw: Vec<f64> = tested.iter().map(|i| diffs[*i].permutation_p).collect();
    for (i, p) in tested.iter().zip(holm(&raw)) {
        diffs[*i].adjusted_p = p.max(gate);
    }
    for d in diffs.iter_mut() {
        if d.primary {
            d.adjusted_p = d.permutation_p;
        }
        d.verdict = verdict(d.pairs, d.adjusted_p, d.ci95_diff);
        if !d.primary || matches!(d.verdict, Verdict::ABetter | Verdict::BBetter) {
            d.min_detectable_diff = None;
        }
    }
}

/// The verdict rule: enough pairs, adjusted p under `ALPHA`, and the interval on one side of zero.
fn verdict(pairs: usize, adjusted_p: f64, ci: [f64; 2]) -> Verdict {
    if pairs == 0 {
        Verdict::NoPairs
    } else if pairs < MIN_PAIRS_FOR_VERDICT {
        Verdict::TooFewPairs
    } else if adjusted_p < ALPHA && ci[0] > 0.0 {
        Verdict::BBetter
    } else if adjusted_p < ALPHA && ci[1] < 0.0 {
        Verdict::ABetter
    } else {
        Verdict::NoSignificantDifference
    }
}

/// The smallest true mean difference a two-sided 5% test on `n` pairs with this spread would
/// find with 80% power (normal approximation: (z₀.₉₇₅ + z₀.₈) · sd / √n).
pub fn min_detectable_diff(diffs: &[f64]) -> Option<f64> {
    let n = diffs.len();
    if n < 2 {
        return None;
    }
    let m = diffs.iter().sum::<f64>() / n as f64;
    let sd = (diffs.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    // Identical differences say nothing about the spread a real difference would have.
    if sd == 0.0 {
        return None;
    }
    Some((normal_quantile(1.0 - ALPHA / 2.0) + normal_quantile(0.8)) * sd / (n as f64).sqrt())
}

/// The statistics of one metric over `(question, a, b)` pairs.
pub fn paired_diff(metric: &str, pairs: &[(String, f64, f64)], excluded: usize, seed: u64) -> PairedDiff {
    let a: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    let diffs: Vec<f64> = pairs.iter().map(|p| p.2 - p.1).collect();
    // Exact float equality is intended: metrics are computed the same way on both sides.
    let wins = diffs.iter().filter(|d| **d > 0.0).count();
    let losses = diffs.iter().filter(|d| **d < 0.0).count();
    let ties = diffs.len() - wins - losses;
    // Resampling the differences is resampling whole pairs: each question's two scores stay
    // together, which makes the interval paired.
    let ci_diff = mean_bca95(&diffs, seed);
    let permutation_p = paired_permutation_p(&diffs, seed);
    let mut disagreements: Vec<Disagreement> = pairs
        .iter()
        .filter(|p| p.2 != p.1)
        .map(|p| Disagreement {
            question_id: p.0.clone(),
            a: p.1,
            b: p.2,
            diff: p.2 - p.1,
        })
        .collect();
    disagreements.sort_by(|x, y| {
        y.diff
            .abs()
            .total_cmp(&x.diff.abs())
            .then_with(|| x.question_id.cmp(&y.question_id))
    });
    disagreements.truncate(DISAGREEMENTS_KEPT);
    let pair = |ci: Option<(f64, f64)>| ci.map(|(l, h)| [l, h]).unwrap_or([f64::NAN, f64::NAN]);
    let ci95_diff = pair(ci_diff);
    PairedDiff {
        metric: metric.to_string(),
        pairs: pairs.len(),
        excluded,
        mean_a: mean(&a).unwrap_or(f64::NAN),
        ci95_a: pair(mean_ci95(&a, seed)),
        mean_b: mean(&b).unwrap_or(f64::NAN),
        ci95_b: pair(mean_ci95(&b, seed)),
        mean_diff: mean(&diffs).unwrap_or(f64::NAN),
        ci95_diff,
        wins,
        ties,
        losses,
        sign_test_p: sign_test_p(wins, losses),
        permutation_p,
        adjusted_p: permutation_p,
        primary: false,
        min_detectable_diff: min_detectable_diff(&diffs),
        verdict: verdict(pairs.len(), permutation_p, ci95_diff),
        verdict_text: String::new(),
        disagreements,
    }
}
