//! A pairwise comparison laid out for the HTML and Markdown exports: the headline, the figures
//! (wins/ties/losses, win rate with its interval, p, verdict, order consistency, the win rate
//! at equal length) and one row per question with each order's winner (or, for a judge of each
//! answer alone, the two answers' scores). Everything is read from
//! a `compare::PairwiseOutcome` (judgments stored by `assay compare --pairwise` or the app);
//! nothing is judged or computed here beyond formatting.

use crate::compare::{PairwiseOutcome, NO_EQUAL_LENGTH};
use crate::record::{PairwiseJudgment, FIRST_ANSWER, SECOND_ANSWER, TIE};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub(crate) struct PairwiseView {
    pub name_a: String,
    pub name_b: String,
    pub judge: String,
    pub judge_model: String,
    pub headline: String,
    pub verdict: String,
    /// "12 / 3 / 5": B preferred / tie / A preferred.
    pub wtl: String,
    pub win_rate: String,
    pub p: String,
    pub order_consistency: String,
    /// Each answer was judged alone (its scores shown in place of each order's winner).
    pub each_answer_alone: bool,
    pub length_controlled: String,
    /// Questions only one run answered, or not judged with this judge.
    pub excluded: usize,
    pub questions: Vec<PairwiseQuestionView>,
}

#[derive(Serialize)]
pub(crate) struct PairwiseQuestionView {
    pub id: String,
    /// The order-averaged probability that B's answer is better, ties split ("—" unscored).
    pub p_b: String,
    /// Which run each order's most probable reply named.
    pub a_first: &'static str,
    pub b_first: &'static str,
    /// A judge of each answer alone: "0.812 / 0.304", A's score then B's ("—" otherwise).
    pub scores: String,
    pub consistent: bool,
    pub preferred: &'static str,
    pub words: String,
    /// Flags and any error, in words.
    pub notes: String,
}

/// The run an order's most probable reply names: with A's answer first, `1` is A.
fn order_winner(distribution: &BTreeMap<String, f64>, a_first: bool) -> &'static str {
    let p = |outcome: &str| distribution.get(outcome).copied().unwrap_or(0.0);
    let (first, second, tie) = (p(FIRST_ANSWER), p(SECOND_ANSWER), p(TIE));
    if distribution.is_empty() {
        "—"
    } else if tie >= first && tie >= second {
        "tie"
    } else if (first > second) == a_first {
        "A"
    } else {
        "B"
    }
}

fn question_view(judgment: &PairwiseJudgment) -> PairwiseQuestionView {
    let mut notes = judgment.flags.clone();
    notes.extend(judgment.error.iter().map(|e| format!("not judged: {e}")));
    PairwiseQuestionView {
        id: judgment.id.clone(),
        p_b: judgment.preference.map(|p| format!("{:.3}", p.p_b)).unwrap_or_else(|| "—".into()),
        a_first: order_winner(&judgment.a_first, true),
        b_first: order_winner(&judgment.b_first, false),
        scores: judgment.scores.map(|[a, b]| format!("{a:.3} / {b:.3}")).unwrap_or_else(|| "—".into()),
        consistent: judgment.preference.is_some_and(|p| p.order_consistent),
        preferred: match judgment.preference.map(|p| p.preferred) {
            Some(crate::record::Preferred::A) => "A",
            Some(crate::record::Preferred::B) => "B",
            Some(crate::record::Preferred::Tie) => "tie",
            None => "—",
        },
        words: format!("{} / {}", judgment.words_a, judgment.words_b),
        notes: notes.join("; "),
    }
}

pub(crate) fn pairwise_view(outcome: &PairwiseOutcome) -> PairwiseView {
    let stats = outcome.statistics.as_ref();
    let or_dash = |text: Option<String>| text.unwrap_or_else(|| "—".into());
    PairwiseView {
        name_a: outcome.source.name_a.clone(),
        name_b: outcome.source.name_b.clone(),
        judge: outcome.source.judge.clone(),
        judge_model: outcome.source.judge_model.clone(),
        headline: outcome.headline.clone(),
        verdict: outcome.verdict_text.clone(),
        wtl: or_dash(stats.map(|s| format!("{} / {} / {}", s.wins, s.ties, s.losses))),
        win_rate: or_dash(stats.map(|s| format!("{:.3} [{:.3}, {:.3}]", s.win_rate, s.win_rate_ci95[0], s.win_rate_ci95[1]))),
        p: or_dash(stats.map(|s| crate::compare::format_p(s.permutation_p))),
        order_consistency: match stats {
            Some(_) if outcome.each_answer_alone => "each answer judged alone: no order".to_string(),
            _ => or_dash(stats.map(|s| format!("{:.0}% ({} of {})", 100.0 * s.order_consistency, s.order_consistent, s.pairs))),
        },
        each_answer_alone: outcome.each_answer_alone,
        length_controlled: match stats {
            None => or_dash(None),
            Some(s) => match &s.length_controlled {
                Some(l) => format!("{:.3} (slope on length {:+.2})", l.win_rate, l.slope),
                None => NO_EQUAL_LENGTH.to_string(),
            },
        },
        excluded: outcome.source.excluded,
        questions: outcome.judgments.iter().map(question_view).collect(),
    }
}
