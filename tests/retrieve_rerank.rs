//! Reranking (`--rerank MODEL`) with a real GGUF model in process (SmolLM2-135M): query
//! likelihood lifts golden chunks that BM25 ranked low, a reranked run records its reranker and
//! picks its chunks from the first stage's candidates best first, and a rerank that cannot
//! apply is refused before anything is written.

use assay::dataset::load_dataset;
use assay::bench::retrieval::is_relevant;
use assay::retrieve::{index_dataset, IndexSettings, RerankModel, Reranker, RetrievalMode};
use crate::llm_common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn trailgear() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear")
}

#[test]
fn query_likelihood_lifts_the_golden_chunk_where_bm25_ranked_it_low() {
    let Some(model) = llm_common::smollm2() else { return };
    let dataset = load_dataset(&trailgear()).unwrap();
    let (index, _) = index_dataset(&dataset, IndexSettings::for_dataset(&dataset)).unwrap();
    let reranker = Reranker::new(RerankModel::Local(model), "smollm2", 5);
    // The questions whose golden chunk BM25 puts second to fifth: reranking can only help or
    // hurt there, so its mean reciprocal rank says which.
    let (mut before, mut after, mut asked) = (0.0, 0.0, 0);
    for question in dataset.questions.iter().filter(|q| !q.refuse) {
        let first_stage = index.search(&question.question, question.doc.as_deref(), 5, RetrievalMode::Bm25, None).unwrap();
        let Some(rank) = first_stage.iter().position(|c| is_relevant(question, c)).filter(|&r| r > 0) else { continue };
        let candidates = first_stage.len();
        let (reranked, cost) = reranker.rerank(&question.question, first_stage, 5).unwrap();
        assert_eq!(cost.candidates, candidates);
        assert_eq!(reranked.len(), candidates);
        assert!(cost.tokens_read > 0);
        let new_rank = reranked.iter().position(|c| is_relevant(question, c)).expect("reranking keeps the candidates");
        assert!(reranked.windows(2).all(|w| w[0].score >= w[1].score), "best first");
        assert!(reranked.iter().all(|c| c.score > 0.0 && c.score <= 1.0));
        before += 1.0 / (rank + 1) as f64;
        after += 1.0 / (new_rank + 1) as f64;
        asked += 1;
        if asked == 6 {
            break;
        }
    }
    assert!(asked >= 4, "only {asked} questions have their golden chunk at ranks 2-5");
    let (before, after) = (before / asked as f64, after / asked as f64);
    eprintln!("MRR over {asked} questions: BM25 {before:.3}, reranked {after:.3}");
    assert!(after > before, "reranking did not lift the golden chunks: MRR {before:.3} -> {after:.3}");
}

fn assay(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_DB", db).output().unwrap()
}

#[test]
fn a_reranked_run_records_its_reranker_and_reorders_the_first_stage() {
    if llm_common::smollm2().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let data = trailgear();
    let common = ["run", data.to_str().unwrap(), "--target", "retrieve", "--retrieval", "bm25", "--limit", "2", "--json"];
    let first_stage = assay(&[&common[..], &["--top-k", "4"]].concat(), &db);
    assert!(first_stage.status.success(), "{}", String::from_utf8_lossy(&first_stage.stderr));
    let reranked = assay(
        &[&common[..], &["--top-k", "2", "--rerank", "smollm2-135m-instruct", "--rerank-depth", "4"]].concat(),
        &db,
    );
    assert!(reranked.status.success(), "{}", String::from_utf8_lossy(&reranked.stderr));
    let first_stage: Value = serde_json::from_slice(&first_stage.stdout).unwrap();
    let reranked: Value = serde_json::from_slice(&reranked.stdout).unwrap();
    let run = &reranked["runs"][0];
    assert_eq!(run["config"]["rerank"]["model"], "smollm2-135m-instruct");
    assert_eq!(run["config"]["rerank"]["depth"], 4);
    assert!(
        run["config"]["target"].as_str().unwrap().contains("rerank=smollm2-135m-instruct@4:question-likelihood"),
        "{}",
        run["config"]
    );
    assert!(first_stage["runs"][0]["config"].get("rerank").is_none(), "a run without reranking has no rerank entry");
    let ids = |item: &Value| -> Vec<String> {
        item["retrieved"].as_array().unwrap().iter().map(|c| c["chunk_id"].as_str().unwrap().to_string()).collect()
    };
    for (plain, item) in first_stage["runs"][0]["items"].as_array().unwrap().iter().zip(run["items"].as_array().unwrap()) {
        assert!(item["error"].is_null(), "{item}");
        let chosen = ids(item);
        assert_eq!(chosen.len(), 2);
        let candidates = ids(plain);
        assert!(chosen.iter().all(|id| candidates.contains(id)), "{chosen:?} come from the first stage's {candidates:?}");
        let scores: Vec<f64> = item["retrieved"].as_array().unwrap().iter().map(|c| c["score"].as_f64().unwrap()).collect();
        assert!(scores.iter().all(|p| *p > 0.0 && *p <= 1.0), "scores are per-token probabilities: {scores:?}");
        assert!(scores[0] >= scores[1], "best first: {scores:?}");
    }
}

#[test]
fn a_rerank_that_cannot_apply_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let data = trailgear();
    let out = assay(
        &["run", data.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--rerank", "smollm2-135m-instruct"],
        &db,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--rerank") && stderr.contains("retrieves"), "{stderr}");
    let out = assay(&["run", data.to_str().unwrap(), "--target", "retrieve", "--rerank", "no-such-reranker"], &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no-such-reranker"), "{stderr}");
    assert!(!db.exists(), "nothing written for a refused run");
}
