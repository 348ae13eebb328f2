//! Test-set generation: question/answer pairs written by a local model from a dataset's
//! manuals, each with a verbatim quote that is checked against the manual before the pair is
//! kept, and a review step before pairs join the dataset.
//!
//! For each document: pick excerpts (chunks, as retrieval sees them) in a seeded order, ask
//! the model for a question in one of three support-traffic styles, its answer and a quote;
//! keep the pair only when the quote is in the excerpt, the answer is supported by the quote
//! (the `faithfulness` judge, choice mode) and the question is not a near copy of another.
//! Every rejection is counted by reason; a document that yields nothing says why.

mod candidate;
mod check;
mod review;

pub use candidate::{candidate_prompt, QuestionStyle, RawPair, GENERATE_PROMPT};
pub use check::{find_verbatim, question_similarity, DUPLICATE_SIMILARITY, MIN_QUOTE_WORDS};
pub use review::{apply_review, generated_path, pending_pairs, ReviewDecision, ReviewOutcome, GENERATED_FILE};

use crate::corpus::{chunk_document, read_document, Chunk, Document};
use crate::dataset::{Dataset, DatasetError, Question};
use crate::judge::choice::JudgePanel;
use crate::llm::model::LanguageModel;
use crate::metrics::ranking::context_coverage;
use crate::retrieve::IndexSettings;
use crate::record::{Answer, RetrievedChunk};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The judge that decides whether the quote supports the answer.
pub const SUPPORT_JUDGE: &str = "faithfulness";
/// An excerpt shorter than this rarely holds a fact worth a question.
pub const MIN_EXCERPT_WORDS: usize = 30;
/// The least share of the answer's distinct words that must occur in the quote. A cheap
/// check before the judge: on the sample manuals the 1.5B judge let through answers that
/// added facts (or nonsense) the quote does not hold, and nearly all of them fail this.
pub const MIN_ANSWER_IN_QUOTE: f64 = 0.5;
/// Candidates tried per wanted pair before a document gives up.
pub const ATTEMPTS_PER_PAIR: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error("{0}")]
    Invalid(String),
    #[error("generation cancelled; nothing was written")]
    Cancelled,
}

/// Why a candidate pair was not kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    /// The reply reached the token limit before its JSON closed.
    CutShort,
    Unparsable(String),
    ModelFailed(String),
    Cancelled,
    EmptyField(&'static str),
    /// The quote the model gave, which the excerpt does not hold.
    QuoteNotInManual(String),
    QuoteTooShort(usize),
    /// The share of the answer's words found in the quote, under `MIN_ANSWER_IN_QUOTE`.
    AnswerNotFromQuote(f64),
    /// The support judge's probability that the quote supports the answer.
    NotSupported(f64),
    JudgeFailed(String),
    DuplicateOf(String),
}

