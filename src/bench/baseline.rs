//! Each retrieval mode of a quality bench against the plain baseline, question by question:
//! is "answer in the top 5" really better than the baseline's, or within what chance gives?
//!
//! The same paired statistics as `assay compare` (permutation test, BCa interval of the
//! difference, wins and losses). Every mode is one claim about the same baseline, so the p
//! values are Holm-adjusted over all the modes compared: with six modes, one lucky mode does
//! not make a "better".

use super::retrieval::QualityBench;
use crate::compare::{adjust_secondary, paired_diff, PairedDiff};
use serde::Serialize;

/// The metric compared: share of questions whose golden answer the top 5 chunks hold.
pub const ANSWER_IN_TOP_5: &str = "answer_in_top_5";

/// The name of the bench row every mode is compared with.
const BASELINE_ROW: &str = "baseline";

/// One mode (`hybrid`, `bm25+rerank`, …) against the baseline; in `diff` A is the baseline.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModeAgainstBaseline {
    pub method: String,
    pub diff: PairedDiff,
}

/// Every non-baseline row of `bench` against its baseline row on answer-in-top-5. Questions
/// without an answer to look for in either row are left out (counted as excluded). Empty when
/// the bench has no baseline row or no per-question outcomes.
pub fn against_baseline(bench: &QualityBench, seed: u64) -> Vec<ModeAgainstBaseline> {
    let Some(baseline) = bench.rows.iter().find(|r| r.method == BASELINE_ROW) else {
        return Vec::new();
    };
    let rows: Vec<_> = bench
        .rows
        .iter()
        .filter(|r| r.method != BASELINE_ROW && !r.answer_found.is_empty())
        .filter(|r| r.answer_found.len() == baseline.answer_found.len())
        .collect();
    let mut diffs: Vec<PairedDiff> = rows
        .iter()
        .map(|row| {
            let mut pairs = Vec::new();
            let mut excluded = 0;
            for (i, (a, b)) in baseline.answer_found.iter().zip(&row.answer_found).enumerate() {
                match (a, b) {
                    (Some(a), Some(b)) => {
                        let id = bench.question_ids.get(i).cloned().unwrap_or_else(|| format!("#{}", i + 1));
                        pairs.push((id, f64::from(u8::from(*a)), f64::from(u8::from(*b))));
                    }
                    (None, None) => {}
                    _ => excluded += 1,
                }
            }
            paired_diff(ANSWER_IN_TOP_5, &pairs, excluded, seed)
        })
        .collect();
    // No diff is primary, so this is Holm over all the modes, verdicts recomputed from it.
    adjust_secondary(&mut diffs);
    rows.iter()
        .zip(diffs)
        .map(|(row, diff)| ModeAgainstBaseline { method: row.method.clone(), diff })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Verdict;
    use crate::corpus::ChunkSettings;
    use crate::bench::retrieval::QualityRow;

    fn row(method: &str, found: &[Option<bool>]) -> QualityRow {
        let answered: Vec<bool> = found.iter().flatten().copied().collect();
        QualityRow {
            method: method.into(),
            questions: found.len(),
            hit_at_1: 0.0,
            hit_at_5: 0.0,
            mrr: 0.0,
            answer_in_top_5: answered.iter().filter(|f| **f).count() as f64 / answered.len() as f64,
            answer_found: found.to_vec(),
            rerank_seconds_per_question: None,
            rerank_tokens_per_question: None,
        }
    }

    fn bench(rows: Vec<QualityRow>) -> QualityBench {
        QualityBench {
            dataset: "d".into(),
            chunk_settings: ChunkSettings::default(),
            chunks: 0,
            question_ids: (0..rows[0].answer_found.len()).map(|i| format!("q{i}")).collect(),
            rows,
            baseline_text: String::new(),
            not_measured: Vec::new(),
            reranker: None,
        }
    }

    #[test]
    fn a_mode_that_finds_many_more_answers_is_better_and_one_that_ties_is_not() {
        // 40 questions: the baseline finds 20; "strong" finds those and 16 more; "same" finds
        // exactly the baseline's; the last question has no answer to look for.
        let mut base = vec![Some(true); 20];
        base.extend(vec![Some(false); 20]);
        base.push(None);
        let mut strong = vec![Some(true); 36];
        strong.extend(vec![Some(false); 4]);
        strong.push(None);
        let modes = against_baseline(&bench(vec![row("strong", &strong), row("same", &base), row("baseline", &base)]), 7);
        assert_eq!(modes.len(), 2);
        let strong = &modes[0].diff;
        assert_eq!((strong.pairs, strong.excluded, strong.wins, strong.losses), (40, 0, 16, 0));
        assert!((strong.mean_diff - 0.4).abs() < 1e-12);
        assert_eq!(strong.verdict, Verdict::BBetter);
        assert!(strong.adjusted_p >= strong.permutation_p);
        assert_eq!(modes[1].diff.verdict, Verdict::NoSignificantDifference);
        assert_eq!(modes[1].diff.mean_diff, 0.0);
    }

    #[test]
    fn a_bench_without_a_baseline_or_outcomes_compares_nothing() {
        let found = [Some(true), Some(false)];
        assert!(against_baseline(&bench(vec![row("hybrid", &found)]), 1).is_empty());
        assert!(against_baseline(&bench(vec![row("hybrid", &[]), row("baseline", &[])]), 1).is_empty());
    }
}
