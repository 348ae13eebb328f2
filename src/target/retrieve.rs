//! The `retrieve` target: retrieval alone, no model. Each answer has empty text and the ranked
//! chunks in `retrieved`, so hit@k, MRR and nDCG measure the retriever by itself.

use super::{Answer, Target, TargetError};
use crate::dataset::{Dataset, Question};
use crate::retrieve::{
    index_dataset, CorpusIndex, EmbeddingStatus, IndexReport, IndexSettings, MiniLm,
    RetrievalMode, RetrieveError,
};
use std::path::Path;
use std::time::Instant;

/// `--target retrieve --top-k K --retrieval MODE`.
pub struct RetrieveTarget {
    index: CorpusIndex,
    model: Option<MiniLm>,
    mode: RetrievalMode,
    top_k: usize,
}

/// What opening the target did before the first question: the index report and, for dense
/// and hybrid, whether the vectors were reused or computed.
#[derive(Debug, Clone)]
pub struct RetrieveSetup {
    pub index: IndexReport,
    pub embeddings: Option<EmbeddingStatus>,
}

impl RetrieveTarget {
    /// Open (or build) the dataset's index; for dense and hybrid, load MiniLM from
    /// `minilm_dir` and make sure the chunk vectors exist.
    pub fn for_dataset(
        dataset: &Dataset,
        settings: IndexSettings,
        mode: RetrievalMode,
        top_k: usize,
        minilm_dir: &Path,
    ) -> Result<(Self, RetrieveSetup), RetrieveError> {
        let (index, report) = index_dataset(dataset, settings)?;
        Self::with_index(index, report, mode, top_k, minilm_dir)
    }

    /// Wrap an index already open (tests and benches reuse one across modes).
    pub fn with_index(
        mut index: CorpusIndex,
        report: IndexReport,
        mode: RetrievalMode,
        top_k: usize,
        minilm_dir: &Path,
    ) -> Result<(Self, RetrieveSetup), RetrieveError> {
        let (model, embeddings) = if mode.needs_embeddings() {
            let model = MiniLm::load(minilm_dir)?;
            let status = index.ensure_embeddings(&model)?;
            (Some(model), Some(status))
        } else {
            (None, None)
        };
        let target = Self { index, model, mode, top_k };
        Ok((target, RetrieveSetup { index: report, embeddings }))
    }

    pub fn index(&self) -> &CorpusIndex {
        &self.index
    }
}

impl Target for RetrieveTarget {
    fn describe(&self) -> String {
        format!("retrieve:{}:top{}", self.mode, self.top_k)
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        let start = Instant::now();
        let retrieved = self
            .index
            .search(&question.question, question.doc.as_deref(), self.top_k, self.mode, self.model.as_ref())
            .map_err(|e| TargetError::Failed(format!("retrieval for {}: {e}", question.id)))?;
        Ok(Answer {
            text: String::new(),
            retrieved,
            latency_ms: start.elapsed().as_millis() as u64,
            ..Answer::default()
        })
    }
}
