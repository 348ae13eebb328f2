//! Sentence BLEU, matching `sacrebleu.sentence_bleu(candidate, [reference]).score / 100` with
//! its defaults: the `13a` tokenizer (mteval-v13a), case-sensitive, n-grams up to 4,
//! `exp` smoothing (each order with no match gets 1 / (2^k · total)) and effective order
//! (orders for which the candidate has no n-grams at all are left out of the mean).

use std::collections::HashMap;

use super::normalize::{is_python_space, split_python_whitespace};

const MAX_ORDER: usize = 4;

/// Tokens as sacrebleu's `Tokenizer13a` produces them (after its `rstrip()` of the segment).
pub fn tokenize_13a(text: &str) -> Vec<String> {
    let mut line = text.trim_end_matches(is_python_space).to_owned();
    line = line
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        // Sequential, as in mteval: "&amp;lt;" becomes "<".
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let chars: Vec<char> = format!(" {line} ").chars().collect();
    let chars = space_out_symbols(&chars);
    let chars = substitute_pairs(
        &chars,
        |a, b| !a.is_ascii_digit() && is_period_or_comma(b),
        Spacing::After,
    );
    let chars = substitute_pairs(
        &chars,
        |a, b| is_period_or_comma(a) && !b.is_ascii_digit(),
        Spacing::Before,
    );
    let chars = substitute_pairs(
        &chars,
        |a, b| a.is_ascii_digit() && b == '-',
        Spacing::After,
    );
    let spaced: String = chars.into_iter().collect();
    split_python_whitespace(&spaced)
        .map(str::to_owned)
        .collect()
}

fn is_period_or_comma(c: char) -> bool {
    c == '.' || c == ','
}

/// First rule of 13a: ASCII punctuation and symbols except `'`, `,`, `-` and `.` get spaces
/// on both sides (the class `[{-~[-` -&(-+:-@/]`).
fn space_out_symbols(chars: &[char]) -> Vec<char> {
    let is_symbol =
        |c: char| matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/');
    let mut out = Vec::with_capacity(chars.len() * 2);
    for &c in chars {
        if is_symbol(c) {
            out.extend([' ', c, ' ']);
        } else {
            out.push(c);
        }
    }
    out
}

/// Where a two-character rule inserts spaces: `\1 \2 ` (after) or ` \1 \2` (before).
enum Spacing {
    After,
    Before,
}

/// Applies a two-character regex rule the way `re.sub` does: scanning left to right, matches
/// do not overlap, so a character consumed by one match cannot start the next.
fn substitute_pairs(
    chars: &[char],
    rule: impl Fn(char, char) -> bool,
    spacing: Spacing,
) -> Vec<char> {
    let mut out = Vec::with_capacity(chars.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        match chars.get(i + 1) {
            Some(&next) if rule(chars[i], next) => {
                match spacing {
                    Spacing::After => out.extend([chars[i], ' ', next, ' ']),
                    Spacing::Before => out.extend([' ', chars[i], ' ', next]),
                }
                i += 2;
            }
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// Counts of every n-gram of order 1..=MAX_ORDER.
fn ngram_counts(tokens: &[String]) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for order in 1..=MAX_ORDER {
        for ngram in tokens.windows(order) {
            *counts.entry(ngram).or_insert(0) += 1;
        }
    }
    counts
}

/// Sentence BLEU in [0, 1].
pub fn bleu(candidate: &str, reference: &str) -> f64 {
    let candidate_tokens = tokenize_13a(candidate);
    let reference_tokens = tokenize_13a(reference);
    let candidate_len = candidate_tokens.len();
    let reference_len = reference_tokens.len();

    let reference_counts = ngram_counts(&reference_tokens);
    let mut matched = [0usize; MAX_ORDER];
    let mut total = [0usize; MAX_ORDER];
    for (ngram, count) in ngram_counts(&candidate_tokens) {
        let order = ngram.len() - 1;
        total[order] += count;
        matched[order] += count.min(reference_counts.get(ngram).copied().unwrap_or(0));
    }
    if matched.iter().all(|&m| m == 0) {
        return 0.0;
    }

    let brevity_penalty = if candidate_len < reference_len {
        // candidate_len > 0 here: some n-gram matched.
        (1.0 - reference_len as f64 / candidate_len as f64).exp()
    } else {
        1.0
    };

    let mut log_precision_sum = 0.0;
    let mut effective_order = 0;
    let mut smoothing = 1.0;
    for order in 0..MAX_ORDER {
        if total[order] == 0 {
            break;
        }
        effective_order = order + 1;
        let precision = if matched[order] == 0 {
            smoothing *= 2.0;
            1.0 / (smoothing * total[order] as f64)
        } else {
            matched[order] as f64 / total[order] as f64
        };
        log_precision_sum += precision.ln();
    }
    brevity_penalty * (log_precision_sum / effective_order as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_13a_splits_punctuation_but_keeps_decimals() {
        assert_eq!(
            tokenize_13a("Torque: 3.5 N·m, max."),
            ["Torque", ":", "3.5", "N·m", ",", "max", "."]
        );
        assert_eq!(
            tokenize_13a("It's 10-20 &amp; more"),
            ["It's", "10", "-", "20", "&", "more"]
        );
        assert!(tokenize_13a("   ").is_empty());
    }

    #[test]
    fn identical_is_one_disjoint_and_empty_are_zero() {
        assert!(
            (bleu(
                "Hold the reset button for five seconds.",
                "Hold the reset button for five seconds."
            ) - 1.0)
                .abs()
                < 1e-12
        );
        assert_eq!(
            bleu("completely different words", "nothing shared here"),
            0.0
        );
        assert_eq!(bleu("", "reference"), 0.0);
        assert_eq!(bleu("candidate", ""), 0.0);
    }

    #[test]
    fn short_candidates_use_effective_order() {
        // One token, matched: only unigrams count, brevity penalty exp(1 - 2/1).
        let score = bleu("five", "five seconds");
        assert!((score - (1.0f64 - 2.0).exp()).abs() < 1e-12);
    }
}
