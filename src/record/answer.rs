//! What a target produced for one question, and the retrieved chunks it saw.

use serde::{Deserialize, Serialize};

/// A chunk of the corpus that retrieval returned for a question, best first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RetrievedChunk {
    /// Stable id `doc#n`.
    pub chunk_id: String,
    pub doc: String,
    pub score: f32,
    pub text: String,
}

/// What a target produced for one question.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub text: String,
    /// Document ids or chunk ids (`doc#n`) the answer cites.
    #[serde(default)]
    pub citations: Vec<String>,
    #[serde(default)]
    pub retrieved: Vec<RetrievedChunk>,
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    #[serde(default)]
    pub completion_tokens: Option<u32>,
    /// Wall time the target took for this answer (for a reused generation: when it was made).
    #[serde(default)]
    pub latency_ms: u64,
    /// Time to the first chunk of a streamed answer (to the response's headers when whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_chunk_ms: Option<u64>,
    /// The generation was served from the store's generation cache, not computed again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}
