//! The orchestrator: plan a run, execute it item by item with progress events and
//! cancellation, commit each finished item, resume an interrupted run.
//!
//! Invariants: a run row exists before its first item; an item is committed only with all of
//! its metrics; a resumed run must have the same config hash and dataset fingerprint, and only
//! the questions not yet committed are asked again.

mod execute;
mod experiment;
mod lease;
mod pairwise;
mod request;

pub use crate::record::{now_rfc3339, KnowledgeArm, RunConfig};
pub use execute::{execute, execute_judged, metric_selection, new_experiment_id, plan_resume, start_run, Progress, RunError};
pub use crate::stats::{check_gates, parse_gate, Gate, GateFailure};
pub use experiment::{knowledge_removals, plan_experiment, ExperimentKind, ExperimentRequest};
pub use pairwise::{
    pairwise_compare, pairwise_headline, pairwise_judge, pairwise_spec, pairwise_verdict, PairwiseError, PairwiseOutcome,
    PairwiseProgress, PairwiseRequest, DEFAULT_PAIRWISE_JUDGE,
};
pub use request::{
    check_new_run, prepare_new_run, prepare_resume, CheckedRun, PreparedRun, ResumeRequest, RunRequest,
    DEFAULT_JUDGE_MODEL, DEFAULT_TOP_K,
};
