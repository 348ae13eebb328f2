//! What two runs were asked to do, side by side: target, model, judges and their model,
//! retrieval mode, top-k, reranking, prompt, generation budget, dataset version. A comparison
//! can only put a difference down to one setting when that is the only one that changed; when
//! several changed (say the model and the judge model), the verdict is confounded and says so.

use crate::record::RunRecord;
use serde::Serialize;

/// One setting of both runs; `differs` when the values are not the same.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SettingRow {
    /// A reader's name for the setting: "model", "judge model", "top-k".
    pub setting: String,
    pub a: String,
    pub b: String,
    pub differs: bool,
}

/// Every setting of runs A and B, and what follows from the ones that differ.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SettingsDiff {
    pub rows: Vec<SettingRow>,
    /// The settings that differ, in row order.
    pub differing: Vec<String>,
    /// More than one setting differs: no difference can be put down to one of them.
    pub confounded: bool,
    /// One plain sentence on what differs (None when only one setting or nothing differs
    /// and nothing needs saying).
    pub warning: Option<String>,
}

/// Shown where a run does not have the setting (an answers file has no model).
const NOT_APPLICABLE: &str = "—";

/// The settings of `a` and `b` compared row by row.
pub fn settings_diff(a: &RunRecord, b: &RunRecord) -> SettingsDiff {
    let mut rows = Vec::new();
    let mut push = |setting: &str, va: String, vb: String| {
        let differs = va != vb;
        rows.push(SettingRow { setting: setting.to_string(), a: va, b: vb, differs });
    };
    push("target", target_kind(a).to_string(), target_kind(b).to_string());
    if [a, b].iter().any(|r| matches!(target_kind(r), "answers" | "http")) {
        push("answers file / service", input_of(a), input_of(b));
    }
    push("model", or_dash(a.config.model.as_deref()), or_dash(b.config.model.as_deref()));
    push("judges", judges_of(a), judges_of(b));
    push("judge model", judge_model_of(a), judge_model_of(b));
    push("retrieval mode", retrieval_of(a), retrieval_of(b));
    push("top-k", top_k_of(a), top_k_of(b));
    push("reranking", rerank_of(a), rerank_of(b));
    let (prompt_a, prompt_b) = prompts(a, b);
    push("prompt", prompt_a, prompt_b);
    push("max tokens", max_tokens_of(a), max_tokens_of(b));
    push("knowledge arm", knowledge_of(a), knowledge_of(b));
    push("dataset version", dataset_version(a), dataset_version(b));
    let differing: Vec<String> = rows.iter().filter(|r| r.differs).map(|r| r.setting.clone()).collect();
    let confounded = differing.len() > 1;
    let warning = confounded.then(|| {
        format!(
            "These runs differ in {}: a difference between them cannot be put down to any one of these; \
             the verdicts below are confounded. Compare runs that differ in one setting only.",
            spoken_list(&differing)
        )
    });
    SettingsDiff { rows, differing, confounded, warning }
}

/// "a", "a and b", "a, b and c".
fn spoken_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn or_dash(value: Option<&str>) -> String {
    value.filter(|v| !v.is_empty()).unwrap_or(NOT_APPLICABLE).to_string()
}

/// `answers`, `retrieve`, `rag` or `http`: the target string up to its first colon.
fn target_kind(run: &RunRecord) -> &str {
    run.config.target.split(':').next().unwrap_or_default()
}

fn retrieves(run: &RunRecord) -> bool {
    matches!(target_kind(run), "retrieve" | "rag")
}

/// The answers file or service description a target reads, with the start of its sha256 so
/// an edited file with the same name shows as different.
fn input_of(run: &RunRecord) -> String {
    if !matches!(target_kind(run), "answers" | "http") {
        return NOT_APPLICABLE.to_string();
    }
    let file = run.config.target.split_once(':').map_or("", |(_, rest)| rest);
    match run.config.answers_sha256.as_deref() {
        Some(sha) => format!("{file} (sha256 {})", short(sha)),
        None => file.to_string(),
    }
}

