//! ROUGE-1 and ROUGE-L F-measures, matching Python `rouge-score`'s `RougeScorer` defaults.
//!
//! Its default tokenizer lowercases, turns every character outside `[a-z0-9]` into a space and
//! splits; no stemming. So accented letters, CJK and emoji vanish from the token stream, and
//! a text with no ASCII letters or digits has no tokens (score 0.0).

use super::lexical::multiset_overlap;

/// Tokens as `rouge_score.tokenize.tokenize(text, stemmer=None)` produces them.
pub fn rouge_tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// ROUGE-1 F-measure: unigram overlap between candidate and reference.
pub fn rouge_1(candidate: &str, reference: &str) -> f64 {
    let candidate_tokens = rouge_tokens(candidate);
    let reference_tokens = rouge_tokens(reference);
    let overlap = multiset_overlap(&reference_tokens, &candidate_tokens) as f64;
    // rouge-score divides by max(count, 1), so an empty side gives 0 rather than 0/0.
    let precision = overlap / candidate_tokens.len().max(1) as f64;
    let recall = overlap / reference_tokens.len().max(1) as f64;
    f_measure(precision, recall)
}

/// ROUGE-L F-measure: longest common subsequence of tokens.
pub fn rouge_l(candidate: &str, reference: &str) -> f64 {
    let candidate_tokens = rouge_tokens(candidate);
    let reference_tokens = rouge_tokens(reference);
    if candidate_tokens.is_empty() || reference_tokens.is_empty() {
        return 0.0;
    }
    let lcs = longest_common_subsequence(&reference_tokens, &candidate_tokens) as f64;
    let precision = lcs / candidate_tokens.len() as f64;
    let recall = lcs / reference_tokens.len() as f64;
    f_measure(precision, recall)
}

fn f_measure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// Length of the LCS, with one row of the dynamic-programming table kept at a time.
fn longest_common_subsequence(left: &[String], right: &[String]) -> usize {
    let mut previous = vec![0usize; right.len() + 1];
    let mut current = vec![0usize; right.len() + 1];
    for left_token in left {
        for (j, right_token) in right.iter().enumerate() {
            current[j + 1] = if left_token == right_token {
                previous[j] + 1
            } else {
                previous[j + 1].max(current[j])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[right.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_keeps_only_ascii_letters_and_digits() {
        assert_eq!(
            rouge_tokens("Café au-lait, 3.5 N·m!"),
            ["caf", "au", "lait", "3", "5", "n", "m"]
        );
        assert!(rouge_tokens("日本語 🙂").is_empty());
    }

    #[test]
    fn empty_inputs_score_zero() {
        assert_eq!(rouge_1("", ""), 0.0);
        assert_eq!(rouge_l("", ""), 0.0);
        assert_eq!(rouge_l("text", ""), 0.0);
    }

    #[test]
    fn rouge_l_uses_order_rouge_1_does_not() {
        assert_eq!(rouge_1("b a", "a b"), 1.0);
        assert!((rouge_l("b a", "a b") - 0.5).abs() < 1e-12);
        assert_eq!(rouge_l("the cat sat", "the cat sat"), 1.0);
    }
}