impl Rejection {
    /// The reason's name in counts and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::CutShort => "cut_short",
            Self::Unparsable(_) => "unparsable",
            Self::ModelFailed(_) => "model_failed",
            Self::Cancelled => "cancelled",
            Self::EmptyField(_) => "empty_field",
            Self::QuoteNotInManual(_) => "quote_not_in_manual",
            Self::QuoteTooShort(_) => "quote_too_short",
            Self::AnswerNotFromQuote(_) => "answer_not_from_quote",
            Self::NotSupported(_) => "answer_not_supported",
            Self::JudgeFailed(_) => "judge_failed",
            Self::DuplicateOf(_) => "duplicate_question",
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CutShort => write!(f, "reply cut off at a length limit (tokens, or the question's or answer's characters)"),
            Self::Unparsable(e) => write!(f, "reply is not the asked JSON: {e}"),
            Self::ModelFailed(e) => write!(f, "model failed: {e}"),
            Self::Cancelled => write!(f, "cancelled"),
            Self::EmptyField(field) => write!(f, "empty {field}"),
            Self::QuoteNotInManual(quote) => write!(f, "the quote is not in the manual: {quote:?}"),
            Self::QuoteTooShort(words) => write!(f, "quote of {words} words (at least {MIN_QUOTE_WORDS})"),
            Self::AnswerNotFromQuote(share) => write!(
                f,
                "only {:.0}% of the answer's words are in the quote (at least {:.0}%)",
                share * 100.0,
                MIN_ANSWER_IN_QUOTE * 100.0
            ),
            Self::NotSupported(p) => write!(f, "the quote does not support the answer (p = {p:.2})"),
            Self::JudgeFailed(e) => write!(f, "support check failed: {e}"),
            Self::DuplicateOf(id) => write!(f, "near copy of question {id}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// Pairs wanted per document.
    pub per_doc: usize,
    pub seed: u64,
    /// Only these documents (ids); all when empty.
    pub docs: Vec<String>,
}

/// What generation did for one document.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DocumentYield {
    pub doc: String,
    /// Excerpts long enough to ask about.
    pub excerpts: usize,
    pub candidates: usize,
    pub kept: usize,
    /// Rejected candidates by reason (`Rejection::kind`).
    pub rejected: BTreeMap<String, usize>,
    /// Why the document yielded nothing, when it could not be used at all.
    pub problem: Option<String>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GenerationReport {
    pub model: String,
    pub documents: Vec<DocumentYield>,
    pub candidates: usize,
    pub kept: usize,
    pub seconds: f64,
}

impl GenerationReport {
    /// Kept pairs over candidates.
    pub fn yield_rate(&self) -> Option<f64> {
        (self.candidates > 0).then(|| self.kept as f64 / self.candidates as f64)
    }

    pub fn pairs_per_minute(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.kept as f64 * 60.0 / self.seconds)
    }
}

/// Progress while generating (the CLI prints these, the app can forward them).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GenerateProgress {
    Document { doc: String, excerpts: usize },
    Candidate { doc: String, kept: usize, wanted: usize, outcome: String },
}

/// A candidate that passed every check; `quote` is the excerpt's own text.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptPair {
    pub question: String,
    pub answer: String,
    pub quote: String,
}

/// Ask the model for a candidate on `chunk` and check it.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
fn ask_and_check(
    model: &LanguageModel,
    checker: &mut JudgePanel,
    product: &str,
    chunk: &Chunk,
    style: QuestionStyle,
    seed: u64,
    known_questions: &[(String, String)],
    cancel: &AtomicBool,
) -> Result<KeptPair, Rejection> {
    let prompt = candidate::candidate_prompt(model, product, chunk, style)?;
    let raw = candidate::ask_for_pair(model, &prompt, &chunk.text, seed, Some(cancel))?;
    tracing::debug!(question = raw.question, answer = raw.answer, quote = raw.quote, "candidate pair");
    check_candidate(&raw, chunk, known_questions, checker)
}

/// The checks, cheapest first: non-empty fields, the quote verbatim in the excerpt and long
/// enough, the answer's words in the quote, no near copy among `known_questions` (id, text),
/// and last the support judge.
pub fn check_candidate(
    raw: &RawPair,
    chunk: &Chunk,
    known_questions: &[(String, String)],
    checker: &mut JudgePanel,
) -> Result<KeptPair, Rejection> {
    let (question, answer) = (raw.question.trim(), raw.answer.trim());
    if question.is_empty() {
        return Err(Rejection::EmptyField("question"));
    }
    if answer.is_empty() {
        return Err(Rejection::EmptyField("answer"));
    }
    let quote = find_verbatim(&raw.quote, &chunk.text).ok_or_else(|| Rejection::QuoteNotInManual(raw.quote.clone()))?;
    let words = quote.split_whitespace().count();
    if words < MIN_QUOTE_WORDS {
        return Err(Rejection::QuoteTooShort(words));
    }
    let share = context_coverage(answer, quote).unwrap_or(0.0);
    if share < MIN_ANSWER_IN_QUOTE {
        return Err(Rejection::AnswerNotFromQuote(share));
    }
    if let Some((id, _)) = known_questions
        .iter()
        .find(|(_, known)| question_similarity(known, question) >= DUPLICATE_SIMILARITY)
    {
        return Err(Rejection::DuplicateOf(id.clone()));
    }
    supported(checker, question, answer, quote, chunk)?;
    Ok(KeptPair { question: question.to_string(), answer: answer.to_string(), quote: quote.to_string() })
}

