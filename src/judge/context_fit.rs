//! An item's values cut to fit the judge model's context window, by one stated rule, so that
//! no answer is left unscored for being long. Every prompt a judge reads holds at most the
//! item's values (question, reference, answer, retrieved and golden context) plus the chat
//! template, a rubric, one statement and the options; when the values together need more
//! tokens than the window less `ROOM`, the window is shared out: values under an equal share
//! keep all their text, and each longer one keeps its beginning up to an equal share of what is
//! left (water-filling). The beginning is kept because answers and references put what they
//! conclude first; the item is flagged `cut to fit the judge's context`, so a score read from
//! part of a text is never shown as if it were read whole.

use std::collections::BTreeMap;

use crate::llm::model::LanguageModel;
use crate::llm::gguf_tokenizer::ModelTokenizer;


/// Tokens of the window left for what is not a value: the chat template (about 30 tokens), the
/// longest built-in rubric (about 120), the options, and the slack between a value tokenized on
/// its own and inside a prompt. The statement a check asks about is part of a value already.
pub const ROOM: usize = 1024;

/// The values of `variables` cut to fit `model`'s window; true when any was cut.
pub fn fit_to_context(model: &LanguageModel, variables: &mut BTreeMap<&str, String>) -> bool {
    fit_to_budget(&model.tokenizer, model.context_length().saturating_sub(ROOM), variables)
}

/// The values cut so that their tokens sum to at most `budget` (see the module's rule); true
/// when any was cut. A value the tokenizer cannot read is counted by its bytes (never fewer
/// than its tokens), so it is cut rather than left to overflow.
pub fn fit_to_budget(tokenizer: &ModelTokenizer, budget: usize, variables: &mut BTreeMap<&str, String>) -> bool {
    fit_counted(|text| tokenizer.encode_plain(text).map(|t| t.len()).unwrap_or(text.len()), budget, variables)
}

/// The values cut by the same rule to at most `budget` characters in all: for a served judge,
/// whose tokenizer is the server's, once the server has said the prompt does not fit.
pub fn fit_to_chars(budget: usize, variables: &mut BTreeMap<&str, String>) -> bool {
    fit_counted(|text| text.chars().count(), budget, variables)
}

/// The rule itself, with `count` measuring a value's size.
fn fit_counted(count: impl Fn(&str) -> usize, budget: usize, variables: &mut BTreeMap<&str, String>) -> bool {
    let sizes: BTreeMap<&str, usize> = variables.iter().map(|(k, v)| (*k, count(v))).collect();
    if sizes.values().sum::<usize>() <= budget {
        return false;
    }
    let shares = water_fill(&sizes, budget);
    let mut cut = false;
    for (key, value) in variables.iter_mut() {
        let (size, share) = (sizes[key], shares[key]);
        if size <= share {
            continue;
        }
        // Cut in proportion to the tokens, then shorter until the tokens fit: a text's
        // characters per token vary little within it, so this ends in a step or two.
        let chars = value.chars().count();
        let mut keep = chars * share / size.max(1);
        let mut kept = beginning(value, keep);
        while keep > 0 && count(&kept) > share {
            keep = keep * 9 / 10;
            kept = beginning(value, keep);
        }
        *value = kept;
        cut = true;
    }
    cut
}

/// Each value's share of `budget`: the smallest values first, each taking its whole size while
/// that is at most an equal share of what is left.
fn water_fill<'a>(sizes: &BTreeMap<&'a str, usize>, budget: usize) -> BTreeMap<&'a str, usize> {
    let mut order: Vec<(&str, usize)> = sizes.iter().map(|(k, v)| (*k, *v)).collect();
    order.sort_by_key(|(_, size)| *size);
    let mut left = budget;
    let mut shares = BTreeMap::new();
    for (i, (key, size)) in order.iter().enumerate() {
        let equal = left / (order.len() - i);
        let share = (*size).min(equal);
        shares.insert(*key, share);
        left -= share;
    }
    shares
}

/// The first `chars` characters of `text`, ending at the last whitespace among them when there
/// is one in their second half (words are kept whole; text without spaces is cut where it falls).
fn beginning(text: &str, chars: usize) -> String {
    let end = text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    if end == text.len() {
        return head.to_string();
    }
    let floor = head.char_indices().nth(chars / 2).map_or(0, |(i, _)| i);
    match head.rfind(char::is_whitespace) {
        Some(space) if space >= floor && space > 0 => head[..space].trim_end().to_string(),
        _ => head.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_keep_their_text_and_long_ones_share_the_rest() {
        let sizes: BTreeMap<&str, usize> = [("question", 20), ("reference", 3000), ("answer", 9000)].into_iter().collect();
        let shares = water_fill(&sizes, 6000);
        assert_eq!(shares["question"], 20);
        assert_eq!(shares["reference"], 2990);
        assert_eq!(shares["answer"], 2990);
        assert!(shares.values().sum::<usize>() <= 6000);
        let fits: BTreeMap<&str, usize> = [("question", 20), ("answer", 100)].into_iter().collect();
        assert_eq!(water_fill(&fits, 6000), fits);
    }

    #[test]
    fn a_cut_ends_between_words_where_there_are_words() {
        assert_eq!(beginning("Revenue rose to $4.2 billion in FY2023", 26), "Revenue rose to $4.2");
        assert_eq!(beginning("营业收入增长了百分之五", 4), "营业收入");
        assert_eq!(beginning("short", 10), "short");
        assert_eq!(beginning("", 3), "");
    }
}
