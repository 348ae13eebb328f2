//! Reading characters and words around a position of a text held as chars: the small steps
//! the number parser, the date reader and the context reader share. Every step is bounds-safe:
//! past either end reads as nothing.

pub(super) fn at(chars: &[char], k: usize) -> Option<char> {
    chars.get(k).copied()
}

pub(super) fn before(chars: &[char], k: usize, back: usize) -> Option<char> {
    k.checked_sub(back).and_then(|i| at(chars, i))
}

pub(super) fn is_digit(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_digit())
}

pub(super) fn is_alpha(c: Option<char>) -> bool {
    c.is_some_and(char::is_alphabetic)
}

pub(super) fn is_space(c: Option<char>) -> bool {
    matches!(c, Some(' ' | '\u{a0}' | '\u{202f}' | '\t'))
}

/// End of a word: letters, with inner hyphens and apostrophes (`twenty-four`, `company's`).
pub(super) fn word_end(chars: &[char], start: usize) -> usize {
    let mut k = start;
    while k < chars.len() {
        let c = chars[k];
        if c.is_alphabetic() || (matches!(c, '-' | '\'' | '’') && k > start && is_alpha(at(chars, k + 1))) {
            k += 1;
        } else {
            break;
        }
    }
    k
}

/// End of an identifier-like token (`10-K`, `1.2.3`, `COVID-19`, `10:30`) from `start`.
pub(super) fn token_end(chars: &[char], start: usize) -> usize {
    let mut k = start;
    while k < chars.len() {
        let c = chars[k];
        if c.is_alphanumeric() || c == '_' {
            k += 1;
        } else if matches!(c, '.' | ',' | '-' | '/' | ':' | '‑') && at(chars, k + 1).is_some_and(char::is_alphanumeric) {
            k += 1;
        } else {
            break;
        }
    }
    k
}

/// The word that ends right before `k` (skipping spaces and one closing `.`), lowercased.
pub(super) fn word_before(chars: &[char], k: usize) -> Option<String> {
    let mut end = k;
    while end > 0 && is_space(at(chars, end - 1)) {
        end -= 1;
    }
    if end > 0 && at(chars, end - 1) == Some('.') {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_alpha(at(chars, start - 1)) {
        start -= 1;
    }
    (start < end).then(|| chars[start..end].iter().collect::<String>().to_lowercase())
}

/// Words shortened with a period that stand right before figures (`Rs. 4,800`, `approx. $4
/// billion`, `est. 5%`, `vs. 12%`): their period ends no sentence.
const ABBREVIATIONS_BEFORE_FIGURES: &[&str] = &["rs", "approx", "est", "vs"];

/// The period at `k` closes one of [`ABBREVIATIONS_BEFORE_FIGURES`].
pub(super) fn closes_abbreviation(chars: &[char], k: usize) -> bool {
    // `word_before` past the period reads the word it closes.
    at(chars, k) == Some('.') && word_before(chars, k + 1).is_some_and(|word| ABBREVIATIONS_BEFORE_FIGURES.contains(&word.as_str()))
}

/// Up to `count` words before `k` in the same clause (stops at digits and sentence ends, not at
/// the period of `approx.`), nearest first, lowercased.
pub(super) fn words_before(chars: &[char], k: usize, count: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut end = k;
    while words.len() < count && end > 0 {
        let c = chars[end - 1];
        if c == '.' && closes_abbreviation(chars, end - 1) {
            end -= 1;
        } else if c.is_alphabetic() {
            let mut start = end;
            while start > 0 && (is_alpha(at(chars, start - 1)) || at(chars, start - 1) == Some('-')) {
                start -= 1;
            }
            words.push(chars[start..end].iter().collect::<String>().to_lowercase());
            end = start;
        } else if c.is_ascii_digit() || matches!(c, '.' | '!' | '?' | ';' | '\n' | ':') {
            break;
        } else {
            end -= 1;
        }
    }
    words
}
