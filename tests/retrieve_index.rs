//! The BM25 index on disk: search, doc scoping, reuse when nothing changed, rebuild (with the
//! reason) when a manual changes, bad documents reported by name, PDFs as good as Markdown.

use assay::corpus::{ChunkSettings, DocumentProblem};
use assay::dataset::CorpusFile;
use assay::retrieve::{open_or_build, open_or_build_cancellable, IndexSettings, IndexStatus, RetrievalMode, RetrieveError};
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus").join(rel)
}

/// Copy the fixture manuals of `kind` ("md" or "pdf") into a fresh corpus folder.
fn corpus(dir: &Path, kind: &str) -> Vec<CorpusFile> {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for stem in ["lumen-headlamp", "ridgeline-stove", "tarn-tent"] {
        let name = format!("{stem}.{kind}");
        std::fs::copy(fixture(&format!("{kind}/{name}")), corpus.join(&name)).unwrap();
    }
    assay::dataset::list_corpus(&corpus).unwrap()
}

fn top_docs(index: &assay::retrieve::CorpusIndex, query: &str, doc: Option<&str>, k: usize) -> Vec<String> {
    index
        .search(query, doc, k, RetrievalMode::Bm25, None)
        .unwrap()
        .into_iter()
        .map(|c| c.doc)
        .collect()
}

#[test]
fn searches_scopes_and_returns_ranked_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), "md");
    // Chunks of about a section each (these manuals are short), so the ranking below is between
    // the lockout section and the others, not between two halves of a manual.
    let settings = IndexSettings { chunking: ChunkSettings { size_words: 120, overlap_words: 30 }, ..IndexSettings::default() };
    let (index, report) = open_or_build(&files, &dir.path().join("index"), settings).unwrap();
    assert!(matches!(report.status, IndexStatus::Built { .. }), "{report:?}");
    assert_eq!((report.documents, report.indexed_documents), (3, 3));
    assert_eq!(report.chunks, index.chunks.len());

    let hits = index.search("How long do I hold the button to lock the lamp?", None, 5, RetrievalMode::Bm25, None).unwrap();
    assert_eq!(hits[0].doc, "lumen-headlamp");
    assert!(hits[0].text.contains("six seconds"), "{:?}", hits[0]);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().all(|h| h.chunk_id.starts_with(&format!("{}#", h.doc))));

    // Query syntax characters are just text.
    let odd = index.search("\"stove\" AND (canister OR -gas) ? :", None, 3, RetrievalMode::Bm25, None).unwrap();
    assert_eq!(odd[0].doc, "ridgeline-stove");
    assert!(index.search("?!", None, 3, RetrievalMode::Bm25, None).unwrap().is_empty());

    // Scoping: "warranty" is in two manuals; scoped, only the named one answers.
    assert!(top_docs(&index, "warranty years", None, 10).iter().any(|d| d == "ridgeline-stove"));
    let scoped = top_docs(&index, "warranty years", Some("lumen-headlamp"), 10);
    assert!(!scoped.is_empty() && scoped.iter().all(|d| d == "lumen-headlamp"), "{scoped:?}");
    assert!(top_docs(&index, "warranty", Some("no-such-doc"), 10).is_empty());
}

#[test]
fn reused_when_unchanged_rebuilt_with_reason_when_a_manual_changes() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), "md");
    let cache = dir.path().join("index");
    let settings = IndexSettings::default();
    let (first, report) = open_or_build(&files, &cache, settings).unwrap();
    assert_eq!(report.status, IndexStatus::Built { reason: "no index yet".into() });
    let first_dir = first.dir.clone();
    drop(first);

    // Same bytes, new modification time: the same index.
    let lamp = files.iter().find(|f| f.id == "lumen-headlamp").unwrap().path.clone();
    let bytes = std::fs::read(&lamp).unwrap();
    std::fs::write(&lamp, &bytes).unwrap();
    let (again, report) = open_or_build(&files, &cache, settings).unwrap();
    assert_eq!(report.status, IndexStatus::Reused);
    assert_eq!(again.dir, first_dir);
    assert!(report.headline().starts_with("reused index"), "{}", report.headline());
    drop(again);

    // Edit one manual: rebuilt, the reason names it, the new text is searchable.
    let edited = String::from_utf8(bytes).unwrap().replace("six seconds", "nine seconds");
    std::fs::write(&lamp, edited).unwrap();
    let (rebuilt, report) = open_or_build(&files, &cache, settings).unwrap();
    assert_eq!(report.status, IndexStatus::Rebuilt { reason: "lumen-headlamp.md changed".into() });
    assert!(report.headline().starts_with("rebuilt: lumen-headlamp.md changed"), "{}", report.headline());
    assert_ne!(rebuilt.dir, first_dir);
    assert!(!first_dir.exists(), "the outdated index is removed");
    let hit = &rebuilt.search("lockout hold seconds", None, 1, RetrievalMode::Bm25, None).unwrap()[0];
    assert!(hit.text.contains("nine seconds"), "{hit:?}");
    drop(rebuilt);

    // Other chunk settings: a second index beside the first, for a stated reason.
    let other = IndexSettings { chunking: ChunkSettings { size_words: 60, overlap_words: 10 }, ..settings };
    let (_, report) = open_or_build(&files, &cache, other).unwrap();
    assert_eq!(
        report.status,
        IndexStatus::Built { reason: "no index yet for chunks of 60 words with 10 words overlap".into() }
    );
    // Removing a manual is a change too.
    std::fs::remove_file(files[2].path.clone()).unwrap();
    let fewer = &files[..2];
    let (_, report) = open_or_build(fewer, &cache, settings).unwrap();
    assert_eq!(report.status, IndexStatus::Rebuilt { reason: "tarn-tent.md removed".into() });
}