/// The support check: the judge reads the quote as the only context of the answer.
fn supported(checker: &mut JudgePanel, question: &str, answer: &str, quote: &str, chunk: &Chunk) -> Result<(), Rejection> {
    let item = Question {
        id: "candidate".into(),
        question: question.to_string(),
        answer: Some(answer.to_string()),
        doc: None,
        context: None,
        citations: Vec::new(),
        refuse: false,
        tags: Vec::new(),
    };
    let reply = Answer {
        text: answer.to_string(),
        retrieved: vec![RetrievedChunk {
            chunk_id: chunk.id.clone(),
            doc: chunk.doc.clone(),
            score: 0.0,
            text: quote.to_string(),
        }],
        ..Answer::default()
    };
    let verdicts = checker.judge(&item, &reply);
    let verdict = verdicts
        .get(SUPPORT_JUDGE)
        .ok_or_else(|| Rejection::JudgeFailed(format!("no {SUPPORT_JUDGE} verdict")))?;
    match (verdict.score, &verdict.error) {
        (_, Some(error)) => Err(Rejection::JudgeFailed(error.clone())),
        // Two outcomes (No, Yes): the score is P(Yes), and at least one half is its label.
        (Some(p), None) if p >= 0.5 => Ok(()),
        (Some(p), None) => Err(Rejection::NotSupported(p)),
        (None, None) => Err(Rejection::JudgeFailed("no score".into())),
    }
}

/// The product a manual is about: its first heading's outermost part, else its id.
fn product_name(document: &Document) -> String {
    document
        .sections
        .iter()
        .find_map(|s| s.heading.as_deref())
        .and_then(|h| h.split(" > ").next())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| document.id.clone())
}

/// A stable per-document seed, so adding a document does not change the others' pairs.
fn document_seed(seed: u64, doc: &str) -> u64 {
    doc.bytes().fold(seed ^ 0x9E37_79B9_7F4A_7C15, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01B3))
}

/// A free id `gen-<doc>-NN`.
fn next_id(doc: &str, taken: &mut BTreeSet<String>) -> String {
    let id = (1..)
        .map(|n| format!("gen-{doc}-{n:02}"))
        .find(|id| !taken.contains(id))
        .unwrap_or_else(|| format!("gen-{doc}"));
    taken.insert(id.clone());
    id
}

