//! Refusal detection: does an answer decline to answer?
//!
//! A fixed list of phrases, matched as whole words on lowercased text with curly apostrophes
//! straightened. The list is conservative on purpose: a phrase must say that the speaker
//! cannot answer, or that the manuals / context do not hold the answer. Phrases that also occur
//! in ordinary answers ("the device cannot find the network", "not covered by the warranty")
//! are left out, so an answer that merely contains a negation is not taken for a refusal.

use std::sync::OnceLock;

/// First-person inability: combined with `INABILITY_VERBS` ("i can't" + "answer").
const FIRST_PERSON_INABILITY: &[&str] = &[
    "i cannot",
    "i can't",
    "i can not",
    "i am unable to",
    "i'm unable to",
    "i am not able to",
    "i'm not able to",
    "i could not",
    "i couldn't",
    "i was unable to",
    "i was not able to",
    "i wasn't able to",
    "i won't be able to",
    "i will not be able to",
    "we cannot",
    "we can't",
    "we are unable to",
    "we're unable to",
];
const INABILITY_VERBS: &[&str] = &[
    "answer",
    "find",
    "locate",
    "help with",
    "provide",
    "determine",
    "tell",
    "say",
    "confirm",
];

/// What the answer could have come from: combined with `SOURCE_NEGATIONS` and `SOURCE_VERBS`
/// ("the manual" + "does not" + "mention") and with `ABSENCE_PHRASES` ("not covered in" + ...).
const SOURCES: &[&str] = &[
    "the manual",
    "the manuals",
    "the provided manual",
    "the provided manuals",
    "the context",
    "the provided context",
    "the documentation",
    "the provided documentation",
    "the document",
    "the documents",
    "the provided documents",
    "the sources",
    "the provided sources",
    "the provided information",
    "the information provided",
    "the product manual",
    "the product manuals",
    "the user manual",
    "the text",
    "the provided text",
];
const SOURCE_NEGATIONS: &[&str] = &[
    "does not", "doesn't", "do not", "don't", "did not", "didn't",
];
const SOURCE_VERBS: &[&str] = &[
    "mention", "cover", "say", "contain", "include", "provide", "specify", "describe", "address",
    "state", "discuss", "explain", "have",
];
const ABSENCE_PHRASES: &[&str] = &[
    "not covered in",
    "not mentioned in",
    "not addressed in",
    "not included in",
    "not specified in",
    "not described in",
    "not found in",
    "not available in",
    "not documented in",
    "not stated in",
    "not discussed in",
    "not provided in",
    "outside the scope of",
    "beyond the scope of",
];

/// Phrases that are refusals on their own.
const STANDALONE_PHRASES: &[&str] = &[
    "i don't know",
    "i do not know",
    "i'm not sure how to answer",
    "i have no information",
    "i don't have information",
    "i do not have information",
    "i don't have any information",
    "i do not have any information",
    "i don't have enough information",
    "i do not have enough information",
    "there is no information",
    "there's no information",
    "there is not enough information",
    "there isn't enough information",
    "not enough information to answer",
    "insufficient information to answer",
    "no information is available",
    "no information is provided",
    "no information was provided",
    "cannot be answered",
    "can't be answered",
    "can not be answered",
    "unable to answer",
    "cannot find any information",
    "can't find any information",
    "could not find any information",
    "couldn't find any information",
    "out of scope",
    "no relevant information",
];

fn refusal_phrases() -> &'static [String] {
    static PHRASES: OnceLock<Vec<String>> = OnceLock::new();
    PHRASES.get_or_init(|| {
        let mut phrases: Vec<String> = STANDALONE_PHRASES.iter().map(|p| p.to_string()).collect();
        for subject in FIRST_PERSON_INABILITY {
            for verb in INABILITY_VERBS {
                phrases.push(format!("{subject} {verb}"));
            }
        }
        for source in SOURCES {
            for negation in SOURCE_NEGATIONS {
                for verb in SOURCE_VERBS {
                    phrases.push(format!("{source} {negation} {verb}"));
                }
            }
            for absence in ABSENCE_PHRASES {
                phrases.push(format!("{absence} {source}"));
            }
        }
        phrases
    })
}

