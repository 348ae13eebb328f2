//! MiniLM embeddings through candle, dense and hybrid search, and the retrieve target, on the
//! real all-MiniLM-L6-v2 weights from the models folder (`assay models pull minilm-l6-v2`).
//! Without the files these tests say so and stop; under CI (`CI` set) a missing model fails.

use assay::corpus::ChunkSettings;
use assay::dataset::{CorpusFile, Question};
use assay::retrieve::{
    minilm_dir, open_or_build, EmbeddingStatus, IndexSettings, MiniLm, RetrievalMode,
};
use assay::targets::{RetrieveTarget, Target};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn model_dir() -> Option<PathBuf> {
    let dir = minilm_dir(&assay::models::registry::default_models_dir().ok()?);
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "MiniLM files missing in {}", dir.display());
    eprintln!("skipping: MiniLM files missing in {}", dir.display());
    None
}

fn model() -> Option<&'static MiniLm> {
    static MODEL: OnceLock<Option<MiniLm>> = OnceLock::new();
    MODEL
        .get_or_init(|| model_dir().map(|d| MiniLm::load(&d).expect("MiniLM loads")))
        .as_ref()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn embeddings_are_unit_vectors_that_put_paraphrases_close() {
    let Some(model) = model() else { return };
    let texts = [
        "How do I charge the headlamp?",
        "Charge the built-in battery with the USB-C cable.",
        "Pitch the tent with the narrow end facing the wind.",
    ];
    let v = model.embed(&texts).unwrap();
    assert_eq!(v.len(), 3);
    for row in &v {
        assert_eq!(row.len(), 384);
        assert!((dot(row, row) - 1.0).abs() < 1e-4);
    }
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.2, "{} vs {}", dot(&v[0], &v[1]), dot(&v[0], &v[2]));
    // Batching and order do not change a text's vector.
    let alone = model.embed(&texts[2..]).unwrap();
    assert!(dot(&alone[0], &v[2]) > 0.9999);
}

fn corpus(dir: &Path) -> Vec<CorpusFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/md");
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, corpus.join(path.file_name().unwrap())).unwrap();
    }
    assay::dataset::list_corpus(&corpus).unwrap()
}

#[test]
fn dense_and_hybrid_find_paraphrased_questions_and_vectors_are_reused() {
    let Some(model) = model() else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    let cache = dir.path().join("index");
    let (mut index, _) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    assert!(matches!(index.ensure_embeddings(model).unwrap(), EmbeddingStatus::Computed { .. }));
    // Few shared words with the manual's "Never store the tent wet; mildew ...".
    let query = "what happens if I pack away my shelter while it is still damp";
    for mode in [RetrievalMode::Dense, RetrievalMode::Hybrid] {
        let hits = index.search(query, None, 3, mode, Some(model)).unwrap();
        assert_eq!(hits[0].doc, "tarn-tent", "{mode}: {hits:?}");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        let scoped = index.search(query, Some("lumen-headlamp"), 3, mode, Some(model)).unwrap();
        assert!(scoped.iter().all(|c| c.doc == "lumen-headlamp"), "{mode}");
    }
    // Without vectors, dense search is an error, not an empty list.
    let (fresh, _) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    assert!(fresh.search(query, None, 3, RetrievalMode::Dense, Some(model)).is_err());
    let mut fresh = fresh;
    assert_eq!(fresh.ensure_embeddings(model).unwrap(), EmbeddingStatus::Reused);
}

