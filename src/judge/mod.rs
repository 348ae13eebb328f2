//! Judges turn (question, reference, answer, context) into a `Verdict`.
//!
//! A verdict keeps the judge's whole probability distribution over its allowed outcomes, not
//! just the label, so reports can show how sure the judge was. A judge that failed on an item
//! records the error and no score: such items are unscored, never silently wrong. A jury scores
//! from the members that could and flags the rest (`jury`).

pub mod agreement;
pub mod choice;
pub mod claims;
pub mod context_fit;
mod error;
pub mod injection;
pub mod jury;
pub mod jury_metrics;
pub mod nothing_stated;
pub mod pairwise;
mod pairwise_orders;
pub mod prompt;
pub mod distribution;
pub mod graded_pairs;
pub mod reading;
pub mod repetition;
pub mod served;
pub mod spec;
pub mod statement_overlap;
pub mod statement_split;
pub mod statements;

pub use error::JudgeError;

use spec::SpecError;

use crate::record::Verdict;

use std::collections::BTreeMap;

/// A run's judges: on the in-process runtime ([`JudgePanel`]) or on a served model
/// ([`ServedJudgePanel`]).
pub trait Judging {
    fn names(&self) -> Vec<String>;
    /// Every judge's verdict on one item; a judge that fails gives an unscored verdict.
    fn judge(&mut self, question: &crate::dataset::Question, answer: &crate::record::Answer) -> BTreeMap<String, Verdict>;
    /// How verdicts are read, for the run config, when not by our own option scoring.
    fn scoring(&self) -> Option<String> {
        None
    }
}