#[test]
fn a_damaged_index_folder_is_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), "md");
    let cache = dir.path().join("index");
    let (index, _) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    let chunks_file = index.dir.join("chunks.json");
    drop(index);
    std::fs::write(&chunks_file, b"[{\"truncated").unwrap();
    let (index, report) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    match &report.status {
        IndexStatus::Rebuilt { reason } => assert!(reason.contains("chunks.json"), "{reason}"),
        other => panic!("expected a rebuild, got {other:?}"),
    }
    assert!(!index.chunks.is_empty());
}

#[test]
fn bad_documents_are_reported_and_the_rest_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = corpus(dir.path(), "md");
    let corpus_dir = dir.path().join("corpus");
    std::fs::write(corpus_dir.join("broken.pdf"), b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog").unwrap();
    std::fs::write(corpus_dir.join("photo.md"), b"\xff\xd8\xff\xe0\0\x10JFIF\0").unwrap();
    files.push(CorpusFile { id: "broken".into(), path: corpus_dir.join("broken.pdf") });
    files.push(CorpusFile { id: "photo".into(), path: corpus_dir.join("photo.md") });
    let cache = dir.path().join("index");
    let (index, report) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    assert_eq!((report.documents, report.indexed_documents), (5, 3));
    let skipped: Vec<&str> = report.skipped.iter().map(|i| i.doc.as_str()).collect();
    assert_eq!(skipped, ["broken", "photo"]);
    assert_eq!(report.skipped[1].problem, DocumentProblem::Binary { offset: 4 });
    assert!(index.chunks.iter().all(|c| c.doc != "broken" && c.doc != "photo"));
    // A reused index still reports what was skipped when it was built.
    drop(index);
    let (_, again) = open_or_build(&files, &cache, IndexSettings::default()).unwrap();
    assert_eq!(again.status, IndexStatus::Reused);
    assert_eq!(again.skipped, report.skipped);
}

/// The same questions against the Markdown manuals and their PDF twins: the PDF index must
/// find the same manual and a chunk holding the answer's words.
#[test]
fn pdf_twins_retrieve_as_well_as_markdown() {
    let questions: &[(&str, &str, &[&str])] = &[
        ("How do I lock the headlamp so it does not switch on in my pack?", "lumen-headlamp", &["six", "seconds"]),
        ("How long does a full charge take?", "lumen-headlamp", &["four", "hours"]),
        ("What is the IPX rating for water?", "lumen-headlamp", &["IPX7"]),
        ("What should the electrode gap of the igniter be?", "ridgeline-stove", &["4", "mm"]),
        ("Can I use the stove inside my tent?", "ridgeline-stove", &["carbon", "monoxide"]),
        ("How do I keep the canister warm in cold weather?", "ridgeline-stove", &["sleeping", "bag"]),
        ("How do I repair a broken tent pole?", "tarn-tent", &["repair", "sleeve"]),
        ("How do I reduce condensation inside the tent?", "tarn-tent", &["vents"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let md = tempfile::tempdir().unwrap();
    let pdf = tempfile::tempdir().unwrap();
    let (md_index, _) = open_or_build(&corpus(md.path(), "md"), &dir.path().join("md"), IndexSettings::default()).unwrap();
    let (pdf_index, report) = open_or_build(&corpus(pdf.path(), "pdf"), &dir.path().join("pdf"), IndexSettings::default()).unwrap();
    assert!(report.skipped.is_empty() && report.warnings.is_empty(), "{report:?}");
    let score = |index: &assay::retrieve::CorpusIndex| {
        questions
            .iter()
            .filter(|(q, doc, words)| {
                let top = index.search(q, None, 3, RetrievalMode::Bm25, None).unwrap();
                top.iter().any(|c| c.doc == *doc && words.iter().all(|w| c.text.contains(w)))
            })
            .count()
    };
    let (md_hits, pdf_hits) = (score(&md_index), score(&pdf_index));
    assert_eq!(md_hits, questions.len(), "Markdown index misses questions");
    assert_eq!(pdf_hits, md_hits, "PDF twins retrieve worse than Markdown");
}

#[test]
fn a_cancelled_build_stops_between_documents_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), "pdf");
    let cache = dir.path().join("index");
    // Raised from another thread once the build has begun would race the three small PDFs;
    // raised before, the build must stop at the first check, before any document is read.
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let Err(err) = open_or_build_cancellable(&files, &cache, IndexSettings::default(), Some(&cancel)) else {
        panic!("a raised flag built the index anyway");
    };
    match &err {
        RetrieveError::Cancelled(stopped) => assert_eq!((stopped.done, stopped.total), (0, 3)),
        other => panic!("not a cancellation: {other}"),
    }
    assert!(err.to_string().contains("0 of 3 documents"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&cache).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "a cancelled build left {left:?}");
    // Lowered, the same call builds the index (nothing stale was kept to reuse).
    cancel.store(false, std::sync::atomic::Ordering::Relaxed);
    let (_, report) = open_or_build_cancellable(&files, &cache, IndexSettings::default(), Some(&cancel)).unwrap();
    assert!(matches!(report.status, IndexStatus::Built { .. }), "{report:?}");
    assert_eq!(report.indexed_documents, 3);
}
