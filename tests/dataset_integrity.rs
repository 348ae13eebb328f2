//! The sample dataset is test data for everything else: check it is what it claims to be.

use assay::dataset::{citation_doc, load_dataset};
use assay::targets::load_answers_file;
use std::collections::BTreeSet;
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
