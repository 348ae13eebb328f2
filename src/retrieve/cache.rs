//! The on-disk index cache: `<cache dir>/<fingerprint>/` holds the tantivy index, the chunks,
//! a manifest of what it was built from and, once asked for, the dense vectors. Opening with a
//! corpus either reuses the folder whose fingerprint matches or builds a new one and says why
//! (by diffing against the last index built with the same settings).

use super::bm25::Bm25Index;
use super::dense::{DenseVectors, EmbeddingStatus};
use super::fingerprint::{describe_changes, IndexSettings, document_states, fingerprint, DocumentState, INDEX_FORMAT};
use super::shared_vectors::{beside_indexes, SharedVectors};
use super::RetrieveError;
use crate::corpus::{chunk_document, read_corpus_cancellable, Chunk, DocumentIssue};
use crate::dataset::{CorpusFile, Dataset};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const MANIFEST_FILE: &str = "manifest.json";
const CHUNKS_FILE: &str = "chunks.json";
const TANTIVY_DIR: &str = "tantivy";

/// What an index folder was built from, written last so a folder without it is incomplete.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IndexManifest {
    pub format: u32,
    pub fingerprint: String,
    pub settings: IndexSettings,
    pub documents: Vec<DocumentState>,
    /// Documents skipped and warnings, as met when the index was built.
    pub issues: Vec<DocumentIssue>,
    pub indexed_documents: usize,
    pub chunks: usize,
    /// RFC 3339, UTC.
    pub built_at: String,
    pub build_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum IndexStatus {
    /// The fingerprint matched an index on disk.
    Reused,
    /// No index existed for these settings.
    Built { reason: String },
    /// An index existed but no longer matches the documents (or could not be opened).
    Rebuilt { reason: String },
}

/// What `assay index` (and every run) tells the user about the index it uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexReport {
    pub dir: PathBuf,
    pub fingerprint: String,
    pub status: IndexStatus,
    /// Documents listed in the corpus.
    pub documents: usize,
    /// Documents that made it into the index.
    pub indexed_documents: usize,
    pub chunks: usize,
    pub skipped: Vec<DocumentIssue>,
    pub warnings: Vec<DocumentIssue>,
    pub build_seconds: Option<f64>,
    /// For dense and hybrid retrieval: whether the chunk vectors were found or computed (set
    /// by the retrieve target once it has made sure of them; None for BM25 alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<EmbeddingStatus>,
}

impl IndexReport {
    /// One line for the terminal, e.g. `rebuilt: aquapure-500.md changed`, and what became of
    /// the vectors where the retrieval uses them (computing them is the slow part of a first
    /// hybrid run, so the user is told which happened).
    pub fn headline(&self) -> String {
        let short = &self.fingerprint[..self.fingerprint.len().min(12)];
        let vectors = match &self.vectors {
            None => String::new(),
            Some(EmbeddingStatus::Reused) => "; vectors reused".to_string(),
            Some(EmbeddingStatus::Computed { chunks, seconds }) => format!("; vectors computed for {chunks} chunks in {seconds:.1} s"),
        };
        let index = match &self.status {
            IndexStatus::Reused => format!(
                "reused index {short}: {} documents, {} chunks, corpus unchanged",
                self.indexed_documents, self.chunks
            ),
            IndexStatus::Built { reason } => format!(
                "built index {short} ({reason}): {} documents, {} chunks",
                self.indexed_documents, self.chunks
            ),
            IndexStatus::Rebuilt { reason } => format!(
                "rebuilt: {reason}; index {short}: {} documents, {} chunks",
                self.indexed_documents, self.chunks
            ),
        };
        index + &vectors
    }
}

/// An open index: chunks in memory, BM25 on disk, dense vectors once loaded.
pub struct CorpusIndex {
    pub dir: PathBuf,
    pub manifest: IndexManifest,
    pub chunks: Vec<Chunk>,
    pub(crate) bm25: Bm25Index,
    pub(crate) dense: Option<DenseVectors>,
    /// Where vectors are also kept for the same documents in other folders: set for a
    /// dataset's index in the user's cache (`index_dataset`), not for a caller's own folder.
    pub(crate) shared_vectors: Option<SharedVectors>,
}

