//! A generation the run database keeps: what the model wrote and what it cost the first time,
//! so the same request is answered again without recomputing it (DESIGN.md, Storage).

/// A stored generation.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedGeneration {
    pub text: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Generation time when it was computed.
    pub latency_ms: u64,
}
