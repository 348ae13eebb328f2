//! Text normalisation shared by the lexical metrics.
//!
//! The reference implementations (the SQuAD v2 evaluation script, `rouge-score`, `sacrebleu`)
//! are Python, so "whitespace" and "word character" here mean what they mean to Python's
//! `str.split()` and `re`'s `\w`; otherwise scores drift from the published numbers on
//! unusual characters.

/// Python's `str.isspace()`: Unicode `White_Space` plus the four ASCII information separators
/// (U+001C..U+001F), which Python also treats as whitespace.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()` with no argument: splits on runs of whitespace, drops empty pieces.
pub fn split_python_whitespace(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_python_space)
        .filter(|piece| !piece.is_empty())
}

/// Number of words of `text` as `str.split()` counts them: the length of an answer.
pub fn word_count(text: &str) -> usize {
    split_python_whitespace(text).count()
}

/// Python's `re` `\w` on `str` is letters, numbers and the underscore. Rust's
/// `is_alphanumeric` agrees on letters and numbers except for a few combining marks and
/// symbol letters (Unicode `Other_Alphabetic`, e.g. Ⓐ, Devanagari vowel signs) that Rust counts
/// and Python does not; they only matter right next to an article.
pub fn is_python_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Python's `string.punctuation`: ASCII punctuation only (so `·`, `–`, `’` survive).
fn is_ascii_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
}

/// SQuAD answer normalisation: lowercase, drop ASCII punctuation, remove the articles
/// a / an / the as whole words, collapse whitespace to single spaces.
pub fn squad_normalize(text: &str) -> String {
    let lowered = text.to_lowercase();
    let without_punctuation: String = lowered
        .chars()
        .filter(|c| !is_ascii_punctuation(*c))
        .collect();
    let without_articles = remove_articles(&without_punctuation);
    split_python_whitespace(&without_articles)
        .collect::<Vec<_>>()
        .join(" ")
}

/// SQuAD tokens: the words of the normalised text; an empty text has none.
pub fn squad_tokens(text: &str) -> Vec<String> {
    squad_normalize(text)
        .split(' ')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Replaces each whole-word `a`, `an` or `the` with a space, as `re.sub(r"\b(a|an|the)\b", " ")`
/// does: word boundaries are judged on the input, matches do not overlap.
fn remove_articles(text: &str) -> String {
    const ARTICLES: [&str; 3] = ["a", "an", "the"];
    let chars: Vec<char> = text.chars().collect();
    let is_word_at = |i: usize| chars.get(i).is_some_and(|c| is_python_word_char(*c));
    let boundary_at = |i: usize| {
        let before = i > 0 && is_word_at(i - 1);
        before != is_word_at(i)
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        // Alternatives are tried in order, like the regex alternation `a|an|the`.
        let article_len = if boundary_at(i) {
            ARTICLES
                .iter()
                .map(|a| a.chars().collect::<Vec<char>>())
                .find_map(|article| {
                    let end = i + article.len();
                    let matches = chars.get(i..end) == Some(article.as_slice()) && boundary_at(end);
                    matches.then_some(article.len())
                })
        } else {
            None
        };
        match article_len {
            Some(len) => {
                out.push(' ');
                i += len;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squad_normalize_lowercases_strips_punctuation_and_articles() {
        assert_eq!(squad_normalize("The  Quick, brown fox!"), "quick brown fox");
        assert_eq!(squad_normalize("An apple a day"), "apple day");
        assert_eq!(squad_normalize("theatre anthem"), "theatre anthem");
        assert_eq!(squad_normalize("3.5 N·m"), "35 n·m");
        assert_eq!(squad_normalize(""), "");
        assert_eq!(squad_normalize("  \t\n "), "");
    }

    #[test]
    fn articles_next_to_non_ascii_letters_are_not_words() {
        // `é` is a word character, so "theé" is one word and keeps its "the".
        assert_eq!(squad_normalize("theé the é"), "theé é");
    }

    #[test]
    fn python_whitespace_includes_information_separators() {
        let words: Vec<&str> = split_python_whitespace("a\u{1c}b\u{a0}c").collect();
        assert_eq!(words, ["a", "b", "c"]);
    }
}