/// Lowercase, straighten apostrophes, collapse whitespace: so "I’m  unable" reads "i'm unable".
fn prepare(text: &str) -> String {
    let lowered = text
        .to_lowercase()
        .replace(['\u{2019}', '\u{2018}', '\u{02bc}'], "'");
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `phrase` occurs in `text` with no letter or digit directly before or after it.
fn contains_words(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(start, matched)| {
        let before = text[..start].chars().next_back();
        let after = text[start + matched.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Whether the text declines to answer (see the module docs for what counts).
pub fn is_refusal(text: &str) -> bool {
    let prepared = prepare(text);
    refusal_phrases()
        .iter()
        .any(|phrase| contains_words(&prepared, phrase))
}

/// The text prepared as `is_refusal` reads it (lowercase, apostrophes straightened, spaces
/// collapsed) with every refusal phrase blanked: what the text says besides declining.
pub fn without_refusal_phrases(text: &str) -> String {
    let prepared = prepare(text);
    let mut blank = vec![false; prepared.len()];
    for phrase in refusal_phrases() {
        for (start, matched) in prepared.match_indices(phrase.as_str()) {
            let end = start + matched.len();
            let before = prepared[..start].chars().next_back();
            let after = prepared[end..].chars().next();
            if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
                blank[start..end].iter_mut().for_each(|b| *b = true);
            }
        }
    }
    prepared.char_indices().map(|(i, c)| if blank[i] { ' ' } else { c }).collect()
}

/// 1.0 when the answer refuses exactly when the question expects a refusal, else 0.0.
pub fn refusal_correct(answer_text: &str, should_refuse: bool) -> f64 {
    if is_refusal(answer_text) == should_refuse {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_refusals() {
        let refusals = [
            "I'm sorry, but I can't answer that from the manual.",
            // The refusal the built-in rag prompt asks for.
            "I can't answer that from the documents.",
            "I’m unable to answer this question.",
            "That isn't covered. It is not covered in the manual.",
            "I don't know.",
            "There is no information about pricing in the provided documents.",
            "I cannot find this in the manuals.",
            "The manual does not mention a warranty period.",
            "The provided context doesn't contain details on shipping.",
            "This question is outside the scope of the product manuals.",
            "Sorry, I couldn't find any information on that.",
            "I do not have enough information to answer.",
            "Unfortunately the documentation doesn't say.",
            "NOT MENTIONED IN THE MANUAL",
        ];
        for text in refusals {
            assert!(is_refusal(text), "should be a refusal: {text}");
        }
    }

    #[test]
    fn ordinary_answers_are_not_refusals() {
        let answers = [
            "Hold RESET for 5 seconds until the LED blinks.",
            "If the unit cannot find the network, restart the router.",
            "Water damage is not covered by the warranty.",
            "No, the filter does not need replacing for 6 months.",
            "The display shows no information when the device is off.",
            "Do not use bleach; it can't be removed from the tank.",
            "The kit does not include batteries.",
            "Skip the scan if you know the model number.",
            "",
        ];
        for text in answers {
            assert!(!is_refusal(text), "should not be a refusal: {text}");
        }
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert!(!is_refusal("hi don't knowledge base"));
        assert!(is_refusal("Honestly, I don't know!"));
    }

    #[test]
    fn what_a_refusal_says_besides_declining() {
        let rest = |t: &str| without_refusal_phrases(t).split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(rest("I can't answer that from the documents."), "that from the documents.");
        assert_eq!(rest("I’m unable to answer; the default is UTF-8."), "; the default is utf-8.");
        assert_eq!(rest("The manual does not mention a warranty period."), "a warranty period.");
        assert_eq!(rest("Hold RESET for 5 seconds."), "hold reset for 5 seconds.");
        assert_eq!(rest(""), "");
    }

    #[test]
    fn refusal_correct_compares_with_expectation() {
        assert_eq!(refusal_correct("I don't know.", true), 1.0);
        assert_eq!(refusal_correct("I don't know.", false), 0.0);
        assert_eq!(refusal_correct("Five seconds.", false), 1.0);
        assert_eq!(refusal_correct("Five seconds.", true), 0.0);
    }
}
