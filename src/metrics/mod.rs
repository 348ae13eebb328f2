//! Deterministic metrics: scores computed from text and ids alone, with no model.
//!
//! Text metrics compare an answer with the reference answer (exact match, token F1, ROUGE,
//! BLEU); citation metrics compare cited ids with expected ids; refusal correctness checks that
//! the target declined exactly when it should; ranking metrics judge what retrieval returned.
//! A metric that does not apply to an item, or whose value is undefined, is left out of the
//! item's scores rather than given a made-up value.

pub mod bleu;
pub mod citation;
pub mod lexical;
pub mod normalize;
pub mod numbers;
pub mod rank_correlation;
pub mod ranking;
pub mod refusal;
pub mod rouge;

use std::collections::BTreeMap;

use crate::dataset::Question;
use crate::record::Answer;
use ranking::JudgedRanking;

/// Every metric this module computes, in report order.
pub const ALL_METRICS: &[&str] = &[
    "exact_match",
    "token_f1",
    "rouge_1",
    "rouge_l",
    "bleu",
    "number_consistency",
    "citation_precision",
    "citation_recall",
    "refusal_correct",
    "hit_at_k",
    "mrr",
    "ndcg_at_k",
    "context_hit_at_k",
    "context_mrr",
    "context_ndcg_at_k",
];

/// The groups reports show metrics in, in this order. Anything that is not one of our metrics is
/// a judge.
pub const METRIC_GROUPS: &[&str] = &["judges", "answer overlap", "citations and refusals", "retrieval"];

/// The group of a metric or judge name (one of `METRIC_GROUPS`).
pub fn metric_group(name: &str) -> &'static str {
    match name {
        "exact_match" | "token_f1" | "rouge_1" | "rouge_l" | "bleu" | "number_consistency" => "answer overlap",
        "citation_precision" | "citation_recall" | "refusal_correct" => "citations and refusals",
        n if RETRIEVAL_METRICS.contains(&n) => "retrieval",
        _ => "judges",
    }
}

/// Metric and judge names in the order reports show them: by group (judges first: they answer
/// "is it right?"), then in `ALL_METRICS` order, then by name; each name once.
pub fn in_report_order<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut names: Vec<String> = names.cloned().collect();
    names.sort_by_key(|n| {
        let group = METRIC_GROUPS.iter().position(|g| *g == metric_group(n));
        let rank = ALL_METRICS.iter().position(|m| m == n).unwrap_or(usize::MAX);
        (group, rank, n.clone())
    });
    names.dedup();
    names
}

/// The metrics of retrieval alone (they need retrieved chunks, not answer text).
pub const RETRIEVAL_METRICS: &[&str] = &[
    "hit_at_k",
    "mrr",
    "ndcg_at_k",
    "context_hit_at_k",
    "context_mrr",
    "context_ndcg_at_k",
];

/// Metric name → value in [0, 1] for one item; only the metrics that apply are present.
pub type MetricScores = BTreeMap<String, f64>;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    #[error("unknown metric {name:?}; known metrics: {}", ALL_METRICS.join(", "))]
    UnknownMetric { name: String },
    #[error("no metric named in {list:?}; known metrics: {}", ALL_METRICS.join(", "))]
    EmptySelection { list: String },
}

/// One line on what a metric measures, for reports; `None` for an unknown name.
pub fn describe(name: &str) -> Option<&'static str> {
    Some(match name {
        "exact_match" => "1 if the answer equals the reference after SQuAD normalisation, else 0",
        "token_f1" => "SQuAD token F1 between answer and reference (word overlap)",
        "rouge_1" => "ROUGE-1 F-measure: unigram overlap with the reference (rouge-score)",
        "rouge_l" => "ROUGE-L F-measure: longest common word subsequence with the reference",
        "bleu" => "sentence BLEU against the reference (sacrebleu defaults), scaled to 0-1",
        "number_consistency" => {
            "share of the answer's checkable numbers that the reference (and golden context) agree with"
        }
        "citation_precision" => "share of the answer's cited ids that the dataset expects",
        "citation_recall" => "share of the expected citation ids that the answer cites",
        "refusal_correct" => {
            "1 if the answer declines exactly when the question should be declined"
        }
        "hit_at_k" => "1 if an expected document or chunk is among the top k retrieved chunks",
        "mrr" => "reciprocal rank of the first retrieved chunk matching an expected citation",
        "ndcg_at_k" => "nDCG@k of retrieval, relevance by expected citations",
        "context_hit_at_k" => "1 if a top-k retrieved chunk holds half the golden context's words",
        "context_mrr" => {
            "reciprocal rank of the first chunk holding half the golden context's words"
        }
        "context_ndcg_at_k" => "nDCG@k of retrieval, relevance by golden context coverage",
        _ => return None,
    })
}