/// Generate pairs for `dataset` with `model`; `checker` holds the support judge (the CLI runs
/// it on the judge model). Nothing is written here: see `write_pending`. Cancelling returns
/// `GenerateError::Cancelled`.
pub fn generate_pairs(
    dataset: &Dataset,
    model: &LanguageModel,
    checker: &mut JudgePanel,
    request: &GenerateRequest,
    on_progress: &mut dyn FnMut(&GenerateProgress),
    cancel: &AtomicBool,
) -> Result<(Vec<Question>, GenerationReport), GenerateError> {
    if !checker.names().iter().any(|n| n == SUPPORT_JUDGE) {
        return Err(GenerateError::Invalid(format!("the support check needs the {SUPPORT_JUDGE} judge")));
    }
    for doc in &request.docs {
        if !dataset.documents.iter().any(|d| &d.id == doc) {
            return Err(GenerateError::Invalid(format!("no document {doc:?} in {}", dataset.corpus_dir().display())));
        }
    }
    let pending = pending_pairs(dataset)?;
    let mut taken: BTreeSet<String> = dataset.questions.iter().chain(&pending).map(|q| q.id.clone()).collect();
    let mut known: Vec<(String, String)> =
        dataset.questions.iter().chain(&pending).map(|q| (q.id.clone(), q.question.clone())).collect();
    let settings = IndexSettings::for_dataset(dataset);
    let started = Instant::now();
    let mut report = GenerationReport { model: model.name.clone(), ..GenerationReport::default() };
    let mut pairs = Vec::new();

    for (doc_index, file) in dataset.documents.iter().enumerate() {
        if !request.docs.is_empty() && !request.docs.contains(&file.id) {
            continue;
        }
        let doc_started = Instant::now();
        let mut tally = DocumentYield { doc: file.id.clone(), ..DocumentYield::default() };
        let document = match read_document(&file.id, &file.path, settings.limits) {
            Ok((document, _warnings)) => document,
            Err(problem) => {
                tally.problem = Some(format!("cannot be read: {problem}"));
                report.documents.push(tally);
                continue;
            }
        };
        let mut excerpts: Vec<Chunk> = chunk_document(&document, settings.chunking)
            .into_iter()
            .filter(|c| c.text.split_whitespace().count() >= MIN_EXCERPT_WORDS)
            .collect();
        tally.excerpts = excerpts.len();
        on_progress(&GenerateProgress::Document { doc: file.id.clone(), excerpts: excerpts.len() });
        if excerpts.is_empty() {
            tally.problem = Some(format!("no excerpt of at least {MIN_EXCERPT_WORDS} words (document too short)"));
            report.documents.push(tally);
            continue;
        }
        let doc_seed = document_seed(request.seed, &file.id);
        excerpts.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(doc_seed));
        let product = product_name(&document);
        // Excerpts in rotation: one that gave a kept pair leaves it, so pairs spread out.
        let mut rotation: Vec<usize> = (0..excerpts.len()).collect();
        let mut next = 0usize;
        let attempts = request.per_doc * ATTEMPTS_PER_PAIR;
        while tally.kept < request.per_doc && tally.candidates < attempts && !rotation.is_empty() {
            if cancel.load(Ordering::Relaxed) {
                return Err(GenerateError::Cancelled);
            }
            let slot = next % rotation.len();
            let chunk = &excerpts[rotation[slot]];
            let style = QuestionStyle::ALL[(tally.candidates + doc_index) % QuestionStyle::ALL.len()];
            let seed = doc_seed.wrapping_add(tally.candidates as u64);
            tally.candidates += 1;
            let outcome = ask_and_check(model, checker, &product, chunk, style, seed, &known, cancel);
            let described = match outcome {
                Ok(kept) => {
                    let id = next_id(&file.id, &mut taken);
                    known.push((id.clone(), kept.question.clone()));
                    pairs.push(Question {
                        id: id.clone(),
                        question: kept.question,
                        answer: Some(kept.answer),
                        doc: (style == QuestionStyle::Scoped).then(|| file.id.clone()),
                        context: Some(kept.quote),
                        citations: vec![file.id.clone()],
                        refuse: false,
                        tags: vec![review::GENERATED_TAG.to_string(), style.tag().to_string()],
                    });
                    tally.kept += 1;
                    rotation.remove(slot);
                    format!("kept as {id}")
                }
                Err(Rejection::Cancelled) => return Err(GenerateError::Cancelled),
                Err(rejection) => {
                    *tally.rejected.entry(rejection.kind().to_string()).or_default() += 1;
                    next += 1;
                    format!("rejected: {rejection}")
                }
            };
            on_progress(&GenerateProgress::Candidate {
                doc: file.id.clone(),
                kept: tally.kept,
                wanted: request.per_doc,
                outcome: described,
            });
        }
        tally.seconds = doc_started.elapsed().as_secs_f64();
        report.candidates += tally.candidates;
        report.kept += tally.kept;
        report.documents.push(tally);
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok((pairs, report))
}

/// Add `pairs` to the dataset's pending file (after any pairs already waiting), in one
/// atomic write. Returns the file's path.
pub fn write_pending(dataset: &Dataset, pairs: &[Question]) -> Result<PathBuf, GenerateError> {
    let path = generated_path(&dataset.root);
    let mut text = String::new();
    for q in pending_pairs(dataset)?.iter().chain(pairs) {
        text.push_str(&review::question_line(q)?);
        text.push('\n');
    }
    review::write_atomically(&path, text.as_bytes())?;
    Ok(path)
}
