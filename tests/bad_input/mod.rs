//! The bad-input suite: one file per input kind. Every case goes through the real binary and
//! asserts the exact error (exit code 2; file, line and field where there are ones; no panic,
//! no echo of a huge input) and that nothing was written: a database that holds a run is byte
//! for byte unchanged, a database path that did not exist is not created, and no output file
//! appears. Large inputs (a 100 MB line) are generated in a temp dir, never committed.

mod answers;
mod arguments;
mod cache_write;
mod damaged_rows;
mod dataset;
mod gguf;
mod index_write;
mod judge_spec;
mod models_toml;
mod pdf;
mod prompt;
mod pull;
mod shipped_index;
mod sqlite;
