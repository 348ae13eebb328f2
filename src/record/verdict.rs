//! A judge's verdict on one answer: the label, the expected score and the whole distribution.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// The most probable outcome.
    pub label: Option<String>,
    /// Expected value of the outcome scores, in [0, 1].
    pub score: Option<f64>,
    /// Probability of each allowed outcome.
    #[serde(default)]
    pub distribution: BTreeMap<String, f64>,
    #[serde(default)]
    pub explanation: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    /// Whether the label meets the judge's pass threshold (`pass` in its spec); None when the
    /// spec sets none or the verdict has no label. A run's pass rate is the share of true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// For a judge with a baseline (`baseline` in its spec): its distribution for the same
    /// prompt with the question in place of the answer. `distribution` is then the answer's
    /// divided by this one, renormalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BTreeMap<String, f64>>,
}
