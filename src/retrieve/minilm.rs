//! all-MiniLM-L6-v2 sentence embeddings on candle's BERT: mean pooling over the attention
//! mask, then L2 normalisation, as sentence-transformers does for this model, so a dot
//! product is the cosine similarity.
//!
//! The files (`model.safetensors`, `config.json`, `tokenizer.json`) live in
//! `<models dir>/minilm-l6-v2/`; the model registry (`assay models pull`) puts them there.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

pub const MINILM_ID: &str = "minilm-l6-v2";
/// sentence-transformers' `max_seq_length` for this model (its tokenizer.json says 128).
const MAX_TOKENS: usize = 256;
/// Texts per forward pass: enough to fill the matrix kernels, small enough for padding waste
/// and for Ctrl-C, checked between batches (issue 36). Measured 2026-11-27 on the sample corpus
/// (hybrid index, 2-core Xeon at load 10-12, one thread): 43.9 and 47.1 s of CPU with 16 texts,
/// 44.5 with 8, 50.2 with 4; Ctrl-C stopped 10.4 s after with 16, 4.4 s with 8, 2.0 s with 4.
const BATCH: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{path}: MiniLM model file missing (run `assay models pull {MINILM_ID}`)")]
    Missing { path: PathBuf },
    #[error("{path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error("embedding failed: {0}")]
    Compute(String),
    #[error("cancelled while computing MiniLM vectors ({done} of {total} texts done)")]
    Cancelled { done: usize, total: usize },
}

/// Where the MiniLM files are expected.
pub fn minilm_dir(models_dir: &Path) -> PathBuf {
    models_dir.join(MINILM_ID)
}

pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    /// sha256 of model.safetensors: embeddings on disk are valid only for these weights.
    weights_sha256: String,
}

impl MiniLm {
    /// Load from a folder holding model.safetensors, config.json and tokenizer.json (CPU).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let file = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(EmbedError::Missing { path })
            }
        };
        let (weights, config_path, tokenizer_path) =
            (file("model.safetensors")?, file("config.json")?, file("tokenizer.json")?);
        let load_err = |path: &Path, e: &dyn std::fmt::Display| EmbedError::Load {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| load_err(&config_path, &e))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|e| load_err(&config_path, &e))?;
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| load_err(&tokenizer_path, &e))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| load_err(&tokenizer_path, &e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let weights_bytes = std::fs::read(&weights).map_err(|e| load_err(&weights, &e))?;
        let weights_sha256 = hex::encode(Sha256::digest(&weights_bytes));
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights_bytes, DType::F32, &device)
            .map_err(|e| load_err(&weights, &e))?;
        let model = BertModel::load(vb, &config).map_err(|e| load_err(&weights, &e))?;
        Ok(Self { model, tokenizer, device, weights_sha256 })
    }

    /// Load from `<models dir>/minilm-l6-v2/` (the registry's folder, see `llm::default_models_dir`).
    pub fn load_default() -> Result<Self, EmbedError> {
        let models = crate::models::registry::default_models_dir()
            .map_err(|e| EmbedError::Load { path: PathBuf::from(MINILM_ID), message: e.to_string() })?;
        Self::load(&minilm_dir(&models))
    }

    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }

    pub fn dimension(&self) -> usize {
        384
    }

    /// One unit vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_cancellable(texts, None)
    }

    /// `embed`, stopping between batches once `cancel` is raised: a corpus's vectors take
    /// minutes on a busy machine, a batch well under a second.
    pub fn embed_cancellable(&self, texts: &[&str], cancel: Option<&AtomicBool>) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Similar lengths in a batch waste less on padding; results go back in input order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for (index, batch) in order.chunks(BATCH).enumerate() {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(EmbedError::Cancelled { done: index * BATCH, total: texts.len() });
            }
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            for (vector, &i) in self.embed_batch(&inputs)?.into_iter().zip(batch) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let compute = |e: &dyn std::fmt::Display| EmbedError::Compute(e.to_string());
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| compute(&e))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend(encoding.get_ids().iter().copied());
            mask.extend(encoding.get_attention_mask().iter().copied());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
            let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
            mean.broadcast_div(&norms)?.to_vec2::<f32>()
        };
        run().map_err(|e| compute(&e))
    }
}
