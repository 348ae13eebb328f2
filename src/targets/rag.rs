//! The `rag` target: retrieve the top-k chunks (scoped to the question's `doc` when set), build
//! a prompt from an editable template (the run's, else the dataset's, else `prompts/rag.md`), generate with a local
//! model or one an inference server serves, and read the chunk ids the answer cites.
//!
//! Citations are taken only from ids the model was shown: an id it invents is not a citation.
//! After the answer the model names its sources (see `sources`), so every finished answer has
//! a citation list even from models that do not cite inline.

use super::sources::{answer_text, answer_with_sources, SOURCES_CUE};
use super::{Answer, RetrieveTarget, Target, TargetError};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::generate::{FinishReason, GenerationParams};
use crate::llm::model::LanguageModel;
use crate::llm::prompt_text::untrusted;
use crate::llm::prompt_text::without_chat_markers;
use crate::llm::server::ServerModel;
use super::generation_store::{generation_key, GenerationStore};
use crate::record::CachedGeneration;
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
            .map(|(i, (id, text))| {
                minijinja::context! { n => i + 1, id => untrusted(id), text => untrusted(&without_chat_markers(text)) }
            })
            .collect();
        // The question, the document id and the chunks are values, never chat markers: marked
        // (never control tokens in process) and without marker text (read as text, or sent to a
        // server that tokenizes it, a forged turn still steers the generator).
        let question = untrusted(&without_chat_markers(question));
        let doc = doc.map(|doc| untrusted(&without_chat_markers(doc)));
        let template = env.get_template("rag").map_err(error)?;
        crate::bounded_template::render(&template, minijinja::context! { question => question, doc => doc, chunks => chunks })
            .map_err(error)
    }
}

pub struct RagTarget {
    retriever: RetrieveTarget,
    prompt: RagPrompt,
    writer: AnswerWriter,
    /// Questions answered at once (a served model; the local runtime answers one at a time).
    concurrency: usize,
}

/// The generating half of the target, shared by the threads that ask a server side by side.
struct AnswerWriter {
    generator: Generator,
    params: GenerationParams,
    cancel: Option<Arc<AtomicBool>>,
    /// What keys this generator's generations: the model file's sha256, or `server:` and the
    /// served model's name (empty: nothing to key by, so nothing is cached).
    model_key: String,
    /// The run's generation store once handed over; a database connection is used by one
    /// thread at a time.
    cache: Option<std::sync::Mutex<Box<dyn GenerationStore>>>,
}

/// What writes the answers: the in-process runtime, or a model an inference server serves.
pub enum Generator {
    Local(Arc<LanguageModel>),
    Server(Arc<ServerModel>),
}

impl Generator {
    pub fn id(&self) -> &str {
        match self {
            Generator::Local(m) => &m.name,
            Generator::Server(s) => &s.spec.id,
        }
    }
}

/// A question's retrieval done and prompt written, ready to generate.
struct Prepared {
    retrieved: Vec<crate::record::RetrievedChunk>,
    user: String,
    started: Instant,
}

/// After a served model's answer, the sources question (a served model cannot be held to a
/// grammar portably, so the reply is read for excerpt numbers; numbers not shown are dropped).
const SERVER_SOURCES_QUESTION: &str = "Which of the numbered excerpts did your answer use? Reply with their numbers only, e.g. [1, 3], or [none].";

impl RagTarget {
    pub fn new(
        retriever: RetrieveTarget,
        generator: Generator,
        prompt: RagPrompt,
        params: GenerationParams,
        cancel: Option<Arc<AtomicBool>>,
        model_key: String,
        concurrency: usize,
    ) -> Self {
        RagTarget {
            retriever,
            prompt,
            writer: AnswerWriter {
                generator,
                params,
                cancel,
                model_key,
                cache: None,
            },
            concurrency: concurrency.max(1),
        }
    }

    fn prepare(&mut self, question: &Question) -> Result<Prepared, TargetError> {
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
        Ok(Prepared { retrieved, user, started })
    }
}

