//! The pairwise comparison of two runs as the faces and reports show it: every question's
//! judgment (both orders), the statistics over them, the verdict by the rule every metric of a
//! comparison uses, and the sentence it leads with. Made by `run::pairwise_compare` (it runs the
//! judge); everything here is computed from the stored judgments.

use super::headline::format_p;
use super::paired::{Verdict, ALPHA, MIN_PAIRS_FOR_VERDICT};
use crate::record::PairwiseJudgment;
use crate::stats::{pairwise_statistics, PairwiseStatistics};
use serde::Serialize;

/// The seed of a pairwise comparison's bootstrap and permutation draws (fixed: the same
/// judgments always give the same figures, in the terminal, the app and every report).
pub const PAIRWISE_SEED: u64 = 0;

/// Shown instead of a win rate at equal length when one run's answer was the longer on
/// nearly every question (`stats::equal_length_observed`).
pub const NO_EQUAL_LENGTH: &str = "not read: one run's answer is the longer on nearly every question, so equal length was never observed";

/// The comparison: every judgment and the statistics over them.
#[derive(Debug, Clone, Serialize)]
pub struct PairwiseOutcome {
    /// Which two runs and judge, and how the judgments came to be (its fields sit at the top
    /// level of the JSON, beside the judgments).
    #[serde(flatten)]
    pub source: PairwiseSource,
    /// One per question both runs answered, in run A's order.
    pub judgments: Vec<PairwiseJudgment>,
    /// None when no question could be scored.
    pub statistics: Option<PairwiseStatistics>,
    /// The judge read each answer alone (an absolute judge's scores compared), so no order
    /// was shown and the order-consistency figure says nothing.
    pub each_answer_alone: bool,
    pub verdict: Verdict,
    /// The verdict in words, naming the better run ("careful better").
    pub verdict_text: String,
    /// The sentence the comparison leads with, naming the better run.
    pub headline: String,
}

/// Which two runs, which judge, and how the judgments came to be: what a `PairwiseOutcome` is
/// assembled from besides the judgments themselves.
#[derive(Debug, Clone, Serialize)]
pub struct PairwiseSource {
    pub run_a: String,
    pub name_a: String,
    pub run_b: String,
    pub name_b: String,
    pub judge: String,
    pub judge_sha256: String,
    pub judge_model: String,
    /// How this comparison's new judgments were read (None when every one was reused).
    pub scoring: Option<String>,
    /// Questions only one of the runs answered (left out).
    pub excluded: usize,
    /// Judgments read from the store / made now.
    pub reused: usize,
    pub judged: usize,
}

/// The outcome of these judgments: statistics, verdict and headline, computed here and nowhere
/// else, whether the judge has just run or the judgments were read back for a report.
pub fn pairwise_outcome(source: PairwiseSource, judgments: Vec<PairwiseJudgment>) -> PairwiseOutcome {
    let statistics = pairwise_statistics(&judgments, PAIRWISE_SEED);
    let verdict = pairwise_verdict(statistics.as_ref());
    let verdict_text = verdict.describe(&source.name_a, &source.name_b);
    let each_answer_alone = judgments.iter().any(|j| j.scores.is_some());
    let mut outcome = PairwiseOutcome { source, judgments, statistics, each_answer_alone, verdict, verdict_text, headline: String::new() };
    outcome.headline = pairwise_headline(&outcome);
    outcome
}

/// The verdict rule of every comparison: at least `MIN_PAIRS_FOR_VERDICT` questions, the
/// permutation test's p below `ALPHA` and the win rate's interval wholly on one side of 0.5.
pub fn pairwise_verdict(statistics: Option<&PairwiseStatistics>) -> Verdict {
    let Some(s) = statistics else { return Verdict::NoPairs };
    if s.pairs < MIN_PAIRS_FOR_VERDICT {
        return Verdict::TooFewPairs;
    }
    if s.permutation_p < ALPHA && s.win_rate_ci95[0] > 0.5 {
        Verdict::BBetter
    } else if s.permutation_p < ALPHA && s.win_rate_ci95[1] < 0.5 {
        Verdict::ABetter
    } else {
        Verdict::NoSignificantDifference
    }
}

/// The sentence a pairwise comparison leads with, computed from its figures.
pub fn pairwise_headline(outcome: &PairwiseOutcome) -> String {
    let Some(s) = &outcome.statistics else {
        return format!(
            "Pairwise ({} on {}): no question both runs answered could be judged.",
            outcome.source.judge, outcome.source.judge_model
        );
    };
    let length = s
        .length_controlled
        .as_ref()
        .map(|l| format!(" ({:.3} at equal length)", l.win_rate))
        .unwrap_or_default();
    let order = if outcome.each_answer_alone {
        "each answer judged alone".to_string()
    } else {
        format!("same winner in both orders on {:.0}%", 100.0 * s.order_consistency)
    };
    format!(
        "Pairwise ({} on {}), {} questions: {} preferred on {}, tie {}, {} on {}; win rate of {} {:.3} [{:.3}, {:.3}]{length}, p = {}; {order}: {}.",
        outcome.source.judge,
        outcome.source.judge_model,
        s.pairs,
        outcome.source.name_b,
        s.wins,
        s.ties,
        outcome.source.name_a,
        s.losses,
        outcome.source.name_b,
        s.win_rate,
        s.win_rate_ci95[0],
        s.win_rate_ci95[1],
        format_p(s.permutation_p),
        outcome.verdict_text
    )
}
