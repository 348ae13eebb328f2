//! Deterministic scores a jury may take as members beside model judges: overlap with the
//! reference (`rouge_l`, `rouge_1`, `token_f1`, `bleu`, and `statement_overlap`, the same
//! statement by statement). A small judge's probabilities and a
//! word-overlap F-measure err in different ways — the judge on wording, the overlap on meaning
//! and on length — so their mean ranks long answers better than either alone (measured in
//! docs/judge-agreement.md). Computed here from the item, so a jury needs no run metrics.

use super::statement_overlap::statement_overlap;
use crate::metrics::{bleu, lexical, rouge};

/// Metric names a jury may list in `members`.
pub const JURY_METRICS: &[&str] = &["rouge_l", "rouge_1", "token_f1", "bleu", "statement_overlap"];

/// Whether `name` is a metric a jury computes itself rather than a judge.
pub fn is_jury_metric(name: &str) -> bool {
    JURY_METRICS.contains(&name)
}

/// The metric's score of `answer` against `reference` (None: not a jury metric).
pub fn jury_metric(name: &str, answer: &str, reference: &str) -> Option<f64> {
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
        assert_eq!(jury_metric("rouge_l", a, r), Some(rouge::rouge_l(a, r)));
        assert_eq!(jury_metric("correct", a, r), None);
    }
}
