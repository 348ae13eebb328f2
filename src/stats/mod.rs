//! Statistics over stored items: per-run summaries with bootstrap intervals, and the tests a
//! comparison uses (permutation test, BCa interval, multiplicity adjustment, power), and the
//! statistics of a pairwise comparison (win rate, order consistency, length control).
//!
//! Every interval and Monte Carlo p-value is seeded, so the same run always reports the same numbers.

mod bootstrap;
mod flags;
mod gate;
mod multiplicity;
mod normal;
mod pairwise;
mod permutation;
mod run_report;
mod summary;

pub use bootstrap::{mean, mean_bca95, mean_ci95, BOOTSTRAP_RESAMPLES};
pub use flags::{flagged_counts, item_flags};
pub use multiplicity::{benjamini_hochberg, holm};
pub use normal::{normal_cdf, normal_quantile};
pub use pairwise::{length_controlled_win_rate, pairwise_statistics, LengthControlled, PairwiseStatistics};
pub use permutation::{paired_permutation_p, EXACT_MAX_PAIRS, PERMUTATION_RESAMPLES};
pub use summary::{summarize, MetricSummary, RunSummary};
pub use gate::{check_gates, parse_gate, Gate, GateFailure};
pub use run_report::{load_report, RunReport};