impl AnswerWriter {
    fn generate(&self, prepared: Prepared) -> Result<Answer, TargetError> {
        let Prepared { retrieved, user, started } = prepared;
        let failed = |e: crate::llm::error::LlmError| TargetError::Failed(e.to_string());
        // The text the cache keys: the whole prompt for the local runtime (its chat template
        // included), the user message for a server (which applies its own).
        let prompt = match &self.generator {
            Generator::Local(model) => model.chat_prompt(&[ChatMessage::user(user.clone())]).map_err(failed)?,
            Generator::Server(_) => user.clone(),
        };
        let shown: Vec<&str> = retrieved.iter().map(|c| c.chunk_id.as_str()).collect();
        let cache_error = |e: String| TargetError::Failed(format!("generation cache: {e}"));
        let poisoned = || TargetError::Failed("generation cache: poisoned by a panic".into());
        let cache = self.cache.as_ref().map(|c| c.lock().map_err(|_| poisoned())).transpose()?;
        // The cue in the key: answers stored before the sources step are not served.
        let key = cache
            .as_ref()
            .map(|_| generation_key(&self.model_key, &format!("{prompt}{SOURCES_CUE}"), &self.params));
        if let (Some(cache), Some(key)) = (&cache, &key) {
            if let Some(hit) = cache.get(key).map_err(cache_error)? {
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
        // Not held while generating: other threads look up and store meanwhile.
        drop(cache);
        let written = match &self.generator {
            Generator::Local(model) => {
                let generation =
                    answer_with_sources(model, &prompt, &self.params, shown.len(), self.cancel.as_deref()).map_err(failed)?;
                Written {
                    cancelled: generation.finish == FinishReason::Cancelled,
                    text: generation.text,
                    prompt_tokens: generation.prompt_tokens as u32,
                    completion_tokens: generation.tokens.len() as u32,
                    first_chunk_ms: None,
                }
            }
            Generator::Server(server) => self.server_answer(server, &user, shown.len()).map_err(failed)?,
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            let cache = cache.lock().map_err(|_| poisoned())?;
            // A cancelled generation is cut short: not what the same request would give.
            if !written.cancelled {
                let stored = CachedGeneration {
                    text: written.text.clone(),
                    prompt_tokens: written.prompt_tokens,
                    completion_tokens: written.completion_tokens,
                    latency_ms,
                };
                // The answer exists: a cache that cannot be written (a full disk) costs only
                // generating it again next time, never this answer.
                if let Err(e) = cache.put(key, &self.model_key, &stored) {
                    tracing::warn!("generation cache not written ({e}); the answer is kept");
                }
            }
        }
        Ok(Answer {
            citations: cited_ids(&written.text, &shown),
            text: answer_text(&written.text).to_string(),
            retrieved,
            prompt_tokens: Some(written.prompt_tokens),
            completion_tokens: Some(written.completion_tokens),
            latency_ms,
            first_chunk_ms: written.first_chunk_ms,
            cached: false,
        })
    }

    /// A served model's answer, then its sources as a second turn; the text has the same
    /// shape as the local runtime's (answer, `SOURCES_CUE`, the list).
    fn server_answer(&self, server: &ServerModel, user: &str, shown: usize) -> Result<Written, crate::llm::error::LlmError> {
        let cancel = self.cancel.as_deref();
        let messages = [ChatMessage::user(user.to_string())];
        let answer = server.chat(&messages, &self.params, cancel)?;
        let mut written = Written {
            text: answer.text.trim().to_string(),
            prompt_tokens: answer.prompt_tokens.unwrap_or(0),
            completion_tokens: answer.completion_tokens.unwrap_or(0),
            first_chunk_ms: answer.first_token_ms,
            cancelled: cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)),
        };
        if shown == 0 || written.cancelled || answer.finish_reason.as_deref() != Some("stop") {
            return Ok(written);
        }
        let follow_up = [
            ChatMessage::user(user.to_string()),
            ChatMessage::assistant(written.text.clone()),
            ChatMessage::user(SERVER_SOURCES_QUESTION.to_string()),
        ];
        let params = GenerationParams { max_tokens: 3 * shown + 8, temperature: 0.0, ..self.params.clone() };
        let reply = server.chat(&follow_up, &params, cancel)?;
        let numbers: Vec<String> = reply
            .text
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=shown).contains(n))
            .map(|n| n.to_string())
            .collect();
        let list = if numbers.is_empty() { "none".to_string() } else { numbers.join(", ") };
        written.text = format!("{}{SOURCES_CUE}{list}]", written.text);
        written.prompt_tokens += reply.prompt_tokens.unwrap_or(0);
        written.completion_tokens += reply.completion_tokens.unwrap_or(0);
        Ok(written)
    }
}

/// A generation as the cache and the answer need it, from either generator.
struct Written {
    text: String,
    prompt_tokens: u32,
    completion_tokens: u32,
    first_chunk_ms: Option<u64>,
    cancelled: bool,
}

impl Target for RagTarget {
    fn describe(&self) -> String {
        let removed = if self.retriever.removes_golden_context() { ":context-removed" } else { "" };
        let rerank = self.retriever.reranker().map(|r| format!(":{}", r.describe())).unwrap_or_default();
        format!("rag:{}{rerank}{removed}", self.writer.generator.id())
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        let prepared = self.prepare(question)?;
        self.writer.generate(prepared)
    }

    fn keeps_generations(&self) -> bool {
        !self.writer.model_key.is_empty()
    }

    fn use_generation_store(&mut self, store: Box<dyn GenerationStore>) {
        if self.keeps_generations() {
            self.writer.cache = Some(std::sync::Mutex::new(store));
        }
    }

    fn concurrency(&self) -> usize {
        match self.writer.generator {
            Generator::Local(_) => 1,
            Generator::Server(_) => self.concurrency,
        }
    }

    /// Retrieval one question after another (the index is ours), then the served model
    /// asked for all of them at once.
    fn answer_batch(&mut self, questions: &[&Question]) -> Vec<Result<Answer, TargetError>> {
        let prepared: Vec<Result<Prepared, TargetError>> = questions.iter().map(|q| self.prepare(q)).collect();
        let writer = &self.writer;
        std::thread::scope(|scope| {
            let handles: Vec<_> = prepared
                .into_iter()
                .map(|p| scope.spawn(move || writer.generate(p?)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(TargetError::Failed("the generation thread panicked".into()))))
                .collect()
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
