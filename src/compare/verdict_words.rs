//! A metric's verdict in words that agree with the figures beside it. The bare verdict says
//! "no significant difference" also where the interval of B − A excludes zero; a reader then
//! sees two figures that seem to disagree. These words say which test decided: for a secondary
//! metric the Holm-adjusted p (never below the primary's), for the primary its own p. A
//! verdict on runs that differ in more than one setting is marked confounded.

use super::headline::format_p;
use super::paired::{PairedDiff, Verdict, ALPHA};

/// The verdict on `d` in words, `a` and `b` naming the runs.
pub fn verdict_words(d: &PairedDiff, a: &str, b: &str, confounded: bool) -> String {
    let excludes_zero = d.ci95_diff[0] > 0.0 || d.ci95_diff[1] < 0.0;
    let words = match d.verdict {
        Verdict::NoSignificantDifference if excludes_zero && !d.primary => {
            format!("not significant after Holm adjustment (p_adj = {})", format_p(d.adjusted_p))
        }
        Verdict::NoSignificantDifference if excludes_zero => {
            format!("no significant difference (p = {} is not under {ALPHA}, though the interval excludes zero)", format_p(d.adjusted_p))
        }
        Verdict::NoSignificantDifference if d.adjusted_p < ALPHA => {
            format!("no significant difference (p = {} but the interval includes zero)", format_p(d.adjusted_p))
        }
        other => other.describe(a, b),
    };
    if confounded && matches!(d.verdict, Verdict::ABetter | Verdict::BBetter) {
        format!("{words} (confounded)")
    } else {
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::paired_diff;

    /// Twelve pairs where B is ahead by 0.1 on each: the interval lies above zero.
    fn ahead() -> PairedDiff {
        let pairs: Vec<(String, f64, f64)> =
            (0..12).map(|i| (format!("q{i}"), 0.5 + 0.01 * i as f64, 0.6 + 0.01 * i as f64)).collect();
        paired_diff("token_f1", &pairs, 0, 7)
    }

    #[test]
    fn a_secondary_metric_off_zero_but_over_the_holm_threshold_says_so() {
        let mut d = ahead();
        assert!(d.ci95_diff[0] > 0.0, "{:?}", d.ci95_diff);
        d.adjusted_p = 0.0612;
        d.verdict = Verdict::NoSignificantDifference;
        assert_eq!(verdict_words(&d, "A", "B", false), "not significant after Holm adjustment (p_adj = 0.0612)");
    }

    #[test]
    fn a_significant_verdict_on_confounded_runs_is_marked() {
        let mut d = ahead();
        d.primary = true;
        d.verdict = Verdict::BBetter;
        assert_eq!(verdict_words(&d, "A", "B", true), "B better (confounded)");
        assert_eq!(verdict_words(&d, "A", "B", false), "B better");
    }

    #[test]
    fn a_plain_no_difference_stays_plain() {
        let pairs: Vec<(String, f64, f64)> = (0..12).map(|i| (format!("q{i}"), 0.5, if i % 2 == 0 { 0.6 } else { 0.4 })).collect();
        let d = paired_diff("token_f1", &pairs, 0, 7);
        assert_eq!(d.verdict, Verdict::NoSignificantDifference);
        assert_eq!(verdict_words(&d, "A", "B", true), "no significant difference");
    }
}