/// Where a dataset's indexes live: `<user cache dir>/assay/index/<dataset key>/` (or
/// `$ASSAY_INDEX_CACHE/<dataset key>/`), never inside the dataset: anyone who writes a dataset
/// can compute its fingerprint, so an index folder that came with the dataset (a poisoned
/// `chunks.json`, tantivy files or vectors) would otherwise be reused unchecked. Only Assay itself
/// writes the user's cache. The key is a hash of the dataset's canonical path, so each dataset's
/// indexes are compared and superseded among themselves only.
pub fn index_dir_for(dataset_root: &Path) -> Result<PathBuf, RetrieveError> {
    let base = index_cache_root().ok_or_else(|| {
        RetrieveError::io(
            dataset_root,
            std::io::Error::other("no cache directory for indexes: set ASSAY_INDEX_CACHE to a folder"),
        )
    })?;
    let canonical = dataset_root.canonicalize().map_err(|e| RetrieveError::io(dataset_root, e))?;
    let key = hex::encode(sha2::Sha256::digest(canonical.as_os_str().as_encoded_bytes()));
    let dir = base.join(&key[..24]);
    std::fs::create_dir_all(&dir).map_err(|e| RetrieveError::io(&dir, e))?;
    // Which dataset the folder serves, so folders of datasets that are gone can be removed.
    let owner = dir.join(DATASET_FILE);
    if !owner.is_file() {
        std::fs::write(&owner, canonical.as_os_str().as_encoded_bytes()).map_err(|e| RetrieveError::io(&owner, e))?;
    }
    remove_orphaned(&base, &dir);
    Ok(dir)
}

const DATASET_FILE: &str = "dataset-path";

/// `$ASSAY_INDEX_CACHE`, else the platform cache dir's `assay/index`.
fn index_cache_root() -> Option<PathBuf> {
    match std::env::var_os("ASSAY_INDEX_CACHE") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => directories::ProjectDirs::from("", "", "assay").map(|d| d.cache_dir().join("index")),
    }
}

