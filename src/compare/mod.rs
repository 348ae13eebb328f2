//! Paired comparison of runs: which is better, and is the difference real?
//!
//! Runs are paired by question id. For each metric and judge: each run's mean with its
//! interval, the mean paired difference with a seeded 95% BCa bootstrap interval, the paired
//! permutation test's p (Holm-adjusted over the secondary metrics), wins / ties / losses with a
//! sign test. One metric is primary and carries the headline. Items unscored in either run are
//! counted and left out of every figure, never folded in as zeros. A pairwise comparison
//! (`pairwise`) is read from judgments of both answers side by side instead.

mod breakdown;
mod experiment;
mod headline;
mod knowledge;
mod leaderboard;
mod paired;
mod pairwise;
mod question_grid;
mod runs;
mod settings;
mod sign_test;
mod verdict_words;

pub use breakdown::{breakdown, GroupBy, GroupDiff};
pub use experiment::{
    difference_gate_failures, experiment, CompareError, ExperimentComparison, ExperimentOptions, SideBySide,
};
pub use headline::{format_p, headline};
pub use knowledge::{knowledge_removal, KnowledgeRemoval, ABSTENTION_JUDGE};
pub use leaderboard::{leaderboard, LeaderboardRow};
pub use paired::{
    adjust_secondary, default_primary, min_detectable_diff, paired_diff, Comparison, Disagreement, PairedDiff, Verdict,
    ALPHA, DEFAULT_PRIMARY_METRIC, MIN_PAIRS_FOR_VERDICT,
};
pub use pairwise::{pairwise_headline, pairwise_outcome, pairwise_verdict, PairwiseOutcome, PairwiseSource, NO_EQUAL_LENGTH, PAIRWISE_SEED};
pub use question_grid::{question_grid, GridRow, QuestionGrid, FAILS_BELOW};
pub use runs::{compare_runs, compare_runs_on};
pub use settings::{settings_diff, SettingRow, SettingsDiff};
pub use sign_test::sign_test_p;
pub use verdict_words::verdict_words;
