//! The words that say which quantity a number is: content words near it in its sentence (they
//! stop at neighbouring numbers, which own the words beside them), the years its sentence
//! names, the noun a plain count counts, and whether it is a cell of a table row.

use super::mention::{Kind, Mention};
use super::scan::{at, before, closes_abbreviation, is_alpha, is_digit, is_space, word_before, word_end};
use super::units::{currency_sign, month, scale_word, spelled_number, unit_word};

/// Words too common to say which quantity a number is.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "these", "those", "was", "were", "are", "is", "be", "been",
    "being", "has", "had", "have", "its", "it", "their", "they", "them", "from", "into", "than", "then",
    "which", "who", "whom", "whose", "also", "about", "approximately", "around", "nearly", "roughly", "some",
    "over", "under", "more", "less", "fewer", "most", "least", "not", "but", "our", "your", "his", "her",
    "there", "here", "what", "when", "where", "while", "will", "would", "could", "should", "can", "may",
    "might", "must", "shall", "all", "any", "each", "both", "such", "only", "other", "per", "cent",
    "percent", "percentage", "point", "points", "basis", "times", "million", "billion", "trillion",
    "thousand", "dollar", "dollars", "euro", "euros", "total", "totaled", "totalled", "amount", "amounted",
    "approx", "estimated", "reached", "reaching", "compared", "versus", "respectively", "according",
    "reported", "report", "reports", "stated", "states", "says", "said", "shows", "show", "noted",
    "increased", "increase", "increases", "decreased", "decrease", "decreases", "rose", "fell", "grew",
    "declined", "decline", "declines", "growth", "higher", "lower", "up", "down", "gained", "dropped",
    "year", "years", "month", "months", "day", "days", "fiscal", "quarter", "ended", "ending", "end",
    "during", "since", "until", "before", "after", "between", "within", "through", "across", "at", "by",
    "of", "in", "on", "to", "as", "an", "a", "or", "nor", "so", "if", "out", "one", "two", "three",
    "does", "did", "do", "very", "much", "many", "same", "new", "including", "included", "includes",
    "approximately", "roughly", "almost", "just", "well", "further", "still", "yet", "again",
];

fn keyword(word: &str) -> Option<String> {
    let lower = word.to_lowercase().replace('’', "'");
    let lower = lower.strip_suffix("'s").unwrap_or(&lower).trim_matches('\'').to_string();
    if lower.chars().count() < 3 || STOPWORDS.contains(&lower.as_str()) || month(&lower).is_some() {
        return None;
    }
    if scale_word(&lower).is_some() || unit_word(&lower).is_some() || spelled_number(&lower).is_some() {
        return None;
    }
    let singular = if let Some(stem) = lower.strip_suffix("ies").filter(|s| s.len() >= 2) {
        format!("{stem}y")
    } else if lower.ends_with('s') && !lower.ends_with("ss") && lower.len() > 3 {
        lower[..lower.len() - 1].to_string()
    } else {
        lower
    };
    Some(singular)
}

/// Sentence number of each char: sentences end at `.`, `!`, `?`, `;` before a space, and at
/// line breaks (list items and table rows are their own sentences). The period of an
/// abbreviation written before a figure (`Rs. 4,800 crore`, `approx. $4 billion`, `vs. 12%`)
/// ends nothing: the figure would lose every key word of its sentence, and with them any
/// chance of being found wrong.
fn sentences(chars: &[char]) -> Vec<usize> {
    let mut ids = Vec::with_capacity(chars.len());
    let mut id = 0;
    for (k, &c) in chars.iter().enumerate() {
        ids.push(id);
        let next_space = at(chars, k + 1).is_none_or(char::is_whitespace);
        if c == '\n' || (matches!(c, '.' | '!' | '?' | ';') && next_space && !(c == '.' && abbreviation_before_figure(chars, k))) {
            id += 1;
        }
    }
    ids
}

/// The period at `k` closes an abbreviation that stands before figures and a figure follows (a
/// digit, a currency sign or a sign, after spaces).
fn abbreviation_before_figure(chars: &[char], k: usize) -> bool {
    if !closes_abbreviation(chars, k) {
        return false;
    }
    let mut next = k + 1;
    while at(chars, next).is_some_and(|c| c == ' ' || c == '\u{a0}') {
        next += 1;
    }
    at(chars, next).is_some_and(|c| c.is_ascii_digit() || currency_sign(c).is_some() || matches!(c, '-' | '−' | '+'))
}