/// The name a person reads for a metric ("Token F1" for `token_f1`); `None` for an unknown name
/// (a judge goes by its own name).
pub fn readable_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "exact_match" => "Exact match",
        "token_f1" => "Token F1",
        "rouge_1" => "ROUGE-1",
        "rouge_l" => "ROUGE-L",
        "bleu" => "BLEU",
        "number_consistency" => "Number consistency",
        "citation_precision" => "Citation precision",
        "citation_recall" => "Citation recall",
        "refusal_correct" => "Refusal correct",
        "hit_at_k" => "Hit@k",
        "mrr" => "MRR",
        "ndcg_at_k" => "nDCG@k",
        "context_hit_at_k" => "Context hit@k",
        "context_mrr" => "Context MRR",
        "context_ndcg_at_k" => "Context nDCG@k",
        _ => return None,
    })
}

/// A subset of `ALL_METRICS`, e.g. from `--metrics token_f1,rouge_l`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSelection {
    names: Vec<&'static str>,
}

impl MetricSelection {
    pub fn all() -> Self {
        Self {
            names: ALL_METRICS.to_vec(),
        }
    }

    /// Parses a comma-separated list of metric names; unknown names are an error.
    pub fn parse(list: &str) -> Result<Self, MetricsError> {
        let mut names = Vec::new();
        for requested in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let known = ALL_METRICS
                .iter()
                .find(|&&m| m == requested)
                .ok_or_else(|| MetricsError::UnknownMetric {
                    name: requested.to_string(),
                })?;
            if !names.contains(known) {
                names.push(*known);
            }
        }
        if names.is_empty() {
            return Err(MetricsError::EmptySelection {
                list: list.to_string(),
            });
        }
        Ok(Self { names })
    }

    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(&name)
    }
}

impl Default for MetricSelection {
    fn default() -> Self {
        Self::all()
    }
}

/// Every metric that applies to one item. `k` is the cut-off of `hit_at_k` and `ndcg_at_k`.
///
/// - `refusal_correct` always applies.
/// - Questions that should be declined get nothing else.
/// - Text metrics need a reference answer (`number_consistency` also needs a number it can
///   check); citation metrics need expected citations
///   (precision also needs the answer to cite something).
/// - Ranking metrics need retrieved chunks and expected citations; the `context_` variants
///   need retrieved chunks and a golden context.
pub fn score_item(question: &Question, answer: &Answer, k: usize) -> MetricScores {
    let mut scores = MetricScores::new();
    let mut put = |name: &str, value: Option<f64>| {
        if let Some(value) = value {
            scores.insert(name.to_string(), value);
        }
    };
    put(
        "refusal_correct",
        Some(refusal::refusal_correct(&answer.text, question.refuse)),
    );
    if question.refuse {
        return scores;
    }

    if let Some(reference) = question.answer.as_deref() {
        let candidate = answer.text.as_str();
        put(
            "exact_match",
            Some(lexical::exact_match(candidate, reference)),
        );
        put("token_f1", Some(lexical::token_f1(candidate, reference)));
        put("rouge_1", Some(rouge::rouge_1(candidate, reference)));
        put("rouge_l", Some(rouge::rouge_l(candidate, reference)));
        put("bleu", Some(bleu::bleu(candidate, reference)));
        put(
            "number_consistency",
            numbers::number_consistency(candidate, reference, question.context.as_deref()).score(),
        );
    }

    put(
        "citation_precision",
        citation::citation_precision(&answer.citations, &question.citations),
    );
    put(
        "citation_recall",
        citation::citation_recall(&answer.citations, &question.citations),
    );

    if !answer.retrieved.is_empty() {
        let by_citations = ranking::judge_by_citations(question, &answer.retrieved);
        let by_context = ranking::judge_by_context(question, &answer.retrieved);
        for (prefix, judged) in [("", by_citations), ("context_", by_context)] {
            if let Some(judged) = judged {
                put_ranking(&mut put, prefix, &judged, k);
            }
        }
    }
    scores
}

fn put_ranking(
    put: &mut impl FnMut(&str, Option<f64>),
    prefix: &str,
    judged: &JudgedRanking,
    k: usize,
) {
    put(
        &format!("{prefix}hit_at_k"),
        Some(ranking::hit_at_k(&judged.relevant, k)),
    );
    put(
        &format!("{prefix}mrr"),
        Some(ranking::mrr(&judged.relevant)),
    );
    put(
        &format!("{prefix}ndcg_at_k"),
        ranking::ndcg_at_k(&judged.relevant, judged.relevant_total, k),
    );
}

