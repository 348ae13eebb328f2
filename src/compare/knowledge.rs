//! The knowledge-removal experiment's result (after KnowOrNot): how often the target abstains
//! when the golden context is within reach, how often when it was removed from the index, and
//! the paired difference of the two rates with its interval.
//!
//! An answer counts as abstaining when the abstention judge's label says so: its score is the
//! probability of "Abstained", so that is a score of at least one half.

use super::paired::{paired_diff, PairedDiff};
use crate::stats::RunReport;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The judge whose verdicts the experiment counts.
pub const ABSTENTION_JUDGE: &str = "abstention";

#[derive(Debug, Clone, Serialize)]
pub struct KnowledgeRemoval {
    pub in_scope_run: String,
    pub removed_run: String,
    /// A: abstention rate with the context in the index; B: with it removed. `mean_diff` is
    /// how much more often the target abstains once the knowledge is gone (higher is better:
    /// a target that answers anyway is inventing).
    pub abstained: PairedDiff,
}

/// 1.0 for each question whose answer abstained, 0.0 for each that attempted; questions with
/// no abstention verdict (the target failed, or the judge could not score) are left out.
fn abstentions(report: &RunReport) -> BTreeMap<&str, f64> {
    report
        .items
        .iter()
        .filter_map(|item| {
            let score = item.verdicts.get(ABSTENTION_JUDGE)?.score?;
            Some((item.question.id.as_str(), if score >= 0.5 { 1.0 } else { 0.0 }))
        })
        .collect()
}

/// The experiment's figures from its two runs; None when neither run has abstention verdicts.
pub fn knowledge_removal(in_scope: &RunReport, removed: &RunReport, seed: u64) -> Option<KnowledgeRemoval> {
    let a = abstentions(in_scope);
    let b = abstentions(removed);
    if a.is_empty() && b.is_empty() {
        return None;
    }
    let questions: BTreeSet<&str> = in_scope
        .items
        .iter()
        .chain(&removed.items)
        .map(|i| i.question.id.as_str())
        .collect();
    let mut pairs = Vec::new();
    let mut excluded = 0;
    for q in questions {
        match (a.get(q), b.get(q)) {
            (Some(x), Some(y)) => pairs.push((q.to_string(), *x, *y)),
            _ => excluded += 1,
        }
    }
    Some(KnowledgeRemoval {
        in_scope_run: in_scope.run.id.clone(),
        removed_run: removed.run.id.clone(),
        abstained: paired_diff("abstained", &pairs, excluded, seed),
    })
}
