//! Where does B win or lose? The primary metric's paired difference per question tag or per
//! document, each group with its n, BCa interval and permutation p, the p-values adjusted
//! across the groups shown by Benjamini–Hochberg. Exploratory: groups are small and chosen
//! after the fact, so these point at questions to read, not at conclusions.

use super::paired::paired_diff;
use super::runs::item_scores;
use crate::dataset::Question;
use crate::stats::{benjamini_hochberg, RunReport};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Tag,
    Doc,
}

impl std::str::FromStr for GroupBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tag" => Ok(Self::Tag),
            "doc" => Ok(Self::Doc),
            other => Err(format!("--by {other}: use tag or doc")),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupDiff {
    pub group: String,
    pub pairs: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    pub mean_diff: f64,
    pub ci95_diff: [f64; 2],
    pub permutation_p: f64,
    /// Benjamini–Hochberg across the groups of this breakdown.
    pub adjusted_p: f64,
}

/// The groups a question belongs to: its tags (or "(untagged)"), or its document (`doc`, else
/// the first citation, else "(no document)").
fn groups_of(question: &Question, by: GroupBy) -> Vec<String> {
    match by {
        GroupBy::Tag if question.tags.is_empty() => vec!["(untagged)".into()],
        GroupBy::Tag => question.tags.clone(),
        GroupBy::Doc => vec![question
            .doc
            .clone()
            .or_else(|| question.citations.first().map(|c| c.split('#').next().unwrap_or(c).to_string()))
            .unwrap_or_else(|| "(no document)".into())],
    }
}

/// `metric`'s paired difference B − A per group, groups by name.
pub fn breakdown(a: &RunReport, b: &RunReport, metric: &str, by: GroupBy, seed: u64) -> Vec<GroupDiff> {
    let scores_a = item_scores(a);
    let scores_b = item_scores(b);
    let mut pairs: BTreeMap<String, Vec<(String, f64, f64)>> = BTreeMap::new();
    for item in &b.items {
        let id = &item.question.id;
        let (Some(x), Some(y)) = (
            scores_a.get(id).and_then(|s| s.get(metric)),
            scores_b.get(id).and_then(|s| s.get(metric)),
        ) else {
            continue;
        };
        for group in groups_of(&item.question, by) {
            pairs.entry(group).or_default().push((id.clone(), *x, *y));
        }
    }
    let mut rows: Vec<GroupDiff> = pairs
        .into_iter()
        .map(|(group, pairs)| {
            let d = paired_diff(metric, &pairs, 0, seed);
            GroupDiff {
                group,
                pairs: d.pairs,
                mean_a: d.mean_a,
                mean_b: d.mean_b,
                mean_diff: d.mean_diff,
                ci95_diff: d.ci95_diff,
                permutation_p: d.permutation_p,
                adjusted_p: d.permutation_p,
            }
        })
        .collect();
    let raw: Vec<f64> = rows.iter().map(|r| r.permutation_p).collect();
    for (row, q) in rows.iter_mut().zip(benjamini_hochberg(&raw)) {
        row.adjusted_p = q;
    }
    rows
}
