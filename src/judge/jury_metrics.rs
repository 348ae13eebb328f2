//! Deterministic scores a jury may take as members beside model judges: overlap with the
//! reference (`rouge_l`, `rouge_1`, `token_f1`, `bleu`, and `statement_overlap`, the same
//! statement by statement). A small judge's probabilities and a
//! word-overlap F-measure err in different ways — the judge on wording, the overlap on meaning
//! and on length — so their mean ranks long answers better than either alone (measured in
//! docs/judge-agreement.md). Computed here from the item, so a jury needs no run metrics.
//!
//! Numbers are written one way first (`metrics::numbers::written_as_the_reference`): `$4.2 billion` and
//! `4,200 million dollars`, `3.5%` and `3.5 percent`, `FY2023` and `fiscal year 2023` are the
//! same words to every member here. The run metrics of the same names (`rouge_l`, `token_f1`)
//! compare the text as written, as their reference implementations do.

use super::statement_overlap::statement_overlap;
use crate::metrics::{bleu, lexical, numbers::written_as_the_reference, rouge};

/// Metric names a jury may list in `members`.
pub const JURY_METRICS: &[&str] = &["rouge_l", "rouge_1", "token_f1", "bleu", "statement_overlap"];

/// Whether `name` is a metric a jury computes itself rather than a judge.
pub fn is_jury_metric(name: &str) -> bool {
    JURY_METRICS.contains(&name)
}

/// The metric's score of `answer` against `reference` (None: not a jury metric).
pub fn jury_metric(name: &str, answer: &str, reference: &str) -> Option<f64> {
    if !is_jury_metric(name) {
        return None;
    }
    let (answer, reference) = written_as_the_reference(answer, reference);
    let (answer, reference) = (answer.as_str(), reference.as_str());
    Some(match name {
        "rouge_l" => rouge::rouge_l(answer, reference),
        "rouge_1" => rouge::rouge_1(answer, reference),
        "token_f1" => lexical::token_f1(answer, reference),
        "bleu" => bleu::bleu(answer, reference),
        "statement_overlap" => statement_overlap(answer, reference),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jury_metrics_are_scores_of_the_answer_against_the_reference() {
        let (a, r) = ("Revenue rose 4% to $31.8 billion.", "Net revenue rose 4% to $31.8 billion in 2022.");
        for name in JURY_METRICS {
            let score = jury_metric(name, a, r).expect("a jury metric");
            assert!((0.0..=1.0).contains(&score), "{name} {score}");
        }
        assert_eq!(jury_metric("correct", a, r), None);
    }

    #[test]
    fn a_figure_in_another_scale_counts_as_the_same_words() {
        let reference = "Net revenue was $4.2 billion in FY2023, up 3.5%.";
        let rescaled = "Net revenue was 4,200 million dollars in fiscal year 2023, up 3.5 percent.";
        let wrong = "Net revenue was 4,200 thousand dollars in fiscal year 2023, up 3.5 percent.";
        // As written, the rescaled figures share none of the reference's number words.
        assert!(rouge::rouge_l(rescaled, reference) < 0.8);
        for name in JURY_METRICS {
            let same = jury_metric(name, rescaled, reference).unwrap_or(0.0);
            let other = jury_metric(name, wrong, reference).unwrap_or(1.0);
            assert!(same > other, "{name}: {same} vs {other}");
        }
        assert_eq!(jury_metric("rouge_l", rescaled, reference), Some(1.0));
    }
}