#[test]
fn retrieve_target_fills_retrieved_chunks_only() {
    let Some(dir_of_model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    // Small chunks, so the headlamp manual alone has more than the four asked for.
    let settings = IndexSettings { chunking: ChunkSettings { size_words: 40, overlap_words: 10 }, ..IndexSettings::default() };
    let (index, report) = open_or_build(&files, &dir.path().join("index"), settings).unwrap();
    let (mut target, report) =
        RetrieveTarget::with_index(index, report, RetrievalMode::Hybrid, 4, &dir_of_model).unwrap();
    assert!(report.vectors.is_some());
    assert!(report.headline().contains("; vectors "), "{}", report.headline());
    assert_eq!(target.describe(), "retrieve:hybrid:top4");
    let question = Question {
        id: "q1".into(),
        question: "How many lumens does spot boost give?".into(),
        answer: Some("300 lumens".into()),
        doc: Some("lumen-headlamp".into()),
        context: None,
        citations: vec!["lumen-headlamp".into()],
        refuse: false,
        tags: vec![],
    };
    let answer = target.answer(&question).unwrap();
    assert!(answer.text.is_empty());
    assert_eq!(answer.retrieved.len(), 4);
    assert!(answer.retrieved.iter().all(|c| c.doc == "lumen-headlamp"));
    assert!(answer.retrieved[..2].iter().any(|c| c.text.contains("Spot boost")), "{:?}", answer.retrieved);
}

/// A copy of a dataset in another folder gets an index folder of its own (`index_dir_for`) but
/// reuses the vectors computed for the same documents: the kept set is read, not computed and
/// written again, and both copies retrieve the same chunks with the same scores. A copy whose
/// documents differ computes its own.
#[test]
fn a_copy_of_a_dataset_elsewhere_reuses_the_vectors_of_the_same_documents() {
    use crate::common::{assay_command, dataset_copy, ok};
    use std::os::unix::fs::MetadataExt;
    if model_dir().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("index");
    // Two manuals and the four questions about one of them: a quarter of the sample's vectors.
    let small_copy = |name: &str| {
        let dataset = dataset_copy(&tmp.path().join(name));
        for entry in std::fs::read_dir(dataset.join("corpus")).unwrap() {
            let path = entry.unwrap().path();
            if !["summit-stove-2.md", "ridgeline-2p.md"].iter().any(|keep| path.ends_with(keep)) {
                std::fs::remove_file(path).unwrap();
            }
        }
        let questions = std::fs::read_to_string(dataset.join("questions.jsonl")).unwrap();
        let first: Vec<&str> = questions.lines().take(4).collect();
        assert!(first.iter().all(|q| q.contains("\"summit-stove-2\"")), "{first:?}");
        std::fs::write(dataset.join("questions.jsonl"), first.join("\n") + "\n").unwrap();
        dataset
    };
    let copies: Vec<PathBuf> = ["a", "b", "c"].iter().map(|name| small_copy(name)).collect();
    // The run's output, and the vectors' part of the index line it printed.
    let run = |dataset: &Path| -> (serde_json::Value, String) {
        let args = ["run", dataset.to_str().unwrap(), "--target", "retrieve", "--retrieval", "dense", "--limit", "4", "--json"];
        let out = assay_command(&args, &tmp.path().join("runs.sqlite")).env("ASSAY_INDEX_CACHE", &cache).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let vectors = stderr.lines().find_map(|line| line.split_once("; vectors ")).map(|(_, said)| said.to_string()).unwrap_or_default();
        (serde_json::from_str(&ok(out)).unwrap(), vectors)
    };
    let kept_sets = || -> Vec<PathBuf> {
        let mut sets: Vec<PathBuf> = std::fs::read_dir(cache.join("vectors"))
            .map(|entries| entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "vectors")).collect())
            .unwrap_or_default();
        sets.sort();
        sets
    };
    let retrieved = |run: &serde_json::Value| -> Vec<serde_json::Value> {
        run["runs"][0]["items"].as_array().unwrap().iter().map(|item| item["retrieved"].clone()).collect()
    };

    let (first, said) = run(&copies[0]);
    assert!(said.starts_with("computed for 2"), "the index line said: vectors {said:?}");
    let kept = kept_sets();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (inode, bytes) = (std::fs::metadata(&kept[0]).unwrap().ino(), std::fs::read(&kept[0]).unwrap());
    let (second, said) = run(&copies[1]);
    assert_eq!(said, "reused", "the index line of the copy");
    assert_eq!(kept_sets(), kept);
    assert_eq!(std::fs::metadata(&kept[0]).unwrap().ino(), inode, "the second copy wrote the set again: it computed the vectors");
    assert_eq!(retrieved(&second), retrieved(&first));
    // Each copy's own index folder holds the same vectors.
    let own: Vec<Vec<u8>> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|dataset_key| dataset_key.join("dataset-path").is_file())
        .flat_map(|dataset_key| std::fs::read_dir(dataset_key).unwrap().map(|e| e.unwrap().path().join("embeddings-minilm-l6-v2.bin")))
        .filter(|file| file.is_file())
        .map(|file| std::fs::read(file).unwrap())
        .collect();
    assert_eq!(own.len(), 2);
    assert!(own.iter().all(|vectors| *vectors == bytes));

    // Other documents, other vectors.
    let manual = copies[2].join("corpus").join("ridgeline-2p.md");
    let text = std::fs::read_to_string(&manual).unwrap();
    std::fs::write(&manual, format!("{text}\n\nPitch the tent on level ground, door away from the wind.\n")).unwrap();
    let (_, said) = run(&copies[2]);
    assert!(said.starts_with("computed for "), "the index line said: vectors {said:?}");
    assert_eq!(kept_sets().len(), 2);
}
