//! The local model runtime on candle: GGUF models with their tokenizer and chat template taken
//! from the file's metadata, seeded generation, option scoring with prefix reuse for the judges,
//! and served models. CPU by default; the `cuda`/`metal` features add GPUs. Which models exist
//! and where their verified files are is `models`' business.
//!
//! Typical use: `LanguageModel::by_id(&Registry::load()?, "smollm2-135m-instruct",
//! DeviceChoice::Cpu)?` (loaded once per process), then `model.chat_prompt(..)`,
//! `model.generate(..)`, or `model.prefill(..)` / `model.extend(..)` / `model.score_options(..)`.

pub mod architecture;
pub mod cached_attention;
pub mod capped_body;
pub mod chat_markers;
pub mod chat_template;
pub mod device;
pub mod device_check;
pub mod error;
pub mod gated_product;
pub mod generate;
pub mod gguf_tokenizer;
pub mod heap;
pub mod model;
pub mod prompt_state;
pub mod prompt_text;
pub mod rope;
pub mod scoring;
pub mod server;
pub mod sse;
pub mod structured;
pub mod synthetic;
pub mod transformer;
pub mod weight_matrix;
pub mod work_split;
