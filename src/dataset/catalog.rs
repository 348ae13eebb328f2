//! The datasets a face can offer without asking for a path: each place given is either a
//! dataset folder (it holds `dataset.toml`) or a folder of them (the sample datasets, the
//! user's datasets folder). Each is loaded as a run would load it, so the question count is
//! the one a run gets, and a dataset that does not load is listed with the reason instead of
//! being left out silently.

use super::load_dataset;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One dataset found, with its question count, or why it does not load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnownDataset {
    /// The dataset's folder (what a run is given).
    pub root: PathBuf,
    /// The manifest's name; the folder's name when the manifest does not load.
    pub name: String,
    pub description: String,
    /// Questions a run would ask; 0 when the dataset does not load.
    pub questions: usize,
    /// Where the place came from, as the caller named it ("sample", "used by a run").
    pub source: String,
    /// The loading error (file, line, field), when the dataset does not load.
    pub problem: Option<String>,
}

/// Every dataset under `places` (each a dataset folder or a folder of dataset folders, with
/// the label to show as its source), each folder once, in the order found; places that do not
/// exist are skipped (a sample folder absent from an installed copy is not an error).
pub fn known_datasets(places: &[(PathBuf, String)]) -> Vec<KnownDataset> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for (place, source) in places {
        let folders: Vec<PathBuf> = if place.join("dataset.toml").is_file() {
            vec![place.clone()]
        } else {
            let Ok(entries) = std::fs::read_dir(place) else { continue };
            let mut inner: Vec<PathBuf> =
                entries.flatten().map(|e| e.path()).filter(|p| p.join("dataset.toml").is_file()).collect();
            inner.sort();
            inner
        };
        for folder in folders {
            let key = folder.canonicalize().unwrap_or_else(|_| folder.clone());
            if seen.insert(key) {
                found.push(describe(&folder, source));
            }
        }
    }
    found
}

fn describe(folder: &Path, source: &str) -> KnownDataset {
    match load_dataset(folder) {
        Ok(dataset) => KnownDataset {
            root: folder.to_path_buf(),
            name: dataset.manifest.name.clone(),
            description: dataset.manifest.description.clone(),
            questions: dataset.questions.len(),
            source: source.to_string(),
            problem: None,
        },
        Err(e) => KnownDataset {
            root: folder.to_path_buf(),
            name: folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            description: String::new(),
            questions: 0,
            source: source.to_string(),
            problem: Some(e.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_are_found_once_with_their_question_counts_and_broken_ones_say_why() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
        let trailgear = samples.join("trailgear");
        let lines = std::fs::read_to_string(trailgear.join("questions.jsonl")).expect("the sample's questions");
        let broken_dir = tempfile::tempdir().expect("a temporary folder");
        let broken = broken_dir.path().join("broken");
        std::fs::create_dir_all(broken.join("corpus")).expect("a corpus folder");
        std::fs::write(broken.join("dataset.toml"), "name = \"broken\"\n").expect("a manifest");
        std::fs::write(broken.join("questions.jsonl"), "{\"id\": 1}\n").expect("a bad questions file");
        let found = known_datasets(&[
            (trailgear.clone(), "sample".into()),
            (samples.clone(), "sample".into()),
            (samples.join("no-such-folder"), "sample".into()),
            (broken.clone(), "used by a run".into()),
        ]);
        assert_eq!(found[0].root, trailgear, "the first place leads");
        assert_eq!(found[0].questions, lines.lines().filter(|l| !l.trim().is_empty()).count());
        assert_eq!(found.iter().filter(|d| d.root.ends_with("trailgear")).count(), 1, "each folder once");
        let bad = found.iter().find(|d| d.root == broken).expect("the broken dataset is listed");
        assert_eq!((bad.questions, bad.name.as_str()), (0, "broken"));
        assert!(bad.problem.as_deref().is_some_and(|p| p.contains("questions.jsonl")), "{:?}", bad.problem);
    }
}
