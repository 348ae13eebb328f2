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

/// Length of the LCS, bit-parallel (Crochemore et al., "A fast and practical bit-vector
/// algorithm for the longest common subsequence problem", 2001): one bit per token of `right`,
/// updated for each token of `left` with a masked addition, so the work is n·m/64 word
/// operations and the memory O(m). The row-by-row table it replaces took 15.6 s for one pair of
/// 100 KB texts; the length is the same exact LCS.
fn longest_common_subsequence(left: &[String], right: &[String]) -> usize {
    if left.is_empty() || right.is_empty() {
        return 0;
    }
    // Where each distinct token occurs in `right` (positions, not a bit mask per token: with
    // many distinct tokens masks would take distinct × m bits).
    let mut positions: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (j, token) in right.iter().enumerate() {
        positions.entry(token.as_str()).or_default().push(j);
    }
    let words = right.len().div_ceil(64);
    // V: a 1 bit where `right`'s token is not yet matched; the LCS is the number of 0 bits.
    let mut v = vec![u64::MAX; words];
    let mut u = vec![0u64; words];
    for token in left {
        let Some(occurs) = positions.get(token.as_str()) else { continue };
        u.iter_mut().for_each(|w| *w = 0);
        for &j in occurs {
            u[j / 64] |= v[j / 64] & (1u64 << (j % 64));
        }
        // V = (V + U) | (V - U); with U a subset of V, V - U is V & !U.
        let mut carry = false;
        for (vw, uw) in v.iter_mut().zip(&u) {
            let (sum, c1) = vw.overflowing_add(*uw);
            let (sum, c2) = sum.overflowing_add(carry as u64);
            carry = c1 || c2;
            *vw = sum | (*vw & !*uw);
        }
    }
    let mut ones = 0usize;
    for (i, word) in v.iter().enumerate() {
        let bits = if i + 1 == words && right.len() % 64 != 0 { right.len() % 64 } else { 64 };
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        ones += (word & mask).count_ones() as usize;
    }
    right.len() - ones
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

    /// The bit-parallel LCS against the plain dynamic-programming table, on seeded random
    /// token strings around and across the 64-token word boundaries.
    #[test]
    fn bit_parallel_lcs_equals_the_table() {
        fn table(left: &[String], right: &[String]) -> usize {
            let mut previous = vec![0usize; right.len() + 1];
            for l in left {
                let mut current = vec![0usize; right.len() + 1];
                for (j, r) in right.iter().enumerate() {
                    current[j + 1] = if l == r { previous[j] + 1 } else { previous[j + 1].max(current[j]) };
                }
                previous = current;
            }
            previous[right.len()]
        }
        let mut state = 12345u64;
        let mut next = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..300 {
            let alphabet = 1 + next(6);
            let a: Vec<String> = (0..next(200)).map(|_| next(alphabet).to_string()).collect();
            let b: Vec<String> = (0..next(200)).map(|_| next(alphabet).to_string()).collect();
            assert_eq!(longest_common_subsequence(&a, &b), table(&a, &b), "{a:?} {b:?}");
        }
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
