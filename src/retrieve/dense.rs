//! Dense vectors for a built index: one MiniLM embedding per chunk, stored in the index's
//! folder (so they are rebuilt with it) and tagged with the weights' sha256 (so other weights
//! never reuse them). Search is exact: a dot product with every chunk, which takes a few
//! milliseconds for tens of thousands of chunks and needs no approximate-index tuning.

use super::minilm::MiniLm;
use super::RetrieveError;
use crate::corpus::Chunk;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

pub(crate) const EMBEDDINGS_FILE: &str = "embeddings-minilm-l6-v2.bin";
const MAGIC: &[u8] = b"ASSAY-EMBEDDINGS 1\n";

/// Whether `ensure_embeddings` found vectors on disk or computed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum EmbeddingStatus {
    Reused,
    Computed { chunks: usize, seconds: f64 },
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Header {
    weights_sha256: String,
    dimension: usize,
    count: usize,
}

pub(crate) struct DenseVectors {
    dimension: usize,
    /// Row-major, one unit vector per chunk.
    data: Vec<f32>,
}

/// The text a chunk is embedded (and BM25-indexed) as: its heading path, then its text.
pub(crate) fn chunk_body(chunk: &Chunk) -> String {
    match &chunk.heading {
        Some(heading) => format!("{heading}\n{}", chunk.text),
        None => chunk.text.clone(),
    }
}

impl DenseVectors {
    pub(crate) fn compute(model: &MiniLm, chunks: &[Chunk]) -> Result<(Self, f64), RetrieveError> {
        let start = Instant::now();
        let bodies: Vec<String> = chunks.iter().map(chunk_body).collect();
        let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
        let vectors = model.embed(&refs)?;
        let dimension = model.dimension();
        let data: Vec<f32> = vectors.into_iter().flatten().collect();
        Ok((Self { dimension, data }, start.elapsed().as_secs_f64()))
    }

    /// Vectors from `path` if they exist and match the weights and the chunk count.
    pub(crate) fn load(path: &Path, weights_sha256: &str, count: usize) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let newline = rest.iter().position(|b| *b == b'\n')?;
        let header: Header = serde_json::from_slice(&rest[..newline]).ok()?;
        let body = &rest[newline + 1..];
        let expected = header.count.checked_mul(header.dimension)?.checked_mul(4)?;
        if header.weights_sha256 != weights_sha256 || header.count != count || body.len() != expected {
            return None;
        }
        let data = body
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Some(Self { dimension: header.dimension, data })
    }

    pub(crate) fn save(&self, path: &Path, weights_sha256: &str) -> Result<(), RetrieveError> {
        let header = Header {
            weights_sha256: weights_sha256.to_string(),
            dimension: self.dimension,
            count: self.data.len() / self.dimension.max(1),
        };
        let folder = path.parent().unwrap_or(Path::new("."));
        let write = || -> std::io::Result<()> {
            // Unpredictable and created exclusively: never written through a planted link.
            let tmp = tempfile::Builder::new().prefix(".vectors.").tempfile_in(folder)?;
            let mut file = std::io::BufWriter::new(tmp);
            file.write_all(MAGIC)?;
            serde_json::to_writer(&mut file, &header)?;
            file.write_all(b"\n")?;
            for value in &self.data {
                file.write_all(&value.to_le_bytes())?;
            }
            let tmp = file.into_inner().map_err(|e| e.into_error())?;
            tmp.as_file().sync_all()?;
            tmp.persist(path).map(|_| ()).map_err(|e| e.error)
        };
        write().map_err(|e| RetrieveError::io(path, e))
    }

    /// Chunk positions and cosine similarities, best first, among chunks passing `keep`.
    pub(crate) fn search(&self, query: &[f32], limit: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        let mut scored: Vec<(usize, f32)> = self
            .data
            .chunks_exact(self.dimension.max(1))
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(i, row)| (i, row.iter().zip(query).map(|(a, b)| a * b).sum()))
            .collect();
        let limit = limit.min(scored.len());
        if limit == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(limit - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}
