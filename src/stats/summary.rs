//! A run's summary: for each metric and judge, the mean, its 95% interval, how many items it
//! scored and how many could not be scored (the target or the judge failed on them).

use super::bootstrap::{mean, mean_ci95};
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
}

pub fn summarize(items: &[ItemRecord], seed: u64) -> RunSummary {
    let errors = items.iter().filter(|i| i.error.is_some()).count();
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut unscored: BTreeMap<String, usize> = BTreeMap::new();
    for item in items {
        for (name, value) in &item.metrics {
            values.entry(name.clone()).or_default().push(*value);
        }
        for (judge, verdict) in &item.verdicts {
            match verdict.score {
                Some(score) => values.entry(judge.clone()).or_default().push(score),
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
    }
}
