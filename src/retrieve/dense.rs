//! Dense vectors for a built index: MiniLM embeddings of each chunk's windows, stored in the
//! index's folder (so they are rebuilt with it) and tagged with the weights' sha256 (so other
//! weights never reuse them). A chunk scores as its best window. Search is exact: a dot product
//! with every window, which takes a few milliseconds for tens of thousands of chunks and needs
//! no approximate-index tuning.

use super::minilm::MiniLm;
use super::RetrieveError;
use crate::corpus::Chunk;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

pub(crate) const EMBEDDINGS_FILE: &str = "embeddings-minilm-l6-v2.bin";
// Version 2: several vectors per chunk (version 1 files, one truncated vector each, are recomputed).
const MAGIC: &[u8] = b"ASSAY-EMBEDDINGS 2\n";

/// MiniLM (all-MiniLM-L6-v2) was trained on pieces of 128 tokens and reads at most 256: one
/// vector of a 250-word chunk (about 330 tokens) saw only its start. So a longer chunk is
/// embedded as overlapping windows of this many words (about 130 tokens), each with the
/// heading, and scores as its best window.
const WINDOW_WORDS: usize = 100;
/// Windows start this many words apart, so a sentence cut by one window is whole in the next.
const WINDOW_STRIDE: usize = 80;

/// Whether `ensure_embeddings` found vectors on disk (in the index folder, or kept for the same
/// documents in another folder: `shared_vectors`) or computed them.
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
    /// Chunks.
    count: usize,
    /// Vectors (windows) of each chunk, in chunk order.
    windows: Vec<u32>,
}

pub(crate) struct DenseVectors {
    dimension: usize,
    /// Row-major, one unit vector per window.
    data: Vec<f32>,
    /// The chunk each row belongs to (rows of a chunk are adjacent).
    owners: Vec<u32>,
    /// Vectors per chunk, as stored in the header.
    windows: Vec<u32>,
}

/// The text a chunk is embedded (and BM25-indexed) as: its heading path, then its text.
pub(crate) fn chunk_body(chunk: &Chunk) -> String {
    match &chunk.heading {
        Some(heading) => format!("{heading}\n{}", chunk.text),
        None => chunk.text.clone(),
    }
}

/// The texts a chunk is embedded as: its body whole when it fits one window, else overlapping
/// windows of `WINDOW_WORDS` words (the last one ending at the chunk's end), each after the
/// heading path.
pub(crate) fn chunk_windows(chunk: &Chunk) -> Vec<String> {
    let words: Vec<&str> = chunk.text.split_whitespace().collect();
    if words.len() <= WINDOW_WORDS {
        return vec![chunk_body(chunk)];
    }
    let mut starts: Vec<usize> = (0..words.len() - WINDOW_WORDS).step_by(WINDOW_STRIDE).collect();
    starts.push(words.len() - WINDOW_WORDS);
    starts
        .into_iter()
        .map(|start| {
            let window = words[start..start + WINDOW_WORDS].join(" ");
            match &chunk.heading {
                Some(heading) => format!("{heading}\n{window}"),
                None => window,
            }
        })
        .collect()
}

impl DenseVectors {
    pub(crate) fn compute(model: &MiniLm, chunks: &[Chunk], cancel: Option<&AtomicBool>) -> Result<(Self, f64), RetrieveError> {
        let start = Instant::now();
        let per_chunk: Vec<Vec<String>> = chunks.iter().map(chunk_windows).collect();
        let windows: Vec<u32> = per_chunk.iter().map(|w| w.len() as u32).collect();
        let refs: Vec<&str> = per_chunk.iter().flatten().map(String::as_str).collect();
        let vectors = model.embed_cancellable(&refs, cancel)?;
        let dimension = model.dimension();
        let data: Vec<f32> = vectors.into_iter().flatten().collect();
        Ok((Self::new(dimension, data, windows), start.elapsed().as_secs_f64()))
    }

