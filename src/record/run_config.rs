//! What a run was asked to do. Stored as JSON with the run; its hash decides whether a run
//! may be resumed (same config) and whether a cached generation may be reused.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    /// `answers:<file>`, `retrieve:<mode>:top<k>`, `rag:<model>`.
    pub target: String,
    /// sha256 of what the target reads besides the dataset (the answers file; the prompt
    /// template and model file for rag): a changed input is a new run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers_sha256: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub judge_model: Option<String>,
    /// How the judges' verdicts were read when not by the in-process runtime's option
    /// scoring (a served judge model: the server's first-token log-probabilities). Absent
    /// otherwise, so those runs' hash is what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_scoring: Option<String>,
    #[serde(default)]
    pub judges: Vec<String>,
    /// sha256 of each judge's spec as loaded (rubric, outcomes, values, threshold, …): a spec
    /// edited between a kill and `--resume` would give one run verdicts from two rubrics.
    /// Empty for runs without judges (their hash is what it always was).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub judge_specs: std::collections::BTreeMap<String, String>,
    /// Deterministic metrics to compute; empty means all that apply.
    #[serde(default)]
    pub metrics: Vec<String>,
    pub top_k: usize,
    /// `bm25`, `dense` or `hybrid` for targets that retrieve.
    #[serde(default)]
    pub retrieval: Option<String>,
    /// Generation budget per answer (rag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    pub seed: u64,
    /// Only the first N questions.
    #[serde(default)]
    pub limit: Option<usize>,
    /// An arm of the knowledge-removal experiment (`--experiment remove-context`); absent
    /// for ordinary runs, so their config hash is what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge: Option<KnowledgeArm>,
    /// The second retrieval stage (`--rerank MODEL`); absent without one, so those runs' hash
    /// is what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankConfig>,
}

/// Reranking asked for: the model (a registry id or a served model's id) and how many
/// first-stage chunks it rescores.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RerankConfig {
    pub model: String,
    pub depth: usize,
}

/// The two arms of the knowledge-removal experiment (after KnowOrNot). Both ask only the
/// questions that have a golden context and are not meant to be refused; `Removed` retrieves
/// with the chunks that hold that context taken out, so a faithful target should abstain.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum KnowledgeArm {
    InScope,
    Removed,
}

impl KnowledgeArm {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InScope => "in-scope",
            Self::Removed => "context-removed",
        }
    }

    /// Whether `question` belongs in the experiment: it has a golden context to remove and
    /// an answer to give.
    pub fn asks(question: &crate::dataset::Question) -> bool {
        !question.refuse && question.context.as_deref().is_some_and(|c| !c.trim().is_empty())
    }
}

impl RunConfig {
    /// sha256 of the canonical JSON (serde_json writes struct fields in declaration order).
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(Sha256::digest(json))
    }
}
