//! Sentence boundaries, so chunks start and end on whole sentences.
//!
//! A rule-based splitter is enough for manuals: a sentence ends at `.`, `!` or `?` (plus any
//! closing quotes or brackets) followed by white space and a capital, a digit or an opening
//! quote or bracket, unless the word before the full stop is a known abbreviation, an initial,
//! or the full stop sits inside a number (`2.5`, which never has white space after it anyway).

/// Abbreviations that end with a full stop without ending the sentence (compared lowercased,
/// without the final full stop).
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "approx", "no", "nos", "fig", "figs", "vs", "mr", "mrs", "ms", "dr",
    "st", "ca", "cf", "min", "max", "incl", "excl", "ref", "vol", "p", "pp", "sec", "ch", "art",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "est",
    "dept", "inc", "ltd", "co", "corp", "resp", "rs",
];

/// Split `text` into sentences, each trimmed, none empty. Joined back with single spaces they
/// give `text` with its white space collapsed.
pub fn split_sentences(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut sentences = Vec::new();
    let mut start = 0;
    for i in 0..words.len() {
        let ends_here = match words.get(i + 1) {
            Some(next) => ends_sentence(words[i], next),
            None => true,
        };
        if ends_here {
            sentences.push(words[start..=i].join(" "));
            start = i + 1;
        }
    }
    sentences
}

fn ends_sentence(word: &str, next: &str) -> bool {
    let core = word.trim_end_matches(['"', '\'', ')', ']', '”', '’', '»']);
    let Some(last) = core.chars().last() else {
        return false;
    };
    if !matches!(last, '.' | '!' | '?' | '…') {
        return false;
    }
    let Some(first_next) = next.chars().next() else {
        return false;
    };
    let next_starts = first_next.is_uppercase()
        || first_next.is_ascii_digit()
        || matches!(first_next, '"' | '\'' | '(' | '[' | '“' | '‘' | '«' | '*' | '-' | '•');
    if !next_starts {
        return false;
    }
    if last == '.' {
        let stem = core
            .trim_end_matches('.')
            .trim_start_matches(['"', '\'', '(', '[', '“', '‘', '«']);
        let lower = stem.to_lowercase();
        if ABBREVIATIONS.contains(&lower.as_str()) {
            return false;
        }
        // An initial such as "J." in "J. Smith".
        let mut chars = stem.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c.is_uppercase() {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_terminal_punctuation() {
        let s = split_sentences("Open the valve. Press the button! Did it light? Yes.");
        assert_eq!(s, ["Open the valve.", "Press the button!", "Did it light?", "Yes."]);
    }

    #[test]
    fn keeps_abbreviations_numbers_and_lowercase_continuations() {
        let s = split_sentences(
            "Use a canister, e.g. Gas Pro 230. It weighs 2.5 kg. See Fig. 3 for details. \
             The model no. is on the base. J. Smith wrote it.",
        );
        assert_eq!(
            s,
            [
                "Use a canister, e.g. Gas Pro 230.",
                "It weighs 2.5 kg.",
                "See Fig. 3 for details.",
                "The model no. is on the base.",
                "J. Smith wrote it."
            ]
        );
        assert_eq!(split_sentences("Revenue was Rs. 4,800 crore. It rose."), ["Revenue was Rs. 4,800 crore.", "It rose."]);
    }

    #[test]
    fn closing_quotes_stay_with_their_sentence() {
        let s = split_sentences("The LED reads \"FULL.\" Unplug it then.");
        assert_eq!(s, ["The LED reads \"FULL.\"", "Unplug it then."]);
    }
}
