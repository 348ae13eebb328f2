//! A run's summary: for each metric and judge, the mean, its 95% interval, how many items it
//! scored and how many could not be scored (the target or the judge failed on them); for
//! judges also the Spearman of their score with the answer's length.

use super::bootstrap::{mean, mean_ci95};
use crate::metrics::rank_correlation::length_spearman;
use crate::record::ItemRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MetricSummary {
    pub mean: f64,
    pub ci95: [f64; 2],
    /// Items scored.
    pub n: usize,
    /// Items that should have been scored but errored.
    pub unscored: usize,
    /// Judges with a pass threshold: the share of scored items that passed (the label), beside
    /// the mean score (the expected value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Judges: Spearman of the score with the answer's length in words (a judge that scores
    /// long answers high whatever they say shows here); None for metrics or when undefined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_spearman: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    /// Items committed.
    pub items: usize,
    /// Items whose target failed.
    pub errors: usize,
    /// Mean target latency over items that have an answer.
    pub avg_latency_ms: Option<f64>,
    pub avg_prompt_tokens: Option<f64>,
    pub avg_completion_tokens: Option<f64>,
    /// Deterministic metrics and judges, by name (judges as `judge:<name>` never collide with
    /// metric names because judge names are validated separately).
    pub metrics: BTreeMap<String, MetricSummary>,
    /// For each flag a deterministic check set (`possible injection`), how many items carry it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flagged: BTreeMap<String, usize>,
}

pub fn summarize(items: &[ItemRecord], seed: u64) -> RunSummary {
    let errors = items.iter().filter(|i| i.error.is_some()).count();
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut unscored: BTreeMap<String, usize> = BTreeMap::new();
    let mut passed: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    // Per judge: (score, answer text) of every scored item with an answer.
    let mut lengths: BTreeMap<String, Vec<(f64, &str)>> = BTreeMap::new();
    for item in items {
        for (name, value) in &item.metrics {
            values.entry(name.clone()).or_default().push(*value);
        }
        for (judge, verdict) in &item.verdicts {
            match verdict.score {
                Some(score) => {
                    values.entry(judge.clone()).or_default().push(score);
                    if let Some(answer) = &item.answer {
                        lengths.entry(judge.clone()).or_default().push((score, answer.text.as_str()));
                    }
                    if let Some(pass) = verdict.passed {
                        let counts = passed.entry(judge.clone()).or_default();
                        counts.0 += usize::from(pass);
                        counts.1 += 1;
                    }
                }
                None => *unscored.entry(judge.clone()).or_default() += 1,
            }
        }
    }
    let metrics = values
        .into_iter()
        .filter_map(|(name, v)| {
            let (lo, hi) = mean_ci95(&v, seed)?;
            let summary = MetricSummary {
                mean: mean(&v)?,
                ci95: [lo, hi],
                n: v.len(),
                // A failed target item would have been scored by every metric.
                unscored: errors + unscored.get(&name).copied().unwrap_or(0),
                pass_rate: passed.get(&name).filter(|c| c.1 > 0).map(|(p, n)| *p as f64 / *n as f64),
                length_spearman: lengths.get(&name).and_then(|l| length_spearman(l.iter().copied())),
            };
            Some((name, summary))
        })
        .collect();
    let answered: Vec<_> = items.iter().filter_map(|i| i.answer.as_ref()).collect();
    let latencies: Vec<f64> = answered.iter().map(|a| a.latency_ms as f64).collect();
    let prompt: Vec<f64> = answered
        .iter()
        .filter_map(|a| a.prompt_tokens.map(f64::from))
        .collect();
    let completion: Vec<f64> = answered
        .iter()
        .filter_map(|a| a.completion_tokens.map(f64::from))
        .collect();
    RunSummary {
        items: items.len(),
        errors,
        avg_latency_ms: mean(&latencies),
        avg_prompt_tokens: mean(&prompt),
        avg_completion_tokens: mean(&completion),
        metrics,
        flagged: super::flags::flagged_counts(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Question;
    use crate::record::Verdict;

    fn item(id: &str, verdict: Verdict) -> ItemRecord {
        ItemRecord {
            question: Question { id: id.into(), question: "q".into(), ..Question::default() },
            verdicts: [("correct".to_string(), verdict)].into(),
            ..ItemRecord::default()
        }
    }

    #[test]
    fn judges_with_a_pass_threshold_get_a_pass_rate_beside_the_mean() {
        let verdict = |score: f64, passed: Option<bool>| Verdict { score: Some(score), passed, ..Verdict::default() };
        let items = vec![
            item("a", verdict(0.9, Some(true))),
            item("b", verdict(0.6, Some(true))),
            item("c", verdict(0.2, Some(false))),
            item("d", Verdict { error: Some("judge failed".into()), ..Verdict::default() }),
        ];
        let summary = summarize(&items, 0);
        let correct = &summary.metrics["correct"];
        assert_eq!((correct.n, correct.unscored), (3, 1));
        assert!((correct.pass_rate.unwrap() - 2.0 / 3.0).abs() < 1e-12, "unscored items are not in the rate");
        let without: Vec<ItemRecord> = vec![item("a", verdict(0.9, None))];
        assert_eq!(summarize(&without, 0).metrics["correct"].pass_rate, None, "no threshold, no rate");
    }

    #[test]
    fn judges_get_the_spearman_of_their_score_with_answer_length() {
        let answered = |id: &str, score: f64, text: &str| {
            let mut it = item(id, Verdict { score: Some(score), ..Verdict::default() });
            it.answer = Some(crate::record::Answer { text: text.into(), ..crate::record::Answer::default() });
            it.metrics.insert("token_f1".into(), score);
            it
        };
        let items = vec![
            answered("a", 0.2, "Five seconds."),
            answered("b", 0.5, "Hold it for five seconds."),
            answered("c", 0.9, "Hold the reset button for five seconds until the LED blinks."),
            // No answer (the target failed): no length to compare.
            item("d", Verdict { score: Some(0.1), ..Verdict::default() }),
        ];
        let summary = summarize(&items, 0);
        assert_eq!(summary.metrics["correct"].length_spearman, Some(1.0));
        assert_eq!(summary.metrics["token_f1"].length_spearman, None, "metrics are not judges");
    }
}
