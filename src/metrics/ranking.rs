//! Retrieval ranking metrics with binary relevance: hit@k, MRR and nDCG@k.
//!
//! The ranked list is what the target retrieved, best first; ranks are positions in that list.
//! The values agree with `pytrec_eval` (`success.k`, `recip_rank`, `ndcg_cut.k`) and `ranx`
//! (`hit_rate@k`, `mrr`, `ndcg@k`) given the same list and the same number of relevant items.
//!
//! Relevance of a retrieved chunk to a question comes in two flavours:
//! - by citations: the chunk's id equals an expected `doc#n`, or its document equals an
//!   expected `doc`;
//! - by golden context: the chunk holds at least half of the distinct normalised words of the
//!   question's `context`.
//!
//! Each expected citation (or the golden context) is one relevant item that can be found once:
//! the first chunk that matches it is relevant, later chunks matching only the same item are
//! not. So four chunks of the one expected manual make one hit, not four, and the number of
//! relevant items (for the ideal ranking of nDCG) is the number of distinct expected citations
//! (or 1 for the context). Without this, the ideal would need the count of all chunks of the
//! document in the corpus, which the metrics cannot see.

use std::collections::BTreeSet;

use super::citation::citation_matches;
use super::normalize::squad_tokens;
use crate::dataset::Question;
use crate::record::RetrievedChunk;

/// A ranked list judged for relevance: one flag per position, and how many relevant items
/// exist in all (found or not).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedRanking {
    pub relevant: Vec<bool>,
    pub relevant_total: usize,
}

/// 1.0 when a relevant item is among the first `k` positions, else 0.0.
pub fn hit_at_k(relevant: &[bool], k: usize) -> f64 {
    if relevant.iter().take(k).any(|&r| r) {
        1.0
    } else {
        0.0
    }
}

/// Reciprocal rank of the first relevant item in the whole list; 0.0 when there is none.
pub fn mrr(relevant: &[bool]) -> f64 {
    relevant
        .iter()
        .position(|&r| r)
        .map_or(0.0, |index| 1.0 / (index + 1) as f64)
}

/// nDCG@k with binary gains and a log2(rank + 1) discount; the ideal ranking puts
/// `min(k, relevant_total)` relevant items first. `None` when that ideal is empty
/// (no relevant items, or k = 0): the ratio is undefined.
pub fn ndcg_at_k(relevant: &[bool], relevant_total: usize, k: usize) -> Option<f64> {
    let discount = |index: usize| 1.0 / ((index + 2) as f64).log2();
    let ideal: f64 = (0..relevant_total.min(k)).map(discount).sum();
    if ideal == 0.0 {
        return None;
    }
    let dcg: f64 = (0..relevant.len().min(k))
        .filter(|&i| relevant[i])
        .map(discount)
        .sum();
    Some(dcg / ideal)
}

/// Marks each position relevant when it finds an item not found earlier in the list.
/// `matches(position, item)` says whether the chunk at `position` matches expected `item`.
fn judge_first_finds(
    positions: usize,
    items: usize,
    matches: impl Fn(usize, usize) -> bool,
) -> JudgedRanking {
    let mut found = vec![false; items];
    let relevant = (0..positions)
        .map(|position| {
            let item = (0..items).find(|&item| !found[item] && matches(position, item));
            if let Some(item) = item {
                found[item] = true;
            }
            item.is_some()
        })
        .collect();
    JudgedRanking {
        relevant,
        relevant_total: items,
    }
}

/// Relevance by expected citations; `None` when the question expects none.
pub fn judge_by_citations(
    question: &Question,
    retrieved: &[RetrievedChunk],
) -> Option<JudgedRanking> {
    let expected: Vec<&str> = question
        .citations
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if expected.is_empty() {
        return None;
    }
    Some(judge_first_finds(
        retrieved.len(),
        expected.len(),
        |position, item| {
            let chunk = &retrieved[position];
            let wanted = expected[item];
            citation_matches(&chunk.chunk_id, wanted) || chunk.doc == wanted
        },
    ))
}

fn distinct_words(text: &str) -> BTreeSet<String> {
    squad_tokens(text).into_iter().collect()
}

fn share_present(wanted: &BTreeSet<String>, text: &str) -> f64 {
    wanted.intersection(&distinct_words(text)).count() as f64 / wanted.len() as f64
}

