//! The `rag` target: retrieve the top-k chunks (scoped to the question's `doc` when set), build
//! a prompt from an editable template (`prompts/rag.md` by default), generate with a local
//! model, and read the chunk ids the answer cites.
//!
//! Citations are taken only from ids the model was shown: an id it invents is not a citation.
//! After the answer the model names its sources (see `sources`), so every finished answer has
//! a citation list even from models that do not cite inline.

use super::sources::{answer_text, answer_with_sources, SOURCES_CUE};
use super::{Answer, RetrieveTarget, Target, TargetError};
use crate::dataset::Question;
use crate::llm::{untrusted, ChatMessage, FinishReason, GenerationParams, LanguageModel};
use crate::store::{generation_key, CachedGeneration, GenerationCache};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The prompt template shipped with Assay; `--prompt FILE` replaces it.
pub const DEFAULT_RAG_PROMPT: &str = include_str!("../../prompts/rag.md");

#[derive(Debug, thiserror::Error)]
pub enum RagPromptError {
    #[error("{path}: cannot read the prompt template: {source}")]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {bytes} bytes is over the limit of {limit} bytes for a prompt template")]
    TooLarge {
        path: std::path::PathBuf,
        bytes: u64,
        limit: u64,
    },
    #[error("{name}: invalid prompt template: {message}")]
    Template { name: String, message: String },
}

/// The largest prompt template file accepted.
pub const MAX_PROMPT_BYTES: u64 = 1 << 20;

/// A checked prompt template: it renders with the variables the target provides.
#[derive(Debug, Clone)]
pub struct RagPrompt {
    name: String,
    source: String,
}

impl RagPrompt {
    pub fn default_prompt() -> Self {
        RagPrompt {
            name: "prompts/rag.md".into(),
            source: DEFAULT_RAG_PROMPT.into(),
        }
    }

    pub fn from_file(path: &Path) -> Result<Self, RagPromptError> {
        // A template is a page of text; anything this large is the wrong file.
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if bytes > MAX_PROMPT_BYTES {
            return Err(RagPromptError::TooLarge {
                path: path.to_path_buf(),
                bytes,
                limit: MAX_PROMPT_BYTES,
            });
        }
        let source = std::fs::read_to_string(path).map_err(|source| RagPromptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let prompt = RagPrompt {
            name: path.display().to_string(),
            source,
        };
        // Render once with sample values so a typo fails before the run, not on item 1.
        prompt.render("Sample question?", Some("sample-doc"), &[("sample-doc#0", "Sample text.")])?;
        Ok(prompt)
    }

    /// The template's source, for hashing into the run config.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The user message for a question and its retrieved chunks (values marked untrusted).
    pub fn render(
        &self,
        question: &str,
        doc: Option<&str>,
        chunks: &[(&str, &str)],
    ) -> Result<String, RagPromptError> {
        let mut env = crate::bounded_template::environment();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let error = |e: minijinja::Error| RagPromptError::Template {
            name: self.name.clone(),
            message: e.to_string(),
        };
        env.add_template("rag", &self.source).map_err(error)?;
        let chunks: Vec<minijinja::Value> = chunks
            .iter()
            .enumerate()
            .map(|(i, (id, text))| minijinja::context! { n => i + 1, id => untrusted(id), text => untrusted(text) })
            .collect();
        // The question, the document id and the chunks are values, never chat markers.
        let question = untrusted(question);
        let doc = doc.map(untrusted);
        let template = env.get_template("rag").map_err(error)?;
        crate::bounded_template::render(&template, minijinja::context! { question => question, doc => doc, chunks => chunks })
            .map_err(error)
    }
}

pub struct RagTarget {
    retriever: RetrieveTarget,
    model: Arc<LanguageModel>,
    prompt: RagPrompt,
    params: GenerationParams,
    cancel: Option<Arc<AtomicBool>>,
    cache: Option<RagCache>,
}

/// Where earlier generations are looked up, and the model file's sha256 that keys them.
pub struct RagCache {
    pub generations: GenerationCache,
    pub model_sha256: String,
}

impl RagTarget {
    pub fn new(
        retriever: RetrieveTarget,
        model: Arc<LanguageModel>,
        prompt: RagPrompt,
        params: GenerationParams,
        cancel: Option<Arc<AtomicBool>>,
        cache: Option<RagCache>,
    ) -> Self {
        RagTarget {
            retriever,
            model,
            prompt,
            params,
            cancel,
            cache,
        }
    }
}

impl Target for RagTarget {
    fn describe(&self) -> String {
        let removed = if self.retriever.removes_golden_context() { ":context-removed" } else { "" };
        format!("rag:{}{removed}", self.model.name)
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        let started = Instant::now();
        let retrieved = self.retriever.answer(question)?.retrieved;
        let excerpts: Vec<(&str, &str)> = retrieved
            .iter()
            .map(|c| (c.chunk_id.as_str(), c.text.as_str()))
            .collect();
        let user = self
            .prompt
            .render(&question.question, question.doc.as_deref(), &excerpts)
            .map_err(|e| TargetError::Failed(e.to_string()))?;
        let prompt = self
            .model
            .chat_prompt(&[ChatMessage::user(user)])
            .map_err(|e| TargetError::Failed(e.to_string()))?;
        let shown: Vec<&str> = retrieved.iter().map(|c| c.chunk_id.as_str()).collect();
        let cache_error = |e: crate::store::StoreError| TargetError::Failed(format!("generation cache: {e}"));
        let key = self
            .cache
            .as_ref()
            // The cue in the key: answers stored before the sources step are not served.
            .map(|c| generation_key(&c.model_sha256, &format!("{prompt}{SOURCES_CUE}"), &self.params));
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            if let Some(hit) = cache.generations.get(key).map_err(cache_error)? {
                return Ok(Answer {
                    citations: cited_ids(&hit.text, &shown),
                    text: answer_text(&hit.text).to_string(),
                    retrieved,
                    prompt_tokens: Some(hit.prompt_tokens),
                    completion_tokens: Some(hit.completion_tokens),
                    latency_ms: hit.latency_ms,
                    first_chunk_ms: None,
                    cached: true,
                });
            }
        }
        let generation = answer_with_sources(&self.model, &prompt, &self.params, shown.len(), self.cancel.as_deref())
            .map_err(|e| TargetError::Failed(e.to_string()))?;
        let latency_ms = started.elapsed().as_millis() as u64;
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            // A cancelled generation is cut short: not what the same request would give.
            if generation.finish != FinishReason::Cancelled {
                let stored = CachedGeneration {
                    text: generation.text.clone(),
                    prompt_tokens: generation.prompt_tokens as u32,
                    completion_tokens: generation.tokens.len() as u32,
                    latency_ms,
                };
                cache.generations.put(key, &cache.model_sha256, &stored).map_err(cache_error)?;
            }
        }
        Ok(Answer {
            citations: cited_ids(&generation.text, &shown),
            text: answer_text(&generation.text).to_string(),
            retrieved,
            prompt_tokens: Some(generation.prompt_tokens as u32),
            completion_tokens: Some(generation.tokens.len() as u32),
            latency_ms,
            first_chunk_ms: None,
            cached: false,
        })
    }
}

