//! `assay bench`: measurements of the other layers, each taken when called (nothing here is a
//! stored number). `retrieval` (quality per retrieval mode on a dataset against a plain
//! fixed-window baseline, index build and query speed on a generated corpus, embedding speed),
//! `baseline` (each mode against that baseline, question by question, by `compare`'s paired
//! statistics), `model` (the runtime's prompt, decode and option-scoring speed and memory),
//! `end_to_end` (RAG questions in process against llama-server on the same file) and `judge`
//! (choice mode against free-text labels, and how much a judge set reads).
//!
//! It sits on top of the library, below the faces: it reads `retrieve`, `metrics`, `llm`,
//! `judge` and `compare`, and only the faces import it, so none of those needs the others
//! for the sake of a benchmark.

pub mod baseline;
pub mod end_to_end;
pub mod judge;
pub mod model;
pub mod retrieval;
