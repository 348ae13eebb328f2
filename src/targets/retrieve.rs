//! The `retrieve` target: retrieval alone (no generator). Each answer has empty text and the
//! ranked chunks in `retrieved`, so hit@k, MRR and nDCG measure the retriever by itself; with
//! `--rerank MODEL` a language model reorders the first stage's best chunks. The `rag`
//! target retrieves through it too, so the knowledge-removal setting applies to both.

use super::{Answer, Target, TargetError};
use crate::dataset::{Dataset, Question};
use crate::metrics::ranking::{context_coverage, CONTEXT_COVERAGE_THRESHOLD};
use crate::retrieve::{
    index_dataset_cancellable, CorpusIndex, IndexReport, IndexSettings, MiniLm,
    Reranker, RetrievalMode, RetrieveError,
};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// `--target retrieve --top-k K --retrieval MODE`.
pub struct RetrieveTarget {
    index: CorpusIndex,
    model: Option<MiniLm>,
    mode: RetrievalMode,
    top_k: usize,
    /// Knowledge removal: each question is searched with the chunks holding its golden
    /// context (or cited by chunk id) taken out of the index.
    remove_golden: bool,
    /// The second stage, when asked for.
    reranker: Option<Reranker>,
}

impl RetrieveTarget {
    /// Open (or build) the dataset's index; for dense and hybrid, load MiniLM from
    /// `minilm_dir` and make sure the chunk vectors exist (the returned index report says
    /// whether they were reused or computed). A raised `cancel` stops the index
    /// build between documents and the vectors between batches (a run cancelled while it
    /// prepares).
    pub fn for_dataset(
        dataset: &Dataset,
        settings: IndexSettings,
        mode: RetrievalMode,
        top_k: usize,
        minilm_dir: &Path,
        cancel: Option<&AtomicBool>,
    ) -> Result<(Self, IndexReport), RetrieveError> {
        let (index, report) = index_dataset_cancellable(dataset, settings, cancel)?;
        Self::with_index_cancellable(index, report, mode, top_k, minilm_dir, cancel)
    }

    /// Wrap an index already open (tests and benches reuse one across modes).
    pub fn with_index(
        index: CorpusIndex,
        report: IndexReport,
        mode: RetrievalMode,
        top_k: usize,
        minilm_dir: &Path,
    ) -> Result<(Self, IndexReport), RetrieveError> {
        Self::with_index_cancellable(index, report, mode, top_k, minilm_dir, None)
    }

    fn with_index_cancellable(
        mut index: CorpusIndex,
        report: IndexReport,
        mode: RetrievalMode,
        top_k: usize,
        minilm_dir: &Path,
        cancel: Option<&AtomicBool>,
    ) -> Result<(Self, IndexReport), RetrieveError> {
        let (model, vectors) = if mode.needs_embeddings() {
            let model = MiniLm::load(minilm_dir)?;
            let status = index.ensure_embeddings_cancellable(&model, cancel)?;
            (Some(model), Some(status))
        } else {
            (None, None)
        };
        let target = Self { index, model, mode, top_k, remove_golden: false, reranker: None };
        Ok((target, IndexReport { vectors, ..report }))
    }

    pub fn index(&self) -> &CorpusIndex {
        &self.index
    }

    /// Rerank the first stage's best chunks before keeping the top k.
    pub fn reranking(mut self, reranker: Reranker) -> Self {
        self.reranker = Some(reranker);
        self
    }

    pub fn reranker(&self) -> Option<&Reranker> {
        self.reranker.as_ref()
    }

    pub fn removes_golden_context(&self) -> bool {
        self.remove_golden
    }

    /// Search every question without the chunks that hold what it needs (see `golden_chunks`).
    pub fn removing_golden_context(mut self) -> Self {
        self.remove_golden = true;
        self
    }
}

/// Positions of the chunks that hold `question`'s knowledge: those holding at least half of
/// its golden context's words (the same rule that makes a retrieved chunk a hit) and those it
/// cites by chunk id. Overlapping chunks that repeat the passage all go.
pub fn golden_chunks(index: &CorpusIndex, question: &Question) -> BTreeSet<usize> {
    index
        .chunks
        .iter()
        .enumerate()
        .filter(|(_, chunk)| {
            let holds_context = question
                .context
                .as_deref()
                .and_then(|context| context_coverage(context, &chunk.text))
                .is_some_and(|share| share >= CONTEXT_COVERAGE_THRESHOLD);
            holds_context || question.citations.contains(&chunk.id)
        })
        .map(|(position, _)| position)
        .collect()
}

impl Target for RetrieveTarget {
    fn describe(&self) -> String {
        let removed = if self.remove_golden { ":context-removed" } else { "" };
        let rerank = self.reranker.as_ref().map(|r| format!(":{}", r.describe())).unwrap_or_default();
        format!("retrieve:{}:top{}{rerank}{removed}", self.mode, self.top_k)
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        let start = Instant::now();
        let removed = if self.remove_golden {
            let golden = golden_chunks(&self.index, question);
            if golden.is_empty() {
                // Nothing to remove would make this item the same as the baseline's.
                return Err(TargetError::Failed(format!(
                    "{}: no chunk holds its golden context, so there is no knowledge to remove",
                    question.id
                )));
            }
            golden
        } else {
            BTreeSet::new()
        };
        let failed = |e: RetrieveError| TargetError::Failed(format!("retrieval for {}: {e}", question.id));
        let depth = self.reranker.as_ref().map_or(self.top_k, |r| r.depth_for(self.top_k));
        let first_stage = self
            .index
            .search_without(&question.question, question.doc.as_deref(), depth, self.mode, self.model.as_ref(), &removed)
            .map_err(failed)?;
        let retrieved = match &self.reranker {
            Some(reranker) => reranker.rerank(&question.question, first_stage, self.top_k).map_err(failed)?.0,
            None => first_stage,
        };
        Ok(Answer {
            text: String::new(),
            retrieved,
            latency_ms: start.elapsed().as_millis() as u64,
            ..Answer::default()
        })
    }
}
