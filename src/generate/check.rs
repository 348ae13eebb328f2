//! The checks a generated pair must pass before it is kept: its quote is really in the
//! manual (verbatim, up to whitespace, case and typographic variants of quotes and dashes),
//! and its question is not a near copy of one the dataset already has.

use std::collections::BTreeSet;

/// A quote shorter than this proves nothing: "3 years" occurs in many manuals.
pub const MIN_QUOTE_WORDS: usize = 5;
/// Questions whose word sets overlap this much (Jaccard) are the same question.
pub const DUPLICATE_SIMILARITY: f64 = 0.8;

/// Text reduced for matching, with each character's byte offset in the original text.
struct Normalized {
    chars: Vec<char>,
    offsets: Vec<usize>,
}

/// Lowercase; curly quotes and dashes as their plain forms; every run of whitespace as one
/// space; leading and trailing whitespace gone.
fn normalize(text: &str) -> Normalized {
    let mut out = Normalized { chars: Vec::new(), offsets: Vec::new() };
    let mut pending_space = false;
    for (offset, c) in text.char_indices() {
        if c.is_whitespace() {
            pending_space = !out.chars.is_empty();
            continue;
        }
        if pending_space {
            out.chars.push(' ');
            out.offsets.push(offset);
            pending_space = false;
        }
        let plain = match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            '\u{00A0}' => ' ',
            _ => c,
        };
        for lower in plain.to_lowercase() {
            out.chars.push(lower);
            out.offsets.push(offset);
        }
    }
    out
}

/// Where `quote` occurs in `source` after normalisation, as the exact span of `source`
/// (so the kept context is the manual's own text). Punctuation at the quote's ends is
/// ignored: models drop or add a final full stop. None when it does not occur.
pub fn find_verbatim<'a>(quote: &str, source: &'a str) -> Option<&'a str> {
    let trimmed = quote.trim_matches(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':' | '"' | '\'' | '\u{201C}' | '\u{201D}'));
    let needle = normalize(trimmed).chars;
    if needle.is_empty() {
        return None;
    }
    let haystack = normalize(source);
    let start = haystack.chars.windows(needle.len()).position(|w| w == needle.as_slice())?;
    let last = start + needle.len() - 1;
    let begin = haystack.offsets[start];
    let last_offset = haystack.offsets[last];
    let end = last_offset + source[last_offset..].chars().next().map_or(0, char::len_utf8);
    Some(&source[begin..end])
}

fn word_set(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Jaccard similarity of two questions' word sets (1.0 for the same words in any order).
pub fn question_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (word_set(a), word_set(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANUAL: &str = "Hold RESET for 5 seconds\nuntil the LED blinks \u{2014} then release it.";

    #[test]
    fn a_quote_matches_across_case_whitespace_and_dashes() {
        assert_eq!(
            find_verbatim("hold reset for 5 seconds until the LED blinks - then release it", MANUAL),
            Some(MANUAL.trim_end_matches('.'))
        );
        assert_eq!(find_verbatim("  Hold RESET for 5 seconds.", MANUAL), Some("Hold RESET for 5 seconds"));
    }

    #[test]
    fn a_quote_that_is_not_in_the_manual_is_not_found() {
        assert_eq!(find_verbatim("Hold RESET for 10 seconds", MANUAL), None);
        assert_eq!(find_verbatim("...", MANUAL), None);
        assert_eq!(find_verbatim("", MANUAL), None);
    }

    #[test]
    fn near_identical_questions_are_similar() {
        assert_eq!(question_similarity("How long is the warranty?", "the warranty is how long"), 1.0);
        assert!(question_similarity("How long is the warranty?", "How do I clean the filter?") < 0.3);
    }
}
