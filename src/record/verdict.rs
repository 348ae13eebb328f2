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
}
