//! Statistics over stored items: per-run summaries with bootstrap intervals.
//!
//! Every interval is seeded, so the same run always reports the same numbers.

mod bootstrap;
mod gate;
mod run_report;
mod summary;

pub use bootstrap::{mean, mean_ci95, BOOTSTRAP_RESAMPLES};
pub use summary::{summarize, MetricSummary, RunSummary};
pub use gate::{check_gates, parse_gate, Gate, GateFailure};
pub use run_report::{load_report, RunReport};
