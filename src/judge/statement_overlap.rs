//! `statement_overlap`: a claim-level F1 made without a model, for a jury to take beside the
//! judges. The answer and the reference are split into statements as the statement judge splits
//! them (`statement_split`); each answer statement is scored by the largest share of its content
//! words that one reference statement states (precision: is it supported?), and each reference
//! statement likewise against the answer's statements (recall: was it given?). The score is the
//! F1 of the two means. Whole-text overlap (ROUGE-L, token F1) lets a long answer's many
//! unsupported sentences hide behind one copied paragraph; per statement, each sentence counts
//! once, as each claim does in a claim-level reference judge. Against one statement, not the
//! whole text, because a figure and what it measures must be said together: "$4.2 billion" and
//! "revenue" in two different sentences of the reference support no "revenue was $4.2 billion".
//!
//! Content words: runs of letters and digits, lowercased, a number's thousands commas dropped
//! and its decimal point kept (`4,200.5` is `4200.5`), English function words left out.

use std::collections::HashSet;

use super::statement_split::split_statements;

/// Function words that carry no claim (articles, auxiliaries, pronouns, prepositions).
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "and", "or", "for", "on", "at", "by", "with", "from", "as", "is", "are", "was", "were", "be",
    "been", "being", "this", "that", "these", "those", "it", "its", "which", "who", "whom", "what", "when", "where", "why", "how",
    "than", "then", "there", "their", "they", "them", "he", "she", "his", "her", "we", "our", "you", "your", "i", "not", "no", "but",
    "if", "so", "do", "does", "did", "has", "have", "had", "will", "would", "can", "could", "should", "may", "might", "also", "such",
    "into", "over", "under", "about", "more", "most", "other", "some", "any", "each", "per", "all", "both",
];

/// The F1 of per-statement content-word support, answer against reference and back; 0 when
/// either side has no content word.
pub fn statement_overlap(answer: &str, reference: &str) -> f64 {
    let (answer, reference) = (statement_words(answer), statement_words(reference));
    match (mean_support(&answer, &reference), mean_support(&reference, &answer)) {
        (Some(p), Some(r)) if p + r > 0.0 => 2.0 * p * r / (p + r),
        _ => 0.0,
    }
}

/// The content words of each statement of `text` that has any; a text too short to split is one
/// statement.
fn statement_words(text: &str) -> Vec<HashSet<String>> {
    let mut statements = split_statements(text);
    if statements.is_empty() {
        statements.push(text.to_string());
    }
    statements.iter().map(|s| content_words(s)).filter(|words| !words.is_empty()).collect()
}

/// The mean, over `statements`, of the largest share of a statement's content words that one
/// of `other` holds; None when there is no statement.
fn mean_support(statements: &[HashSet<String>], other: &[HashSet<String>]) -> Option<f64> {
    let share = |words: &HashSet<String>| {
        other.iter().map(|o| words.iter().filter(|w| o.contains(*w)).count()).max().unwrap_or(0) as f64 / words.len() as f64
    };
    (!statements.is_empty()).then(|| statements.iter().map(share).sum::<f64>() / statements.len() as f64)
}

/// The distinct content words of `text` (see the module's rule).
fn content_words(text: &str) -> HashSet<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = HashSet::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let between_digits = |c: char| {
            matches!(c, ',' | '.')
                && i > 0
                && chars[i - 1].is_ascii_digit()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit())
        };
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if between_digits(c) {
            if c == '.' {
                word.push('.');
            }
        } else if !word.is_empty() {
            keep(&mut words, std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        keep(&mut words, word);
    }
    words
}

fn keep(words: &mut HashSet<String>, word: String) {
    if !FUNCTION_WORDS.contains(&word.as_str()) {
        words.insert(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_keep_numbers_whole_and_leave_function_words_out() {
        let words = content_words("The revenue of $4,200.5 million rose 4.2% in FY2023.");
        let mut sorted: Vec<&str> = words.iter().map(String::as_str).collect();
        sorted.sort();
        assert_eq!(sorted, vec!["4.2", "4200.5", "fy2023", "million", "revenue", "rose"]);
    }

    #[test]
    fn each_statement_counts_once_whatever_its_length() {
        let reference = "Revenue rose 4% to $4.2 billion. Operating margin was 15.3%.";
        assert!((statement_overlap(reference, reference) - 1.0).abs() < 1e-12);
        // One copied sentence and two unsupported ones: precision 1/3 of the way, recall 1/2.
        // ("Operating margin" is in neither answer statement; "was" is a function word.)
        let padded = "Revenue rose 4% to $4.2 billion. Dividends doubled last spring. Staff numbers fell sharply overall.";
        let p = (1.0 + 0.0 + 0.0) / 3.0;
        let r = (1.0 + 0.0) / 2.0;
        assert!((statement_overlap(padded, reference) - 2.0 * p * r / (p + r)).abs() < 1e-12);
        assert_eq!(statement_overlap("", reference), 0.0);
        assert_eq!(statement_overlap("— …", reference), 0.0);
        assert!(statement_overlap("4.2", "Revenue was 4.2 billion") > 0.0, "a bare number is one statement");
        // A figure and its subject in two reference statements support no statement that joins them.
        let apart = "Revenue grew strongly. Costs were 4.2 billion.";
        let joined = "Revenue were 4.2 billion.";
        assert!(statement_overlap(joined, apart) < statement_overlap(joined, "Revenue were 4.2 billion, costs grew."));
    }
}
