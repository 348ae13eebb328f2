//! Exact match and token F1, as the official SQuAD v2 evaluation script defines them.
//!
//! Both compare SQuAD-normalised text (see `normalize`). F1 follows SQuAD v2's no-answer rule:
//! when either side has no tokens, F1 is 1.0 if both have none and 0.0 otherwise.

use super::normalize::{squad_normalize, squad_tokens};
use std::collections::HashMap;

/// 1.0 when the normalised candidate equals the normalised reference, else 0.0.
pub fn exact_match(candidate: &str, reference: &str) -> f64 {
    if squad_normalize(candidate) == squad_normalize(reference) {
        1.0
    } else {
        0.0
    }
}

/// Harmonic mean of token precision and recall over normalised tokens (multiset overlap).
pub fn token_f1(candidate: &str, reference: &str) -> f64 {
    let candidate_tokens = squad_tokens(candidate);
    let reference_tokens = squad_tokens(reference);
    if candidate_tokens.is_empty() || reference_tokens.is_empty() {
        // SQuAD v2: an empty answer is a "no answer"; it scores 1 only against another one.
        return if candidate_tokens == reference_tokens {
            1.0
        } else {
            0.0
        };
    }
    let overlap = multiset_overlap(&candidate_tokens, &reference_tokens);
    if overlap == 0 {
        return 0.0;
    }
    let precision = overlap as f64 / candidate_tokens.len() as f64;
    let recall = overlap as f64 / reference_tokens.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// Size of the multiset intersection of two token lists.
pub(crate) fn multiset_overlap<T: AsRef<str>>(left: &[T], right: &[T]) -> usize {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for token in right {
        *counts.entry(token.as_ref()).or_default() += 1;
    }
    let mut overlap = 0;
    for token in left {
        if let Some(count) = counts.get_mut(token.as_ref()) {
            if *count > 0 {
                *count -= 1;
                overlap += 1;
            }
        }
    }
    overlap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_match_ignores_case_punctuation_and_articles() {
        assert_eq!(
            exact_match("The answer is: five seconds.", "answer is five seconds"),
            1.0
        );
        assert_eq!(exact_match("five seconds", "5 seconds"), 0.0);
    }

    #[test]
    fn empty_strings_follow_squad_v2_no_answer_rule() {
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(exact_match("", ""), 1.0);
        assert_eq!(token_f1("", "five"), 0.0);
        assert_eq!(token_f1("five", ""), 0.0);
        // Only articles and punctuation normalise to nothing, like an empty answer.
        assert_eq!(token_f1("The.", "a"), 1.0);
    }

    #[test]
    fn token_f1_counts_repeated_words_once_per_occurrence() {
        // candidate: 3 tokens, reference: 2, overlap 1 ("red" once in the reference).
        let f1 = token_f1("red red car", "red bike");
        let (p, r) = (1.0 / 3.0, 1.0 / 2.0);
        assert!((f1 - 2.0 * p * r / (p + r)).abs() < 1e-12);
        assert_eq!(token_f1("a b c", "x y z"), 0.0);
        assert_eq!(token_f1("blue car", "car blue"), 1.0);
    }
}
