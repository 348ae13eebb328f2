//! The orchestrator: plan a run, execute it item by item with progress events and
//! cancellation, commit each finished item, resume an interrupted run. `run_experiment` is the
//! front door both faces call; `stored_runs` and `calibration` are the other entries they use.
//!
//! Invariants: a run row exists before its first item; an item is committed only with all of
//! its metrics; a resumed run must have the same config hash and dataset fingerprint, and only
//! the questions not yet committed are asked again.

mod calibration;
mod execute;
mod experiment;
mod front_door;
mod generation_store;
mod index;
mod judge_catalog;
mod kept_items;
mod labels;
mod lease;
mod locked_writes;
mod pair_generator;
mod pairwise;
mod request;
mod run_deletion;
mod stored_runs;

pub use execute::{execute, execute_judged, metric_selection, new_experiment_id, plan_resume, start_run, Progress, RunError};
pub use experiment::{knowledge_removals, plan_experiment, ExperimentKind, ExperimentRequest, DEFAULT_TARGET};
pub use calibration::{judge_agreement, AgreementRequest, Calibration, CalibrationError, JudgeAgreement};
pub use judge_catalog::{judge_catalog, judge_spec};
pub use labels::{
    export_labels, import_labels, remove_label, run_labels, set_label, write_labels_file, LabelError, LabelsImported, RunLabels, LABELS_JUDGE,
    MAX_NOTE_CHARS,
};
pub use pairwise::{
    compare_pairwise, pairwise_compare, pairwise_judge, pairwise_spec, stored_pairwise, stored_pairwise_for_report, stored_pairwise_of, PairwiseError, PairwiseOrder,
    PairwiseJudgeSpec, PairwiseProgress, PairwiseRequest, DEFAULT_PAIRWISE_JUDGE,
};
pub use index::build_index;
pub use pair_generator::pair_generator;
pub use run_deletion::RunDeletion;
pub use stored_runs::{default_database, StoredRuns};
pub use front_door::{run_experiment, ExperimentEvents, ExperimentOrder, ExperimentOutcome, Unwatched};
pub use request::{
    check_new_run, default_retrieval, prepare_new_run, prepare_resume, rerank_config, CheckedRun, PreparedRun,
    ResumeRequest, RunRequest, DEFAULT_JUDGE_MODEL, DEFAULT_TOP_K,
};