/// The ids among `shown` that `text` cites in square brackets, in order of first appearance,
/// each once. A citation is a chunk id (`[doc#3]`, `[doc#3, doc#5]`) or the 1-based number of
/// an excerpt in the order shown (`[2]`, `[1, 3]`): small models cite numbers far more
/// reliably than ids, and the default prompt numbers its excerpts.
pub fn cited_ids(text: &str, shown: &[&str]) -> Vec<String> {
    let mut cited: Vec<String> = Vec::new();
    for bracketed in text.split('[').skip(1) {
        let Some((inside, _)) = bracketed.split_once(']') else {
            continue;
        };
        for reference in inside.split([',', ';']).map(str::trim) {
            let id = match reference.parse::<usize>() {
                Ok(n) if (1..=shown.len()).contains(&n) => Some(shown[n - 1]),
                Ok(_) => None,
                Err(_) => shown.iter().copied().find(|s| *s == reference),
            };
            if let Some(id) = id.filter(|id| !cited.iter().any(|c| c == id)) {
                cited.push(id.to_string());
            }
        }
    }
    cited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_are_only_ids_that_were_shown() {
        let shown = ["stove#1", "stove#4"];
        let text = "Hold it 5 s [stove#4]. Also [stove#1, stove#9] and [made-up#2] [stove#4].";
        assert_eq!(cited_ids(text, &shown), vec!["stove#4", "stove#1"]);
        assert!(cited_ids("no brackets", &shown).is_empty());
        assert!(cited_ids("unclosed [stove#1", &shown).is_empty());
        // Excerpt numbers, 1-based in the order shown; out of range is no citation.
        assert_eq!(cited_ids("Yes [2]. And [1, 3] [0].", &shown), vec!["stove#4", "stove#1"]);
    }

    #[test]
    fn the_default_prompt_renders_and_a_bad_one_is_refused() {
        let prompt = RagPrompt::default_prompt();
        let text = prompt
            .render("How long?", Some("stove"), &[("stove#1", "Five seconds.")])
            .unwrap();
        // Values are marked as untrusted in the rendered text; the model reads it without marks.
        let text = crate::llm::prompt_text::without_marks(&text);
        // The default prompt numbers its excerpts (what the sources step refers to).
        assert!(text.contains("Excerpt [1]\nFive seconds.") && text.contains("How long?"));
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.md");
        std::fs::write(&bad, "{{ questoin }}").unwrap();
        let err = RagPrompt::from_file(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.md"), "{err}");
    }
}
