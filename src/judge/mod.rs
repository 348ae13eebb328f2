//! Judges turn (question, reference, answer, context) into a `Verdict`.
//!
//! A verdict keeps the judge's whole probability distribution over its allowed outcomes, not
//! just the label, so reports can show how sure the judge was. A judge that failed on an item
//! records the error and no score: such items are unscored, never silently wrong.

pub mod agreement;
pub mod bench;
pub mod choice;
pub mod claims;
pub mod distribution;
pub mod reading;
pub mod spec;

pub use choice::JudgePanel;
pub use reading::Reading;
pub use spec::{JudgeMode, JudgeSpec, SpecError};

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
