//! Citation precision and recall: the ids an answer cites against the ids the dataset expects.
//!
//! An id is a document id (`doc`) or a chunk id (`doc#n`). A cited id matches an expected id
//! when they are equal, or when the expected id is a whole document and the cited chunk belongs
//! to it (`doc#3` matches `doc`). Citing a whole document does not match an expected chunk: it
//! does not show which passage supports the answer. Ids are compared after trimming whitespace
//! and duplicates count once.
//!
//! Undefined values are absent (`None`), never a made-up 0 or 1:
//! - no expected citations: both are `None` (the dataset did not say what to cite);
//! - nothing cited: precision is `None` (0/0), recall is 0.0.

use std::collections::BTreeSet;

/// The document part of a citation id: `doc#3` → `doc`, `doc` → `doc`.
pub fn document_of(id: &str) -> &str {
    id.split_once('#').map_or(id, |(doc, _)| doc)
}

/// Whether a cited id supports an expected id (see the module docs).
pub fn citation_matches(cited: &str, expected: &str) -> bool {
    cited == expected || (!expected.contains('#') && document_of(cited) == expected)
}

fn distinct(ids: &[String]) -> BTreeSet<&str> {
    ids.iter()
        .map(|id| id.trim())
        .filter(|id| !id.is_empty())
        .collect()
}

/// Share of the distinct cited ids that match some expected id.
pub fn citation_precision(cited: &[String], expected: &[String]) -> Option<f64> {
    let cited = distinct(cited);
    let expected = distinct(expected);
    if cited.is_empty() || expected.is_empty() {
        return None;
    }
    let supported = cited
        .iter()
        .filter(|c| expected.iter().any(|e| citation_matches(c, e)))
        .count();
    Some(supported as f64 / cited.len() as f64)
}

/// Share of the distinct expected ids that some cited id matches.
pub fn citation_recall(cited: &[String], expected: &[String]) -> Option<f64> {
    let cited = distinct(cited);
    let expected = distinct(expected);
    if expected.is_empty() {
        return None;
    }
    let found = expected
        .iter()
        .filter(|e| cited.iter().any(|c| citation_matches(c, e)))
        .count();
    Some(found as f64 / expected.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn chunk_citation_matches_expected_document_but_not_the_reverse() {
        assert!(citation_matches("manual#3", "manual"));
        assert!(citation_matches("manual#3", "manual#3"));
        assert!(!citation_matches("manual", "manual#3"));
        assert!(!citation_matches("manual#2", "manual#3"));
        assert!(!citation_matches("manual-2#1", "manual"));
    }

    #[test]
    fn precision_and_recall_over_distinct_ids() {
        let cited = ids(&["a#1", "a#2", "b#1", "b#1"]);
        let expected = ids(&["a", "c"]);
        assert_eq!(citation_precision(&cited, &expected), Some(2.0 / 3.0));
        assert_eq!(citation_recall(&cited, &expected), Some(0.5));
    }

    #[test]
    fn undefined_cases_are_absent() {
        let none: Vec<String> = Vec::new();
        let expected = ids(&["a"]);
        assert_eq!(citation_precision(&none, &expected), None);
        assert_eq!(citation_recall(&none, &expected), Some(0.0));
        assert_eq!(citation_precision(&ids(&["a"]), &none), None);
        assert_eq!(citation_recall(&ids(&["a"]), &none), None);
        assert_eq!(citation_precision(&none, &none), None);
        assert_eq!(citation_recall(&ids(&[" ", ""]), &ids(&[" "])), None);
    }
}
