//! The rag target end to end with a real model (SmolLM2, the smallest): retrieval, prompt,
//! generation, cited ids, token counts; a matrix run of the same model twice, whose second run
//! is served from the generation cache; and a run in a fresh database, which must generate the
//! very same answers (greedy decoding is deterministic, so the cache returns what generation
//! would).

use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn rag_matrix_run_with_smollm2() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let rag_run = |models: &str, db: &Path| {
        Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["run", dataset.to_str().unwrap(), "--target", "rag", "--model", models])
            .args(["--limit", "2", "--max-tokens", "12", "--json"])
            .env("ASSAY_DB", db)
            .output()
            .unwrap()
    };
    let out = rag_run("smollm2-135m-instruct,smollm2-135m-instruct", &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("not installed") && std::env::var_os("CI").is_none() {
        eprintln!("SKIPPED: run `assay models pull smollm2-135m-instruct` first ({stderr})");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let export: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one run per model in the matrix");
    for run in runs {
        assert_eq!(run["config"]["model"], "smollm2-135m-instruct");
        // No --retrieval: the core's default, hybrid where MiniLM is installed (CI pulls it).
        assert_eq!(run["config"]["retrieval"], assay::run::default_retrieval().as_str());
        for item in run["items"].as_array().unwrap() {
            assert!(item["error"].is_null(), "{item}");
            let retrieved: Vec<&str> = item["retrieved"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["chunk_id"].as_str().unwrap())
                .collect();
            assert_eq!(retrieved.len(), 4, "top-k chunks recorded");
            for cited in item["citations"].as_array().unwrap() {
                assert!(retrieved.contains(&cited.as_str().unwrap()), "cites only shown chunks");
            }
            assert!(item["prompt_tokens"].as_u64().unwrap() > 100);
            assert!(item["completion_tokens"].as_u64().unwrap() <= 12);
            assert!(!item["answer"].as_str().unwrap().is_empty());
        }
    }
    for (first, second) in runs[0]["items"].as_array().unwrap().iter().zip(runs[1]["items"].as_array().unwrap()) {
        assert!(first.get("cached").is_none(), "the first run generates: {first}");
        assert_eq!(second["cached"], true, "the same request is served from the cache: {second}");
        assert_eq!(first["answer"], second["answer"]);
        assert_eq!(first["completion_tokens"], second["completion_tokens"]);
    }

    // A fresh database has no cache: the model generates again, and greedy gives the same text.
    let fresh = tmp.path().join("fresh.sqlite");
    let out = rag_run("smollm2-135m-instruct", &fresh);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (cached, generated) in runs[1]["items"].as_array().unwrap().iter().zip(again["runs"][0]["items"].as_array().unwrap()) {
        assert!(generated.get("cached").is_none());
        assert_eq!(cached["answer"], generated["answer"], "greedy is deterministic");
    }
}

use crate::llm_common;

/// After an answer that ended on its own, the model names its sources: only numbers of the
/// excerpts shown (or `none`), and the shown answer leaves the list out.
#[test]
fn a_finished_answer_names_its_sources_from_the_excerpts_shown() {
    use assay::llm::chat_template::ChatMessage;
    use assay::llm::generate::{FinishReason, GenerationParams};
    use assay::targets::{answer_text, answer_with_sources, cited_ids, SOURCES_CUE};
    let Some(model) = llm_common::smollm2() else { return };
    let excerpts = [
        "Excerpt [1]\nThe Summit Stove 2 weighs 88 g without its case.",
        "Excerpt [2]\nParis is the capital of France.",
        "Excerpt [3]\nThe AquaPure 500 filters 2,000 litres.",
    ];
    let user = format!(
        "Answer using only the numbered excerpts below.\n\n{}\n\nQuestion: What is the capital of France? Answer in one short sentence.",
        excerpts.join("\n\n")
    );
    let prompt = model.chat_prompt(&[ChatMessage::user(user)]).unwrap();
    let params = GenerationParams { max_tokens: 48, ..GenerationParams::default() };
    let generation = answer_with_sources(&model, &prompt, &params, 3, None).unwrap();
    assert_eq!(generation.finish, FinishReason::EndOfText, "{generation:?}");
    let (answer, list) = generation.text.split_once(SOURCES_CUE).expect("the sources list follows the answer");
    assert!(!answer.trim().is_empty());
    assert!(list == "none]" || list.trim_end_matches(']').split(", ").all(|n| ["1", "2", "3"].contains(&n)), "{list:?}");
    assert_eq!(answer_text(&generation.text), answer.trim());
    let shown = ["doc#0", "doc#1", "doc#2"];
    let cited = cited_ids(&generation.text, &shown);
    assert!(cited.iter().all(|c| shown.contains(&c.as_str())));
    if list != "none]" {
        assert!(!cited.is_empty(), "a listed number is a citation");
    }
}