fn judges_of(run: &RunRecord) -> String {
    if run.config.judges.is_empty() {
        return "none".to_string();
    }
    // Same names with an edited rubric are different judges: the spec's hash tells them apart.
    run.config
        .judges
        .iter()
        .map(|j| match run.config.judge_specs.get(j) {
            Some(sha) => format!("{j} ({})", short(sha)),
            None => j.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn judge_model_of(run: &RunRecord) -> String {
    if run.config.judges.is_empty() {
        return NOT_APPLICABLE.to_string();
    }
    let model = or_dash(run.config.judge_model.as_deref());
    match &run.config.judge_scoring {
        Some(scoring) => format!("{model} ({scoring})"),
        None => model,
    }
}

fn retrieval_of(run: &RunRecord) -> String {
    if !retrieves(run) {
        return NOT_APPLICABLE.to_string();
    }
    or_dash(run.config.retrieval.as_deref())
}

fn top_k_of(run: &RunRecord) -> String {
    if retrieves(run) { run.config.top_k.to_string() } else { NOT_APPLICABLE.to_string() }
}

fn rerank_of(run: &RunRecord) -> String {
    if !retrieves(run) {
        return NOT_APPLICABLE.to_string();
    }
    run.config.rerank.as_ref().map_or("none".to_string(), |r| format!("{} (depth {})", r.model, r.depth))
}

fn max_tokens_of(run: &RunRecord) -> String {
    if target_kind(run) != "rag" {
        return NOT_APPLICABLE.to_string();
    }
    run.config.max_tokens.map_or("default".to_string(), |m| m.to_string())
}

fn knowledge_of(run: &RunRecord) -> String {
    run.config.knowledge.map_or("none".to_string(), |k| k.as_str().to_string())
}

fn dataset_version(run: &RunRecord) -> String {
    format!("{} ({})", run.dataset, short(&run.dataset_fingerprint))
}

/// The prompt of two rag runs. A rag run records one hash over its prompt template, its model
/// file and its reranking model, not the prompt's alone: with the same model and reranking a
/// different hash means a different prompt (or a model file replaced under the same id); with
/// different models the prompt cannot be told apart from them and is shown as such.
fn prompts(a: &RunRecord, b: &RunRecord) -> (String, String) {
    let rag = |r: &RunRecord| target_kind(r) == "rag";
    if !rag(a) || !rag(b) {
        let shown = |r: &RunRecord| if rag(r) { "the run's template" } else { NOT_APPLICABLE };
        return (shown(a).to_string(), shown(b).to_string());
    }
    let same_model = a.config.model == b.config.model && a.config.rerank == b.config.rerank;
    if !same_model {
        let unknown = "not recorded apart from the model".to_string();
        return (unknown.clone(), unknown);
    }
    if a.config.answers_sha256 == b.config.answers_sha256 {
        ("same template".to_string(), "same template".to_string())
    } else {
        let hash = |r: &RunRecord| format!("template {}", r.config.answers_sha256.as_deref().map(short).unwrap_or(NOT_APPLICABLE));
        (hash(a), hash(b))
    }
}

/// The first 8 characters of a hash: enough to tell two apart at a glance.
fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RunConfig, RunStatus};

    fn run(target: &str, model: Option<&str>, judge_model: Option<&str>, retrieval: Option<&str>, top_k: usize) -> RunRecord {
        RunRecord {
            id: "r".into(),
            name: "r".into(),
            dataset: "trailgear".into(),
            dataset_root: "/d".into(),
            dataset_fingerprint: "abcdef0123456789".into(),
            config: RunConfig {
                target: target.into(),
                answers_sha256: Some("1111111122222222".into()),
                model: model.map(str::to_string),
                judge_model: judge_model.map(str::to_string),
                judge_scoring: None,
                judges: vec!["correct".into()],
                judge_specs: Default::default(),
                metrics: vec![],
                top_k,
                retrieval: retrieval.map(str::to_string),
                max_tokens: Some(32),
                seed: 0,
                limit: None,
                knowledge: None,
                rerank: None,
            },
            config_hash: "h".into(),
            status: RunStatus::Finished,
            total_items: 1,
            created_at: "2025-01-01T00:00:00Z".into(),
            finished_at: None,
            experiment: None,
        }
    }

    #[test]
    fn one_setting_changed_is_the_factor_and_not_confounded() {
        let a = run("rag:m1", Some("m1"), Some("j"), Some("bm25"), 3);
        let mut b = run("rag:m2", Some("m2"), Some("j"), Some("bm25"), 3);
        b.config.answers_sha256 = Some("3333333344444444".into());
        let diff = settings_diff(&a, &b);
        assert_eq!(diff.differing, vec!["model"]);
        assert!(!diff.confounded);
        assert!(diff.warning.is_none());
        let prompt = diff.rows.iter().find(|r| r.setting == "prompt").map(|r| r.a.clone());
        assert_eq!(prompt.as_deref(), Some("not recorded apart from the model"));
    }

    #[test]
    fn model_judge_model_and_retrieval_changed_is_confounded_and_says_which() {
        let a = run("rag:m1", Some("m1"), Some("j1"), Some("bm25"), 3);
        let b = run("rag:m2", Some("m2"), Some("j2"), Some("hybrid"), 3);
        let diff = settings_diff(&a, &b);
        assert_eq!(diff.differing, vec!["model", "judge model", "retrieval mode"]);
        assert!(diff.confounded);
        let warning = diff.warning.unwrap_or_default();
        assert!(warning.contains("model, judge model and retrieval mode"), "{warning}");
    }

    #[test]
    fn same_model_with_another_input_hash_is_another_prompt() {
        let a = run("rag:m1", Some("m1"), Some("j"), Some("bm25"), 3);
        let mut b = a.clone();
        b.config.answers_sha256 = Some("9999999988888888".into());
        let diff = settings_diff(&a, &b);
        assert_eq!(diff.differing, vec!["prompt"]);
        let row = diff.rows.iter().find(|r| r.setting == "prompt").cloned();
        assert_eq!(row.map(|r| (r.a, r.b)), Some(("template 11111111".into(), "template 99999999".into())));
    }

    #[test]
    fn answers_files_differ_by_file_and_retrieval_does_not_apply() {
        let a = run("answers:/d/careful.jsonl", None, Some("j"), None, 5);
        let mut b = run("answers:/d/sloppy.jsonl", None, Some("j"), None, 3);
        b.config.answers_sha256 = Some("5555555566666666".into());
        let diff = settings_diff(&a, &b);
        assert_eq!(diff.differing, vec!["answers file / service"]);
        let top_k = diff.rows.iter().find(|r| r.setting == "top-k").map(|r| r.a.clone());
        assert_eq!(top_k.as_deref(), Some(NOT_APPLICABLE));
    }
}
