//! Paired comparison of runs: which is better, and is the difference real?
//!
//! Runs are paired by question id. For each metric and judge: each run's mean with its
//! interval, the mean paired difference with a seeded 95% paired bootstrap interval, wins /
//! ties / losses and a two-sided sign test. Items unscored in either run are counted and left
//! out of every figure, never folded in as zeros.

mod knowledge;
mod paired;
mod sign_test;

pub use knowledge::{knowledge_removal, KnowledgeRemoval, ABSTENTION_JUDGE};
pub use paired::{compare_runs, paired_diff, Comparison, Disagreement, PairedDiff, Verdict, MIN_PAIRS_FOR_VERDICT};
pub use sign_test::sign_test_p;
