//! The integration tests, as one test binary (`cargo test -p assay --test integration`).
//!
//! Each file beside this one is a module that tests one part through the public library or
//! the real `assay` binary; `bad_input/` is the bad-input suite, `common` and `llm_common`
//! the harness they share. One binary instead of one per file: each binary links the whole
//! library and its dependencies, so forty of them made link time and disk dominate the
//! build, and debug line tables had to be dropped to fit CI's disk.
//!
//! The modules share this process and run on parallel threads: a test must not change
//! process-wide state (environment variables, the current directory). A test that needs such
//! state runs its body in a child process (see `llm_pull_hf`). Run one module with
//! `cargo test -p assay --test integration MODULE::` (a filter matches any part of the name,
//! so `judge_spec::` also runs `bad_input::judge_spec::`).

mod common;
mod llm_common;
mod local_http;

mod bad_input;
mod agree_calibrate;
mod agree_length;
mod cancel_run;
mod cli_run;
mod compare_reference;
mod compare_simulation;
mod concurrent_runs;
mod corpus_read;
mod dataset_integrity;
mod nothing_stated;
mod generate_pairs;
mod http_secrets;
mod http_target;
mod judge_agreement;
mod judge_choice;
mod judge_claims;
mod judge_long_inputs;
mod judge_spec;
mod judge_statements;
mod judge_pairwise;
mod judge_untrusted;
mod judged_run;
mod kill_resume;
mod knowledge_removal;
mod labels_store;
mod llm_architectures;
mod llm_greedy;
mod llm_model;
mod llm_pull_hf;
mod llm_registry;
mod llm_scan;
mod llm_structured;
mod llm_tokenizer;
mod locked_database;
mod metrics_reference;
mod models_remove;
mod numbers_labelled;
mod offline;
mod pairwise_sensitivity;
mod pdf_fidelity;
mod rag_prompt_choice;
mod rag_target;
mod run_deletion;
mod report_escaping;
mod report_findings;
mod retrieval_default;
mod retrieve_bench;
mod retrieve_dense;
mod retrieve_index;
mod retrieve_rerank;
mod retrieve_trailgear;
mod served_identity;
mod server_models;
mod served_pairwise;
mod template_memory;