    pub(crate) fn new(dimension: usize, data: Vec<f32>, windows: Vec<u32>) -> Self {
        let owners = windows.iter().enumerate().flat_map(|(chunk, &n)| std::iter::repeat_n(chunk as u32, n as usize)).collect();
        Self { dimension, data, owners, windows }
    }

    /// Vectors from `path` if they exist and match the weights and the chunk count.
    pub(crate) fn load(path: &Path, weights_sha256: &str, count: usize) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let newline = rest.iter().position(|b| *b == b'\n')?;
        let header: Header = serde_json::from_slice(&rest[..newline]).ok()?;
        let body = &rest[newline + 1..];
        let rows: usize = header.windows.iter().map(|&n| n as usize).sum();
        let expected = rows.checked_mul(header.dimension)?.checked_mul(4)?;
        if header.weights_sha256 != weights_sha256
            || header.count != count
            || header.windows.len() != count
            || body.len() != expected
        {
            return None;
        }
        let data = body
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Some(Self::new(header.dimension, data, header.windows))
    }

    pub(crate) fn save(&self, path: &Path, weights_sha256: &str) -> Result<(), RetrieveError> {
        let header = Header {
            weights_sha256: weights_sha256.to_string(),
            dimension: self.dimension,
            count: self.windows.len(),
            windows: self.windows.clone(),
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

    /// Chunk positions and cosine similarities (of each chunk's best window), best first, among
    /// chunks passing `keep`.
    pub(crate) fn search(&self, query: &[f32], limit: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        let mut best: Vec<Option<f32>> = vec![None; self.windows.len()];
        for (row, &owner) in self.data.chunks_exact(self.dimension.max(1)).zip(&self.owners) {
            let chunk = owner as usize;
            if !keep(chunk) {
                continue;
            }
            let similarity: f32 = row.iter().zip(query).map(|(a, b)| a * b).sum();
            let slot = &mut best[chunk];
            *slot = Some(slot.map_or(similarity, |s| s.max(similarity)));
        }
        let mut scored: Vec<(usize, f32)> =
            best.into_iter().enumerate().filter_map(|(chunk, s)| s.map(|s| (chunk, s))).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(words: usize) -> Chunk {
        let text = (0..words).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        Chunk { id: "c".into(), doc: "d".into(), text, heading: Some("Setup".into()), page: None }
    }

    #[test]
    fn long_chunks_are_covered_by_full_overlapping_windows_with_the_heading() {
        assert_eq!(chunk_windows(&chunk(60)), vec![chunk_body(&chunk(60))]);
        let windows = chunk_windows(&chunk(250));
        // Starts 0, 80 and the window ending at the last word (150): every word is in one.
        assert_eq!(windows.len(), 3);
        for window in &windows {
            assert!(window.starts_with("Setup\n"));
            assert_eq!(window.lines().nth(1).map(|l| l.split(' ').count()), Some(WINDOW_WORDS));
        }
        assert!(windows[0].contains("\nw0 ") && windows[1].contains("\nw80 ") && windows[2].contains("\nw150 "));
        assert!(windows[2].ends_with(" w249"));
    }

    #[test]
    fn a_chunk_scores_as_its_best_window_and_survives_a_round_trip() {
        // Chunk 0 has two windows (one matching the query), chunk 1 one weaker window.
        let data = vec![0.0, 1.0, 1.0, 0.0, 0.6, 0.8];
        let vectors = DenseVectors::new(2, data, vec![2, 1]);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(EMBEDDINGS_FILE);
        vectors.save(&path, "sha").expect("save");
        let loaded = DenseVectors::load(&path, "sha", 2).expect("load");
        for v in [&vectors, &loaded] {
            assert_eq!(v.search(&[1.0, 0.0], 5, |_| true), vec![(0, 1.0), (1, 0.6)]);
            assert_eq!(v.search(&[1.0, 0.0], 5, |i| i == 1), vec![(1, 0.6)]);
        }
        assert!(DenseVectors::load(&path, "other weights", 2).is_none());
        assert!(DenseVectors::load(&path, "sha", 3).is_none());
    }
}
