//! The sample dataset is test data for everything else, and the real-document sets are the
//! retrieval benchmark's ground truth: check they are what they claim to be.

use assay::corpus::{read_document, ReadLimits};
use assay::dataset::{citation_doc, load_dataset};
use assay::targets::load_answers_file;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

fn trailgear() -> assay::dataset::Dataset {
    load_dataset(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear").as_path())
        .expect("trailgear loads")
}

#[test]
fn questions_are_unique_and_enough_of_each_kind() {
    let dataset = trailgear();
    let ids: BTreeSet<&str> = dataset.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids.len(), dataset.questions.len(), "ids are unique");
    assert!(dataset.questions.len() >= 80, "{} questions", dataset.questions.len());
    let refuse = dataset.questions.iter().filter(|q| q.refuse).count();
    assert!(refuse >= 10, "{refuse} refuse questions");
    let scoped = dataset.questions.iter().filter(|q| q.doc.is_some()).count();
    assert!(scoped >= 20, "{scoped} questions set doc");
}

#[test]
fn every_context_is_verbatim_in_its_document() {
    let dataset = trailgear();
    for q in dataset.questions.iter().filter(|q| !q.refuse) {
        let context = q.context.as_deref().unwrap_or_else(|| panic!("{}: no context", q.id));
        assert!(!q.citations.is_empty(), "{}: no citations", q.id);
        let doc_id = citation_doc(&q.citations[0]);
        let doc = dataset
            .documents
            .iter()
            .find(|d| d.id == doc_id)
            .unwrap_or_else(|| panic!("{}: unknown doc {doc_id}", q.id));
        let text = std::fs::read_to_string(&doc.path).expect("manual is UTF-8");
        assert!(text.contains(context), "{}: context not found verbatim in {doc_id}", q.id);
        if let Some(scope) = &q.doc {
            assert_eq!(scope, doc_id, "{}: doc and citation disagree", q.id);
        }
    }
}

#[test]
fn refuse_questions_have_no_reference() {
    for q in trailgear().questions.iter().filter(|q| q.refuse) {
        assert!(q.answer.is_none() && q.context.is_none() && q.citations.is_empty(), "{}", q.id);
    }
}

#[test]
fn manuals_are_full_length_with_pdf_twins() {
    let dataset = trailgear();
    assert!(dataset.documents.len() >= 8);
    for doc in &dataset.documents {
        let words = std::fs::read_to_string(&doc.path).expect("utf-8").split_whitespace().count();
        assert!((1500..=4000).contains(&words), "{}: {words} words", doc.id);
    }
    let pdfs = std::fs::read_dir(dataset.root.join("pdf")).expect("pdf folder").count();
    assert!(pdfs >= 2, "{pdfs} PDF twins");
}

#[test]
fn answer_sets_cover_every_question() {
    let dataset = trailgear();
    for file in ["answers-careful.jsonl", "answers-sloppy.jsonl"] {
        let answers = load_answers_file(&dataset.root.join(file), &dataset).expect(file);
        assert_eq!(answers.len(), dataset.questions.len(), "{file}");
    }
}

/// Every long-answer set's labels name answers the set has, once each, with a label `correct`
/// can give; both labels occur, so agreement on the set can fail either way.
#[test]
fn long_answer_labels_match_their_answers() {
    for name in ["trailgear", "realdocs-hard", "budgets", "realdocs"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets").join(name);
        let dataset = load_dataset(&root).expect(name);
        let answers = load_answers_file(&root.join("answers-long.jsonl"), &dataset).expect(name);
        let labels = std::fs::read_to_string(root.join("labels-long.jsonl")).expect(name);
        let mut seen = BTreeSet::new();
        let mut outcomes = BTreeSet::new();
        for (line, text) in labels.lines().enumerate() {
            let label: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name} line {}: {e}", line + 1));
            let id = label["id"].as_str().expect("id").to_string();
            assert!(answers.contains_key(&id), "{name}: label for {id}, which has no answer");
            assert!(seen.insert(id.clone()), "{name}: {id} labelled twice");
            assert_eq!(label["judge"], "correct", "{name} {id}");
            outcomes.insert(label["label"].as_str().expect("label").to_string());
        }
        assert_eq!(seen.len(), answers.len(), "{name}: every answer labelled");
        assert_eq!(outcomes, BTreeSet::from(["No".to_string(), "Yes".to_string()]), "{name}");
    }
}

/// The labelled pairs of real answers (PAIRS.md): one per question of the set, each with both
/// answers, a label of `a`, `b` or `tie` and its reason.
#[test]
fn labelled_answer_pairs_belong_to_their_questions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/realdocs");
    let dataset = load_dataset(&root).expect("realdocs");
    let text = std::fs::read_to_string(root.join("pairs-smollm2-qwen0.5b.jsonl")).expect("pairs");
    let mut seen = BTreeSet::new();
    for (line, text) in text.lines().enumerate() {
        let pair: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        let id = pair["id"].as_str().expect("id").to_string();
        assert!(dataset.questions.iter().any(|q| q.id == id), "pair {id} has no question");
        assert!(seen.insert(id.clone()), "{id} twice");
        for key in ["answer_a", "answer_b", "reason"] {
            assert!(pair[key].as_str().is_some_and(|t| !t.trim().is_empty()), "{id}: `{key}`");
        }
        assert!(["a", "b", "tie"].contains(&pair["better"].as_str().unwrap_or("")), "{id}: `better` is {}", pair["better"]);
    }
    assert_eq!(seen.len(), 30);
}

/// The real-document sets' golden contexts were copied from `assay text`: each must still be
/// in what Assay reads from its document (whitespace aside), or a change to the PDF reader has
/// moved the ground truth under the benchmark. Headings are marked `# ` as that command prints
/// them.
#[test]
fn real_document_contexts_are_verbatim_in_what_assay_reads() {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for name in ["realdocs", "realdocs-hard", "budgets"] {
        let dataset = load_dataset(&Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets").join(name)).expect(name);
        let mut texts: HashMap<String, String> = HashMap::new();
        for doc in &dataset.documents {
            let (read, _) = read_document(&doc.id, &doc.path, ReadLimits::default()).unwrap_or_else(|e| panic!("{name}/{}: {e}", doc.id));
            let mut parts = Vec::new();
            for section in &read.sections {
                // As `assay text` prints it, which the contexts were copied from.
                parts.extend(section.heading.as_deref().map(|h| format!("# {h}")));
                parts.extend(section.blocks.iter().map(|b| b.text.clone()));
            }
            texts.insert(doc.id.clone(), squash(&parts.join(" ")));
        }
        let mut checked = 0;
        for q in dataset.questions.iter().filter(|q| !q.refuse) {
            let context = squash(q.context.as_deref().unwrap_or_else(|| panic!("{name} {}: no context", q.id)));
            for citation in &q.citations {
                let doc_id = citation_doc(citation);
                let text = texts.get(doc_id).unwrap_or_else(|| panic!("{name} {}: unknown doc {doc_id}", q.id));
                if !text.contains(&context) {
                    // Where it stops matching, to find the change that moved it.
                    let words: Vec<&str> = context.split(' ').collect();
                    let found = (1..=words.len()).take_while(|&n| text.contains(&words[..n].join(" "))).last().unwrap_or(0);
                    panic!(
                        "{name} {}: context not found in what Assay reads from {doc_id}: its first {found} words are there, then `{}`",
                        q.id,
                        words[found..].iter().take(8).copied().collect::<Vec<_>>().join(" ")
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 60, "{name}: {checked} contexts");
    }
}