/// Index folders of datasets whose folder no longer exists (temporary copies, deleted
/// datasets) are dead weight: delete them.
fn remove_orphaned(base: &Path, current: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.filter_map(Result::ok) {
        let dir = entry.path();
        if dir == current || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(owner) = std::fs::read(dir.join(DATASET_FILE)) else { continue };
        let owner = PathBuf::from(String::from_utf8_lossy(&owner).into_owned());
        if !owner.exists() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Build or verify the index of a dataset's corpus (what `assay index DATASET` runs).
pub fn index_dataset(
    dataset: &Dataset,
    settings: IndexSettings,
) -> Result<(CorpusIndex, IndexReport), RetrieveError> {
    index_dataset_cancellable(dataset, settings, None)
}

/// `index_dataset`, stopping between documents once `cancel` is raised (nothing is left
/// behind: the next build starts over).
pub fn index_dataset_cancellable(
    dataset: &Dataset,
    settings: IndexSettings,
    cancel: Option<&AtomicBool>,
) -> Result<(CorpusIndex, IndexReport), RetrieveError> {
    let (mut index, report) = open_or_build_cancellable(&dataset.documents, &index_dir_for(&dataset.root)?, settings, cancel)?;
    index.shared_vectors = index_cache_root().map(|root| beside_indexes(&root));
    Ok((index, report))
}

/// Reuse the index of exactly these documents and settings under `cache_dir`, or build it.
pub fn open_or_build(
    files: &[CorpusFile],
    cache_dir: &Path,
    settings: IndexSettings,
) -> Result<(CorpusIndex, IndexReport), RetrieveError> {
    open_or_build_cancellable(files, cache_dir, settings, None)
}

/// `open_or_build`, a build stopped between documents once `cancel` is raised.
pub fn open_or_build_cancellable(
    files: &[CorpusFile],
    cache_dir: &Path,
    settings: IndexSettings,
    cancel: Option<&AtomicBool>,
) -> Result<(CorpusIndex, IndexReport), RetrieveError> {
    let states = document_states(files);
    let fingerprint = fingerprint(&states, &settings);
    let dir = cache_dir.join(&fingerprint[..24]);
    let status = if dir.join(MANIFEST_FILE).is_file() {
        match CorpusIndex::open(&dir) {
            Ok(index) if index.manifest.fingerprint == fingerprint => {
                let report = report(&index, files.len(), IndexStatus::Reused, None);
                return Ok((index, report));
            }
            Ok(_) => IndexStatus::Rebuilt { reason: "fingerprint collision in the index folder name".into() },
            Err(e) => IndexStatus::Rebuilt { reason: format!("the index on disk could not be opened ({e})") },
        }
    } else {
        why_no_index(cache_dir, &states, &settings)
    };
    let (index, seconds) = build(files, cache_dir, &dir, &states, &fingerprint, settings, cancel)?;
    remove_superseded(cache_dir, &dir, &settings);
    let report = report(&index, files.len(), status, Some(seconds));
    Ok((index, report))
}

fn report(index: &CorpusIndex, listed: usize, status: IndexStatus, seconds: Option<f64>) -> IndexReport {
    let m = &index.manifest;
    IndexReport {
        dir: index.dir.clone(),
        fingerprint: m.fingerprint.clone(),
        status,
        documents: listed,
        indexed_documents: m.indexed_documents,
        chunks: m.chunks,
        skipped: m.issues.iter().filter(|i| i.skipped).cloned().collect(),
        warnings: m.issues.iter().filter(|i| !i.skipped).cloned().collect(),
        build_seconds: seconds,
        vectors: None,
    }
}

impl CorpusIndex {
    /// Open a complete index folder.
    pub fn open(dir: &Path) -> Result<Self, RetrieveError> {
        let manifest: IndexManifest = read_json(&dir.join(MANIFEST_FILE))?;
        if manifest.format != INDEX_FORMAT {
            return Err(RetrieveError::Corrupt {
                path: dir.join(MANIFEST_FILE),
                message: format!("index format {} (this build reads {INDEX_FORMAT})", manifest.format),
            });
        }
        let chunks: Vec<Chunk> = read_json(&dir.join(CHUNKS_FILE))?;
        if chunks.len() != manifest.chunks {
            return Err(RetrieveError::Corrupt {
                path: dir.join(CHUNKS_FILE),
                message: format!("{} chunks, the manifest says {}", chunks.len(), manifest.chunks),
            });
        }
        let bm25 = Bm25Index::open(&dir.join(TANTIVY_DIR))?;
        Ok(Self { dir: dir.to_path_buf(), manifest, chunks, bm25, dense: None, shared_vectors: None })
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RetrieveError> {
    let bytes = std::fs::read(path).map_err(|e| RetrieveError::io(path, e))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| RetrieveError::Corrupt { path: path.to_path_buf(), message: e.to_string() })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RetrieveError> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| RetrieveError::Corrupt { path: path.to_path_buf(), message: e.to_string() })?;
    std::fs::write(path, bytes).map_err(|e| RetrieveError::io(path, e))
}

/// Manifests of the complete index folders under `cache_dir`, with their folders.
fn manifests(cache_dir: &Path) -> Vec<(PathBuf, IndexManifest)> {
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.')))
        .filter_map(|p| read_json::<IndexManifest>(&p.join(MANIFEST_FILE)).ok().map(|m| (p, m)))
        .collect()
}

fn why_no_index(cache_dir: &Path, states: &[DocumentState], settings: &IndexSettings) -> IndexStatus {
    let all = manifests(cache_dir);
    let latest = all
        .iter()
        .filter(|(_, m)| m.settings == *settings)
        .max_by(|a, b| a.1.built_at.cmp(&b.1.built_at));
    match latest {
        Some((_, previous)) => {
            let changes = describe_changes(&previous.documents, states);
            let reason = if !changes.is_empty() {
                changes
            } else if previous.format != INDEX_FORMAT {
                format!("index format changed ({} to {INDEX_FORMAT})", previous.format)
            } else {
                "the previous index does not match".into()
            };
            IndexStatus::Rebuilt { reason }
        }
        None if all.is_empty() => IndexStatus::Built { reason: "no index yet".into() },
        None => IndexStatus::Built {
            reason: format!(
                "no index yet for chunks of {} words with {} words overlap",
                settings.chunking.size_words, settings.chunking.overlap_words
            ),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn build(
    files: &[CorpusFile],
    cache_dir: &Path,
    dir: &Path,
    states: &[DocumentState],
    fingerprint: &str,
    settings: IndexSettings,
    cancel: Option<&AtomicBool>,
) -> Result<(CorpusIndex, f64), RetrieveError> {
    let start = Instant::now();
    // Reading is the long part (PDF text); nothing is on disk yet when it stops.
    let read = read_corpus_cancellable(files, settings.limits, cancel)?;
    let chunks: Vec<Chunk> = read
        .documents
        .iter()
        .flat_map(|d| chunk_document(d, settings.chunking))
        .collect();
    // Built beside its final place, then renamed: a killed build never looks complete.
    let staging = cache_dir.join(format!(".building-{}-{}", &fingerprint[..24], std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| RetrieveError::io(&staging, e))?;
    }
    let built = write_staged_index(&staging, dir, &chunks, read, states, fingerprint, settings, start);
    if built.is_err() {
        // A write that failed (a full disk) leaves nothing behind: the next build starts over.
        let _ = std::fs::remove_dir_all(&staging);
    }
    let seconds = built?;
    Ok((CorpusIndex::open(dir)?, seconds))
}

/// Write the index into `staging` and rename it to `dir`; the build's seconds.
#[allow(clippy::too_many_arguments)]
fn write_staged_index(
    staging: &Path,
    dir: &Path,
    chunks: &[Chunk],
    read: crate::corpus::CorpusRead,
    states: &[DocumentState],
    fingerprint: &str,
    settings: IndexSettings,
    start: Instant,
) -> Result<f64, RetrieveError> {
    let tantivy_dir = staging.join(TANTIVY_DIR);
    std::fs::create_dir_all(&tantivy_dir).map_err(|e| RetrieveError::io(&tantivy_dir, e))?;
    drop(Bm25Index::build(&tantivy_dir, chunks)?);
    write_json(&staging.join(CHUNKS_FILE), &chunks)?;
    let seconds = start.elapsed().as_secs_f64();
    let manifest = IndexManifest {
        format: INDEX_FORMAT,
        fingerprint: fingerprint.to_string(),
        settings,
        documents: states.to_vec(),
        issues: read.issues,
        indexed_documents: read.documents.len(),
        chunks: chunks.len(),
        built_at: now_rfc3339(),
        build_seconds: seconds,
    };
    write_json(&staging.join(MANIFEST_FILE), &manifest)?;
    if dir.exists() {
        // An incomplete or unreadable folder under our name: replace it.
        std::fs::remove_dir_all(dir).map_err(|e| RetrieveError::io(dir, e))?;
    }
    if let Err(e) = std::fs::rename(staging, dir) {
        // Another process may have finished the same index first; use it if it opens.
        let _ = std::fs::remove_dir_all(staging);
        if !dir.join(MANIFEST_FILE).is_file() {
            return Err(RetrieveError::io(dir, e));
        }
    }
    Ok(seconds)
}

/// A staging folder untouched this long belongs to a build that was killed.
const ABANDONED_BUILD: std::time::Duration = std::time::Duration::from_secs(3600);

/// Older indexes built with the same settings describe an outdated corpus: delete them, and
/// the staging folders of builds killed long ago.
fn remove_superseded(cache_dir: &Path, current: &Path, settings: &IndexSettings) {
    for (dir, manifest) in manifests(cache_dir) {
        if dir != current && manifest.settings == *settings {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let abandoned = entry.file_name().to_string_lossy().starts_with(".building-")
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > ABANDONED_BUILD);
        if abandoned {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