/// `score_item` restricted to a selection of metrics.
pub fn score_selected(
    question: &Question,
    answer: &Answer,
    k: usize,
    selection: &MetricSelection,
) -> MetricScores {
    let mut scores = score_item(question, answer, k);
    scores.retain(|name, _| selection.contains(name));
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RetrievedChunk;

    fn question() -> Question {
        Question {
            id: "q017".into(),
            question: "How long do I hold the reset button?".into(),
            answer: Some("Five seconds.".into()),
            doc: Some("aquapure-500".into()),
            context: Some("Hold RESET for 5 seconds until the LED blinks.".into()),
            citations: vec!["aquapure-500".into()],
            refuse: false,
            tags: vec![],
        }
    }

    fn chunk(id: &str, text: &str) -> RetrievedChunk {
        let doc = citation::document_of(id).to_string();
        RetrievedChunk {
            chunk_id: id.into(),
            doc,
            score: 1.0,
            text: text.into(),
        }
    }

    #[test]
    fn full_item_gets_every_metric() {
        let answer = Answer {
            text: "Hold it for five seconds.".into(),
            citations: vec!["aquapure-500#2".into()],
            retrieved: vec![
                chunk("other#1", "Unrelated text."),
                chunk(
                    "aquapure-500#2",
                    "Hold RESET for 5 seconds until the LED blinks.",
                ),
            ],
            ..Answer::default()
        };
        let scores = score_item(&question(), &answer, 4);
        let names: Vec<&str> = scores.keys().map(String::as_str).collect();
        let mut expected = ALL_METRICS.to_vec();
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert_eq!(scores["citation_precision"], 1.0);
        assert_eq!(scores["mrr"], 0.5);
        assert_eq!(scores["context_mrr"], 0.5);
        assert_eq!(scores["refusal_correct"], 1.0);
        assert!(scores.values().all(|v| (0.0..=1.0).contains(v)));
    }

    #[test]
    fn metrics_that_do_not_apply_are_absent() {
        let mut q = question();
        q.citations.clear();
        q.context = None;
        let answer = Answer {
            text: "Five seconds.".into(),
            ..Answer::default()
        };
        let scores = score_item(&q, &answer, 4);
        let names: Vec<&str> = scores.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "bleu",
                "exact_match",
                "number_consistency",
                "refusal_correct",
                "rouge_1",
                "rouge_l",
                "token_f1"
            ]
        );
        assert_eq!(scores["exact_match"], 1.0);

        // Expected citations but none given: recall 0, precision undefined.
        let scores = score_item(&question(), &answer, 4);
        assert_eq!(scores.get("citation_recall"), Some(&0.0));
        assert_eq!(scores.get("citation_precision"), None);
        assert_eq!(scores.get("hit_at_k"), None);
    }

    #[test]
    fn refuse_questions_only_score_refusal() {
        let q = Question {
            answer: None,
            refuse: true,
            context: None,
            ..question()
        };
        let answer = Answer {
            text: "I can't answer that from the manuals.".into(),
            retrieved: vec![chunk("aquapure-500#1", "text")],
            ..Answer::default()
        };
        let scores = score_item(&q, &answer, 4);
        assert_eq!(scores.len(), 1);
        assert_eq!(scores["refusal_correct"], 1.0);
    }

    #[test]
    fn selection_parses_names_and_rejects_unknown_ones() {
        let selection = MetricSelection::parse(" token_f1, rouge_l,token_f1 ");
        assert_eq!(
            selection.as_ref().map(|s| s.names().to_vec()),
            Ok(vec!["token_f1", "rouge_l"])
        );
        let err = MetricSelection::parse("token_f1,rogue_l");
        assert_eq!(
            err,
            Err(MetricsError::UnknownMetric {
                name: "rogue_l".into()
            })
        );
        assert!(matches!(
            MetricSelection::parse(" , "),
            Err(MetricsError::EmptySelection { .. })
        ));
        if let Err(e) = MetricSelection::parse("nope") {
            assert!(
                e.to_string().contains("rouge_l"),
                "error lists known metrics: {e}"
            );
        }
    }

    #[test]
    fn score_selected_keeps_only_the_selection() {
        let selection = MetricSelection::parse("exact_match,mrr").unwrap_or_default();
        let answer = Answer {
            text: "Five seconds".into(),
            ..Answer::default()
        };
        let scores = score_selected(&question(), &answer, 4, &selection);
        assert_eq!(scores.keys().collect::<Vec<_>>(), ["exact_match"]);
    }

    #[test]
    fn every_metric_has_a_description() {
        for name in ALL_METRICS {
            assert!(describe(name).is_some_and(|d| !d.is_empty()), "{name}");
        }
        assert_eq!(describe("nope"), None);
    }
}