/// Share of the distinct normalised words of `context` that occur in `text`; `None` when the
/// context has no words.
pub fn context_coverage(context: &str, text: &str) -> Option<f64> {
    let wanted = distinct_words(context);
    (!wanted.is_empty()).then(|| share_present(&wanted, text))
}

/// The least coverage of the golden context for a chunk to count as holding it.
pub const CONTEXT_COVERAGE_THRESHOLD: f64 = 0.5;

/// Relevance by golden context; `None` when the question has no context with words in it.
pub fn judge_by_context(
    question: &Question,
    retrieved: &[RetrievedChunk],
) -> Option<JudgedRanking> {
    let wanted = distinct_words(question.context.as_deref()?);
    if wanted.is_empty() {
        return None;
    }
    let covers: Vec<bool> = retrieved
        .iter()
        .map(|chunk| share_present(&wanted, &chunk.text) >= CONTEXT_COVERAGE_THRESHOLD)
        .collect();
    Some(judge_first_finds(retrieved.len(), 1, |position, _| {
        covers[position]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> RetrievedChunk {
        let doc = id.split_once('#').map_or(id, |(d, _)| d).to_string();
        RetrievedChunk {
            chunk_id: id.to_string(),
            doc,
            score: 1.0,
            text: text.to_string(),
        }
    }

    fn question(citations: &[&str], context: Option<&str>) -> Question {
        Question {
            id: "q1".into(),
            question: "How long do I hold reset?".into(),
            answer: Some("Five seconds.".into()),
            doc: None,
            context: context.map(str::to_string),
            citations: citations.iter().map(|c| c.to_string()).collect(),
            refuse: false,
            tags: vec![],
        }
    }

    #[test]
    fn ranking_metrics_on_a_small_list() {
        let relevant = [false, true, false, true];
        assert_eq!(hit_at_k(&relevant, 1), 0.0);
        assert_eq!(hit_at_k(&relevant, 2), 1.0);
        assert_eq!(mrr(&relevant), 0.5);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2();
        let ndcg = ndcg_at_k(&relevant, 3, 4).unwrap_or(f64::NAN);
        assert!((ndcg - dcg / ideal).abs() < 1e-12);
    }

    #[test]
    fn empty_lists_and_empty_ideals() {
        assert_eq!(hit_at_k(&[], 3), 0.0);
        assert_eq!(mrr(&[]), 0.0);
        assert_eq!(ndcg_at_k(&[], 2, 3), Some(0.0));
        assert_eq!(ndcg_at_k(&[true], 0, 3), None);
        assert_eq!(ndcg_at_k(&[true], 1, 0), None);
        assert_eq!(hit_at_k(&[true], 0), 0.0);
    }

    #[test]
    fn each_expected_citation_is_found_once() {
        let q = question(&["manual"], None);
        let retrieved = [
            chunk("other#1", ""),
            chunk("manual#4", ""),
            chunk("manual#5", ""),
        ];
        let judged = judge_by_citations(&q, &retrieved);
        assert_eq!(
            judged,
            Some(JudgedRanking {
                relevant: vec![false, true, false],
                relevant_total: 1
            })
        );

        let q = question(&["manual#5", "other"], None);
        let judged = judge_by_citations(&q, &retrieved);
        assert_eq!(
            judged,
            Some(JudgedRanking {
                relevant: vec![true, false, true],
                relevant_total: 2
            })
        );

        assert_eq!(judge_by_citations(&question(&[], None), &retrieved), None);
    }

    #[test]
    fn context_relevance_needs_half_the_golden_words() {
        let q = question(&[], Some("Hold RESET for 5 seconds until the LED blinks."));
        // Golden words: hold reset for 5 seconds until led blinks (8 distinct; "the" dropped).
        let retrieved = [
            chunk("m#1", "Press reset."),
            chunk("m#2", "Hold reset for 5 seconds."),
            chunk(
                "m#3",
                "Hold RESET for 5 seconds until the LED blinks twice.",
            ),
        ];
        let judged = judge_by_context(&q, &retrieved);
        assert_eq!(
            judged,
            Some(JudgedRanking {
                relevant: vec![false, true, false],
                relevant_total: 1
            })
        );
        assert_eq!(context_coverage("Hold reset", "hold"), Some(0.5));
        assert_eq!(
            judge_by_context(&question(&[], Some("the .")), &retrieved),
            None
        );
        assert_eq!(judge_by_context(&question(&[], None), &retrieved), None);
    }
}
