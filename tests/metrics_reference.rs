//! Agreement of Assay's metrics with their reference implementations.
//!
//! `tests/fixtures/metrics/reference.jsonl` holds values written by
//! `scripts/metrics_reference.py` (SQuAD v2 logic, rouge-score, sacrebleu, pytrec_eval) for the
//! pairs in `pairs.jsonl` and the ranked lists in `rankings.jsonl`. Every value must agree to
//! 1e-6; the test prints the largest difference per metric.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assay::metrics::{bleu, lexical, ranking, rouge};
use serde::Deserialize;
use serde_json::Value;

const TOLERANCE: f64 = 1e-6;

#[derive(Deserialize)]
struct Pair {
    id: String,
    candidate: String,
    reference: String,
}

#[derive(Deserialize)]
struct Ranking {
    id: String,
    relevant: Vec<bool>,
    relevant_total: usize,
    k: usize,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metrics")
}

fn read_jsonl<T: serde::de::DeserializeOwned>(name: &str) -> Vec<T> {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Reference values by item id, then metric name.
fn reference_values() -> BTreeMap<String, BTreeMap<String, f64>> {
    let rows: Vec<BTreeMap<String, Value>> = read_jsonl("reference.jsonl");
    rows.into_iter()
        .map(|row| {
            let id = row["id"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("row without id: {row:?}"));
            let values = row
                .iter()
                .filter_map(|(name, v)| v.as_f64().map(|v| (name.clone(), v)))
                .collect();
            (id, values)
        })
        .collect()
}

/// Compares computed values with the reference, recording the largest difference per metric.
struct Agreement {
    reference: BTreeMap<String, BTreeMap<String, f64>>,
    max_diff: BTreeMap<&'static str, f64>,
    checked: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

impl Agreement {
    fn check(&mut self, id: &str, metric: &'static str, ours: f64, context: &str) {
        let Some(theirs) = self
            .reference
            .get(id)
            .and_then(|values| values.get(metric))
            .copied()
        else {
            self.failures
                .push(format!("{id}: no reference value for {metric}"));
            return;
        };
        let diff = (ours - theirs).abs();
        let max = self.max_diff.entry(metric).or_insert(0.0);
        *max = max.max(diff);
        *self.checked.entry(metric).or_insert(0) += 1;
        if !(diff <= TOLERANCE) {
            self.failures.push(format!(
                "{id} {metric}: ours {ours} reference {theirs} ({context})"
            ));
        }
    }
}

#[test]
fn metrics_agree_with_reference_implementations() {
    let pairs: Vec<Pair> = read_jsonl("pairs.jsonl");
    let rankings: Vec<Ranking> = read_jsonl("rankings.jsonl");
    assert!(
        pairs.len() >= 200,
        "fixture has {} pairs, expected at least 200",
        pairs.len()
    );
    assert!(
        rankings.len() >= 50,
        "fixture has {} rankings, expected at least 50",
        rankings.len()
    );

    let mut agreement = Agreement {
        reference: reference_values(),
        max_diff: BTreeMap::new(),
        checked: BTreeMap::new(),
        failures: Vec::new(),
    };

    for pair in &pairs {
        let (c, r) = (pair.candidate.as_str(), pair.reference.as_str());
        let context = format!("candidate {c:?}, reference {r:?}");
        agreement.check(
            &pair.id,
            "exact_match",
            lexical::exact_match(c, r),
            &context,
        );
        agreement.check(&pair.id, "token_f1", lexical::token_f1(c, r), &context);
        agreement.check(&pair.id, "rouge_1", rouge::rouge_1(c, r), &context);
        agreement.check(&pair.id, "rouge_l", rouge::rouge_l(c, r), &context);
        agreement.check(&pair.id, "bleu", bleu::bleu(c, r), &context);
    }
    for list in &rankings {
        let context = format!(
            "relevant {:?}, total {}, k {}",
            list.relevant, list.relevant_total, list.k
        );
        agreement.check(
            &list.id,
            "hit_at_k",
            ranking::hit_at_k(&list.relevant, list.k),
            &context,
        );
        agreement.check(&list.id, "mrr", ranking::mrr(&list.relevant), &context);
        let ndcg = ranking::ndcg_at_k(&list.relevant, list.relevant_total, list.k);
        match ndcg {
            Some(value) => agreement.check(&list.id, "ndcg_at_k", value, &context),
            None => agreement
                .failures
                .push(format!("{} ndcg_at_k undefined ({context})", list.id)),
        }
    }

    for (metric, diff) in &agreement.max_diff {
        println!(
            "{metric:>12}: {:>4} items, max |ours - reference| = {diff:.3e}",
            agreement.checked[metric]
        );
    }
    assert!(
        agreement.failures.is_empty(),
        "{} disagreements with the reference:\n{}",
        agreement.failures.len(),
        agreement.failures.join("\n")
    );
}
