//! Vectors kept by what they were computed from, so that the same documents in another folder (a
//! copy of a dataset, a dataset moved or renamed, whose old index folder goes once its folder is
//! gone) reuse them instead of embedding every chunk again: 31.5 s for the sample's 77 chunks on
//! a 2-core AMD EPYC Zen 3 (docs/retrieval.md), minutes for a long report. Index folders stay
//! per dataset folder (cache.rs, `index_dir_for`); vectors depend only on the chunks (named by
//! the index's fingerprint) and the weights, so they can be shared. Only Assay writes this
//! folder, in the user's cache; the `KEEP` most recently used sets stay, the rest are removed.

use super::dense::DenseVectors;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Sets of vectors kept: a long report's are a few MB.
const KEEP: usize = 16;
const EXTENSION: &str = "vectors";

/// A folder of vector sets, one file per (index fingerprint, weights).
#[derive(Debug)]
pub(crate) struct SharedVectors {
    dir: PathBuf,
}

impl SharedVectors {
    /// The file of one set; none unless both names are hex digests (they come from a manifest
    /// on disk, and a file name must never step out of the folder).
    fn path(&self, fingerprint: &str, weights_sha256: &str) -> Option<PathBuf> {
        let weights = weights_sha256.get(..16).unwrap_or(weights_sha256);
        let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
        (hex(fingerprint) && hex(weights)).then(|| self.dir.join(format!("{fingerprint}-{weights}.{EXTENSION}")))
    }

    /// The vectors of the chunks `fingerprint` names, if a set for these weights and this many
    /// chunks is kept (the file is checked as an index folder's own is).
    pub(crate) fn load(&self, fingerprint: &str, weights_sha256: &str, chunks: usize) -> Option<DenseVectors> {
        let path = self.path(fingerprint, weights_sha256)?;
        let vectors = DenseVectors::load(&path, weights_sha256, chunks)?;
        // Used now: the last to be removed.
        if let Ok(file) = std::fs::File::options().append(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Some(vectors)
    }

    /// Keep `vectors` for later copies of the same documents. A cache: a failure to write only
    /// means the next copy embeds again, so it is not an error.
    pub(crate) fn keep(&self, vectors: &DenseVectors, fingerprint: &str, weights_sha256: &str) {
        let Some(path) = self.path(fingerprint, weights_sha256) else { return };
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if vectors.save(&path, weights_sha256).is_ok() {
            self.remove_least_recently_used();
        }
    }

    fn remove_least_recently_used(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        let mut sets: Vec<(SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == EXTENSION))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        sets.sort_by_key(|set| std::cmp::Reverse(set.0));
        for (_, path) in sets.iter().skip(KEEP) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The shared folder beside the per-dataset index folders under `index_root`.
pub(crate) fn beside_indexes(index_root: &Path) -> SharedVectors {
    SharedVectors { dir: index_root.join("vectors") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors(rows: usize) -> DenseVectors {
        DenseVectors::new(2, (0..rows * 2).map(|i| i as f32).collect(), vec![1; rows])
    }

    #[test]
    fn a_kept_set_loads_for_its_chunks_and_weights_only() {
        let dir = tempfile::tempdir().unwrap();
        let shared = beside_indexes(dir.path());
        shared.keep(&vectors(3), "f1", "e1");
        assert!(shared.load("f1", "e1", 3).is_some());
        assert!(shared.load("f1", "e2", 3).is_none(), "other weights");
        assert!(shared.load("f2", "e1", 3).is_none(), "other documents");
        assert!(shared.load("f1", "e1", 4).is_none(), "another chunk count");
        // A damaged file is not used.
        let path = shared.path("f1", "e1").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(shared.load("f1", "e1", 3).is_none());
        // Names that are not digests never become file names.
        shared.keep(&vectors(3), "../f1", "e1");
        assert!(shared.path("../f1", "e1").is_none() && !dir.path().join("f1-e1.vectors").exists());
    }

    #[test]
    fn only_the_most_recently_used_sets_stay() {
        let dir = tempfile::tempdir().unwrap();
        let shared = beside_indexes(dir.path());
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        for i in 0..KEEP {
            shared.keep(&vectors(1), &format!("f{i:x}"), "e");
            let file = std::fs::File::options().append(true).open(shared.path(&format!("f{i:x}"), "e").unwrap()).unwrap();
            file.set_modified(old + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        // f0 is the oldest, but used now.
        assert!(shared.load("f0", "e", 1).is_some());
        shared.keep(&vectors(1), "abc", "e");
        let kept = std::fs::read_dir(dir.path().join("vectors")).unwrap().count();
        assert_eq!(kept, KEEP);
        assert!(shared.load("f1", "e", 1).is_none(), "the least recently used set went");
        assert!(shared.load("f0", "e", 1).is_some() && shared.load("abc", "e", 1).is_some());
    }
}
