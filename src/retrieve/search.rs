//! Searching an open index in each retrieval mode, returning `RetrievedChunk`s best first.

use super::cache::CorpusIndex;
use super::dense::{DenseVectors, EmbeddingStatus, EMBEDDINGS_FILE};
use super::fusion::weighted_reciprocal_rank_fusion;
use super::minilm::MiniLm;
use super::{RetrievalMode, RetrieveError};
use crate::record::RetrievedChunk;
use std::collections::BTreeSet;

/// Each ranking fed to fusion is this many times deeper than the final list (at least
/// `FUSION_MIN_DEPTH`), so a chunk ranked modestly by both can still rise to the top.
const FUSION_DEPTH_FACTOR: usize = 4;
const FUSION_MIN_DEPTH: usize = 50;
/// BM25's ranking counts twice MiniLM's in hybrid fusion. MiniLM is a general-domain model and
/// misses the exact terms real manuals are searched by: measured 2026-11-25 (README, Retrieval),
/// 2:1 against 1:1 lifted realdocs-hard's hybrid hit@5 0.908 -> 0.938 and answer@5 0.938 ->
/// 0.969, left realdocs unchanged, and on the sample manuals moved MRR 0.926 -> 0.933 and
/// hit@5 1.000 -> 0.987.
const LEXICAL_WEIGHT: f32 = 2.0;

impl CorpusIndex {
    /// Load the chunks' MiniLM vectors from the index folder, or compute and store them.
    pub fn ensure_embeddings(&mut self, model: &MiniLm) -> Result<EmbeddingStatus, RetrieveError> {
        self.ensure_embeddings_cancellable(model, None)
    }

    /// `ensure_embeddings`, stopping between batches of vectors once `cancel` is raised
    /// (nothing is stored then: the next run computes them again).
    pub fn ensure_embeddings_cancellable(
        &mut self,
        model: &MiniLm,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<EmbeddingStatus, RetrieveError> {
        let path = self.dir.join(EMBEDDINGS_FILE);
        let weights = model.weights_sha256();
        if let Some(vectors) = DenseVectors::load(&path, weights, self.chunks.len()) {
            self.dense = Some(vectors);
            return Ok(EmbeddingStatus::Reused);
        }
        let fingerprint = &self.manifest.fingerprint;
        if let Some(vectors) = self.shared_vectors.as_ref().and_then(|s| s.load(fingerprint, weights, self.chunks.len())) {
            vectors.save(&path, weights)?;
            self.dense = Some(vectors);
            return Ok(EmbeddingStatus::Reused);
        }
        let (vectors, seconds) = DenseVectors::compute(model, &self.chunks, cancel)?;
        vectors.save(&path, weights)?;
        if let Some(shared) = &self.shared_vectors {
            shared.keep(&vectors, fingerprint, weights);
        }
        self.dense = Some(vectors);
        Ok(EmbeddingStatus::Computed { chunks: self.chunks.len(), seconds })
    }

    pub fn has_embeddings(&self) -> bool {
        self.dense.is_some()
    }

    /// Top `k` chunks for `query`, only from document `doc` when given. Dense and hybrid need
    /// the model (to embed the query) and `ensure_embeddings` done.
    pub fn search(
        &self,
        query: &str,
        doc: Option<&str>,
        k: usize,
        mode: RetrievalMode,
        model: Option<&MiniLm>,
    ) -> Result<Vec<RetrievedChunk>, RetrieveError> {
        self.search_without(query, doc, k, mode, model, &BTreeSet::new())
    }

    /// `search` as if the chunks at positions `removed` were not in the index (the
    /// knowledge-removal experiment). Each ranking is filtered before fusion, so the other
    /// chunks keep the order they would have among themselves; BM25's term statistics still
    /// count the removed chunks, a difference too small to change which chunks come back.
    pub fn search_without(
        &self,
        query: &str,
        doc: Option<&str>,
        k: usize,
        mode: RetrievalMode,
        model: Option<&MiniLm>,
        removed: &BTreeSet<usize>,
    ) -> Result<Vec<RetrievedChunk>, RetrieveError> {
        let lexical = |depth: usize| -> Result<Vec<(usize, f32)>, RetrieveError> {
            // Removed chunks can take at most `removed.len()` places of a deeper list.
            let mut ranked = self.bm25.search(query, doc, depth + removed.len())?;
            ranked.retain(|(i, _)| !removed.contains(i));
            ranked.truncate(depth);
            Ok(ranked)
        };
        let ranked = match mode {
            RetrievalMode::Bm25 => lexical(k)?,
            RetrievalMode::Dense => self.dense_ranking(query, doc, k, model, removed)?,
            RetrievalMode::Hybrid => {
                let depth = (k * FUSION_DEPTH_FACTOR).max(FUSION_MIN_DEPTH);
                let lexical = lexical(depth)?;
                let dense = self.dense_ranking(query, doc, depth, model, removed)?;
                let lexical: Vec<usize> = lexical.into_iter().map(|(i, _)| i).collect();
                let dense: Vec<usize> = dense.into_iter().map(|(i, _)| i).collect();
                let mut fused =
                    weighted_reciprocal_rank_fusion(&[(&lexical, LEXICAL_WEIGHT), (&dense, 1.0)]);
                fused.truncate(k);
                fused
            }
        };
        // A position past the chunk list would mean a damaged index folder; never index out of it.
        Ok(ranked
            .into_iter()
            .filter(|(i, _)| *i < self.chunks.len())
            .map(|(i, score)| self.retrieved(i, score))
            .collect())
    }

    fn dense_ranking(
        &self,
        query: &str,
        doc: Option<&str>,
        k: usize,
        model: Option<&MiniLm>,
        removed: &BTreeSet<usize>,
    ) -> Result<Vec<(usize, f32)>, RetrieveError> {
        let (Some(model), Some(dense)) = (model, self.dense.as_ref()) else {
            return Err(RetrieveError::NoEmbeddings(if model.is_none() {
                "dense/hybrid (no model given)"
            } else {
                "dense/hybrid (vectors not loaded)"
            }));
        };
        let query_vector = model.embed(&[query])?.pop().unwrap_or_default();
        Ok(dense.search(&query_vector, k, |i| {
            doc.is_none_or(|d| self.chunks[i].doc == d) && !removed.contains(&i)
        }))
    }

    fn retrieved(&self, position: usize, score: f32) -> RetrievedChunk {
        let chunk = &self.chunks[position];
        RetrievedChunk {
            chunk_id: chunk.id.clone(),
            doc: chunk.doc.clone(),
            score,
            text: chunk.text.clone(),
        }
    }
}