/// Fills in each mention's key words (up to 6 content words before it and 3 after, in its
/// sentence, outside every mention) and the years named in its sentence.
pub(super) fn add_context(chars: &[char], mentions: &mut [Mention]) {
    let sentence_of = sentences(chars);
    let mut inside = vec![false; chars.len()];
    for m in mentions.iter() {
        inside[m.start..m.end.min(chars.len())].fill(true);
    }
    // Words: (start, end, keyword).
    let mut words = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        if chars[k].is_alphabetic() && (k == 0 || !chars[k - 1].is_alphanumeric()) {
            let e = word_end(chars, k);
            if !inside[k] {
                let text: String = chars[k..e].iter().collect();
                if let Some(word) = keyword(&text) {
                    words.push((k, e, word));
                }
            }
            k = e.max(k + 1);
        } else {
            k += 1;
        }
    }
    // Years anywhere in a sentence, identifiers included (`FY2023` names 2023).
    let mut years: Vec<(usize, i32, usize, usize)> = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        if chars[k].is_ascii_digit() {
            let mut e = k;
            while is_digit(at(chars, e)) {
                e += 1;
            }
            let glued_number = before(chars, k, 1) == Some(',') && is_digit(before(chars, k, 2))
                || at(chars, e) == Some(',') && is_digit(at(chars, e + 1))
                || at(chars, e) == Some('.') && is_digit(at(chars, e + 1));
            // `down 120 basis points from 2022`: a year compared with does not date the figure.
            let compared_with = word_before(chars, k)
                .is_some_and(|w| matches!(w.as_str(), "from" | "since" | "than" | "versus" | "vs" | "over" | "prior"));
            if e - k == 4 && !glued_number && !compared_with {
                let y: i32 = chars[k..e].iter().collect::<String>().parse().unwrap_or(0);
                if (1900..=2100).contains(&y) {
                    years.push((sentence_of[k], y, k, e));
                }
            }
            k = e;
        } else {
            k += 1;
        }
    }
    let spans: Vec<(usize, usize)> = mentions.iter().map(|m| (m.start, m.end)).collect();
    let dates: Vec<bool> = mentions.iter().map(|m| matches!(m.kind, Kind::Year | Kind::Date { .. })).collect();
    // Runs of numbers with nothing but spaces and punctuation between them: table rows.
    let no_word_between = |a: usize, b: usize| {
        spans[a].1 <= spans[b].0 && !chars[spans[a].1..spans[b].0].iter().any(|c| c.is_alphabetic() || *c == '\n')
    };
    let mut tabular = vec![false; spans.len()];
    let mut run_start = 0;
    for i in 1..=spans.len() {
        if i == spans.len() || !no_word_between(i - 1, i) {
            if i - run_start >= 3 {
                tabular[run_start..i].fill(true);
            }
            run_start = i;
        }
    }
    for (index, m) in mentions.iter_mut().enumerate() {
        let Some(&sentence) = sentence_of.get(m.start) else { continue };
        let in_sentence = |w: &&(usize, usize, String)| sentence_of[w.0] == sentence;
        // Words stop at the neighbouring numbers, which own the words beside them (`gross
        // margin was 42% and the tax rate was 21%`), except where none are left: in
        // `revenues rose 12% to $4.2 billion` the amount shares the percentage's subject.
        let mut left_end = m.start;
        let mut left: Vec<&(usize, usize, String)> = Vec::new();
        for (&(s, e), &dated) in spans[..index].iter().zip(&dates[..index]).rev() {
            // A year or date names when, not what: the words before it still describe `m`
            // (`the Weapons Activities FY 2025 Budget Request is $19.8 billion`).
            if e > left_end || dated {
                continue;
            }
            left = words.iter().filter(in_sentence).filter(|w| w.0 >= e && w.1 <= left_end).collect();
            if !left.is_empty() {
                break;
            }
            left_end = s;
        }
        if left.is_empty() {
            left = words.iter().filter(in_sentence).filter(|w| w.1 <= left_end).collect();
        }
        let right_end = spans[index + 1..].iter().map(|&(s, _)| s).find(|&s| s >= m.end).unwrap_or(usize::MAX);
        let right = words.iter().filter(in_sentence).filter(|w| w.0 >= m.end && w.1 <= right_end).take(3);
        let mut keywords: Vec<String> = left.iter().rev().take(6).copied().chain(right).map(|w| w.2.clone()).collect();
        keywords.sort();
        keywords.dedup();
        m.keywords = keywords;
        let mut named: Vec<i32> = years
            .iter()
            .filter(|(s, _, ys, ye)| *s == sentence && (*ye <= m.start || *ys >= m.end))
            .map(|(_, y, _, _)| *y)
            .collect();
        named.sort_unstable();
        named.dedup();
        m.years = named;
        m.noun = noun_after(chars, m.end);
        m.tabular = tabular[index];
    }
}

/// The word after one space at `k`, lowercased and singular, unless it is a common word.
fn noun_after(chars: &[char], k: usize) -> Option<String> {
    if !is_space(at(chars, k)) || !is_alpha(at(chars, k + 1)) {
        return None;
    }
    let end = word_end(chars, k + 1);
    let lower = chars[k + 1..end].iter().collect::<String>().to_lowercase();
    if STOPWORDS.contains(&lower.as_str()) {
        return None;
    }
    Some(match lower.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_string(),
        _ => lower,
    })
}
