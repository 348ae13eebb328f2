//! What an index was built from: a content hash per document plus the settings. Equal
//! fingerprints mean the same chunks; a different one names what changed.

use crate::corpus::{ChunkSettings, ReadLimits};
use crate::dataset::CorpusFile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Everything besides the documents that decides the chunks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct IndexSettings {
    pub chunking: ChunkSettings,
    pub limits: ReadLimits,
}

impl IndexSettings {
    /// The defaults with the dataset's own `[chunking]` settings, if any.
    pub fn for_dataset(dataset: &crate::dataset::Dataset) -> Self {
        let mut settings = Self::default();
        if let Some(chunking) = &dataset.manifest.chunking {
            if let Some(size) = chunking.size_words {
                settings.chunking.size_words = size;
            }
            if let Some(overlap) = chunking.overlap_words {
                settings.chunking.overlap_words = overlap;
            }
        }
        settings.chunking = settings.chunking.normalized();
        settings
    }
}

/// Bump when reading, chunking or the index layout change, so old indexes are rebuilt.
/// 2: PDF font widths fixed before extraction, 0.1 em word gaps, text beyond the page dropped.
/// 3: ligature glyphs a font leaves without letters restored (`corpus::pdf::ligatures`).
/// 4: a glyph whose origin lies past the page's edge is dropped (was: one em past it); text
///    set rotated (landscape tables on portrait pages) is laid out along its own baseline.
/// 5: ToUnicode maps that contradict a font's encoding on a letter's case corrected.
/// 6: ligature glyphs mapped to U+FFFD restored from the document's own spelling.
pub const INDEX_FORMAT: u32 = 6;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DocumentState {
    pub id: String,
    /// The file name inside the corpus folder (what a user recognises in "x.md changed").
    pub file: String,
    /// sha256 of the bytes, or `unreadable: …` when the file could not be read.
    pub sha256: String,
}

pub(crate) fn document_states(files: &[CorpusFile]) -> Vec<DocumentState> {
    files
        .iter()
        .map(|f| DocumentState {
            id: f.id.clone(),
            file: f
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| f.id.clone()),
            sha256: hash_file(&f.path),
        })
        .collect()
}

fn hash_file(path: &std::path::Path) -> String {
    // Never stream from a device or a pipe (a symlink to /dev/zero would never end).
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return "unreadable: not a regular file".into(),
        Err(e) => return format!("unreadable: {e}"),
    }
    let hashed = std::fs::File::open(path).and_then(|mut file| {
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher)?;
        Ok(hex::encode(hasher.finalize()))
    });
    hashed.unwrap_or_else(|e| format!("unreadable: {e}"))
}

pub(crate) fn fingerprint(states: &[DocumentState], settings: &IndexSettings) -> String {
    let mut hasher = Sha256::new();
    hasher.update(format!("assay-index-format {INDEX_FORMAT}\n"));
    hasher.update(serde_json::to_string(settings).unwrap_or_default());
    hasher.update("\n");
    let mut sorted: Vec<&DocumentState> = states.iter().collect();
    sorted.sort_by(|a, b| a.file.cmp(&b.file));
    for s in sorted {
        hasher.update(format!("{}\t{}\t{}\n", s.id, s.file, s.sha256));
    }
    hex::encode(hasher.finalize())
}

/// Why an index built from `before` does not serve `now`: "aquapure-500.md changed",
/// "2 documents changed (a.md, b.md); added c.pdf". Empty when the documents are the same.
pub(crate) fn describe_changes(before: &[DocumentState], now: &[DocumentState]) -> String {
    let old: BTreeMap<&str, &DocumentState> = before.iter().map(|s| (s.file.as_str(), s)).collect();
    let new: BTreeMap<&str, &DocumentState> = now.iter().map(|s| (s.file.as_str(), s)).collect();
    let changed: Vec<&str> = new
        .iter()
        .filter(|(f, s)| old.get(*f).is_some_and(|o| o.sha256 != s.sha256))
        .map(|(f, _)| *f)
        .collect();
    let added: Vec<&str> = new.keys().filter(|f| !old.contains_key(*f)).copied().collect();
    let removed: Vec<&str> = old.keys().filter(|f| !new.contains_key(*f)).copied().collect();
    let mut parts = Vec::new();
    for (verb, files) in [("changed", changed), ("added", added), ("removed", removed)] {
        match files.len() {
            0 => {}
            1 => parts.push(format!("{} {verb}", files[0])),
            n => parts.push(format!("{n} documents {verb} ({})", list(&files))),
        }
    }
    parts.join("; ")
}

fn list(files: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text = files.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if files.len() > SHOWN {
        text.push_str(&format!(", and {} more", files.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(file: &str, sha: &str) -> DocumentState {
        DocumentState { id: file.split('.').next().unwrap_or(file).into(), file: file.into(), sha256: sha.into() }
    }

    #[test]
    fn names_changed_added_and_removed_files() {
        let before = [state("a.md", "1"), state("b.md", "2"), state("c.md", "3")];
        let now = [state("a.md", "1"), state("b.md", "9"), state("d.pdf", "4")];
        assert_eq!(describe_changes(&before, &now), "b.md changed; d.pdf added; c.md removed");
        assert_eq!(describe_changes(&before, &before), "");
    }

    #[test]
    fn fingerprint_depends_on_contents_and_settings_not_order() {
        let settings = IndexSettings::default();
        let a = [state("a.md", "1"), state("b.md", "2")];
        let b = [state("b.md", "2"), state("a.md", "1")];
        assert_eq!(fingerprint(&a, &settings), fingerprint(&b, &settings));
        let c = [state("a.md", "1"), state("b.md", "3")];
        assert_ne!(fingerprint(&a, &settings), fingerprint(&c, &settings));
        let mut other = settings;
        other.chunking.size_words += 1;
        assert_ne!(fingerprint(&a, &settings), fingerprint(&a, &other));
    }
}
