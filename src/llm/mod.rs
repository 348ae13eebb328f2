//! The local model runtime on candle: the model registry (`models/models.toml` and installing
//! models from the packages that bundle them), GGUF models with their tokenizer and chat
//! template taken from the file's metadata, seeded generation, and option scoring with prefix
//! reuse for the judges. CPU by default; the `cuda`/`metal` features add GPUs.
//!
//! Typical use: `LanguageModel::by_id(&Registry::load()?, "smollm2-135m-instruct",
//! DeviceChoice::Cpu)?` (loaded once per process), then `model.chat_prompt(..)`,
//! `model.generate(..)`, or `model.prefill(..)` / `model.extend(..)` / `model.score_options(..)`.

pub mod architecture;
pub mod bench;
pub mod chat_markers;
pub mod chat_template;
pub mod device;
pub mod device_check;
pub mod error;
pub mod generate;
pub mod gguf_info;
pub mod gguf_tokenizer;
pub mod model;
pub mod prompt_state;
pub mod prompt_text;
pub mod pull;
pub mod pull_hf;
pub mod registry;
pub mod rope;
pub mod scan;
pub mod scoring;
pub mod server;
pub mod server_spec;
pub mod sse;
pub mod structured;
pub mod synthetic;
pub mod transformer;
pub mod weight_matrix;

pub use chat_template::{ChatFormat, ChatMessage};
pub use device::DeviceChoice;
pub use error::{LlmError, Result};
pub use generate::{FinishReason, Generation, GenerationParams};
pub use gguf_info::GgufInfo;
pub use model::LanguageModel;
pub use prompt_state::PromptState;
pub use prompt_text::untrusted;
pub use pull::{pull, pull_from, PullEvent, PullSource};
pub use registry::{default_models_dir, InstallState, ModelEntry, Registry};
pub use scoring::{option_distribution, OptionScore};
pub use server::{ServerGeneration, ServerModel};
pub use server_spec::ServerSpec;
