//! Answers that repeat themselves, read once. Small generators often loop: "The answer to this
//! question is: The answer to this question is: …" to the token limit. A judge model reading
//! the loop scores it like an answer (the 1.5B gave such answers P(Yes) 0.55–0.65 on real
//! documents, passing them, and above right answers beside them; docs/pairwise.md), so a loop
//! is read once: before any judge reads the answer, the copies after the first are dropped, as
//! a user would skim them. A right answer that then loops keeps its right part.
//!
//! Only a unit of three words or more said three times or more in a row counts (compared
//! without case or surrounding punctuation): one copy is kept. A phrase said twice ("… through
//! the Working Capital Fund. The Working Capital Fund is …") is language, not a loop, and a
//! list whose items differ by a number is left alone. Text without such a loop is returned
//! unchanged, byte for byte.

/// The shortest repeated unit, in words: "very very" and "no, no" are language, not a loop.
const MIN_UNIT_WORDS: usize = 3;
/// The longest unit looked for (a few sentences); it bounds the work per word.
const MAX_UNIT_WORDS: usize = 60;
/// How many copies in a row make a loop.
const MIN_COPIES: usize = 3;

/// A word as it is compared: lower case, without the punctuation around it.
fn key(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

/// How many copies of the `unit` words starting at `at` follow each other there.
fn copies(keys: &[String], at: usize, unit: usize) -> usize {
    let first = &keys[at..at + unit];
    let mut count = 1;
    while at + (count + 1) * unit <= keys.len() && keys[at + count * unit..at + (count + 1) * unit] == *first {
        count += 1;
    }
    count
}

/// `text` with every loop (a unit of words said `MIN_COPIES` times or more in a row) read
/// once, and whether any was. The words kept are joined by single spaces when one was.
pub fn without_repeats(text: &str) -> (String, bool) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let keys: Vec<String> = words.iter().map(|w| key(w)).collect();
    let mut kept: Vec<&str> = Vec::with_capacity(words.len());
    let mut at = 0;
    let mut looped = false;
    while at < words.len() {
        // The shortest unit that loops from here; a cheap test of its first word first.
        let found = (MIN_UNIT_WORDS..=MAX_UNIT_WORDS)
            .take_while(|unit| at + MIN_COPIES * unit <= words.len())
            .filter(|&unit| keys[at] == keys[at + unit] && keys[at..at + unit].iter().any(|k| !k.is_empty()))
            .map(|unit| (unit, copies(&keys, at, unit)))
            .find(|&(_, count)| count >= MIN_COPIES);
        match found {
            Some((unit, count)) => {
                kept.extend(&words[at..at + unit]);
                at += unit * count;
                looped = true;
            }
            None => {
                kept.push(words[at]);
                at += 1;
            }
        }
    }
    if !looped {
        return (text.to_string(), false);
    }
    (kept.join(" "), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_is_read_once_and_a_right_start_is_kept() {
        let looped = "The answer to this question is:  The answer to this question is:  The answer to this question is:";
        assert_eq!(without_repeats(looped), ("The answer to this question is:".to_string(), true));
        let after = "Use drop = FALSE. It keeps the matrix, it keeps the matrix, it keeps the matrix, it keeps the matrix.";
        assert_eq!(without_repeats(after).0, "Use drop = FALSE. It keeps the matrix,");
        let clause = "a header line, which is followed by a header line, followed by a header line, followed by a header line";
        assert_eq!(without_repeats(clause).0, "a header line, which is followed by a header line,");
    }

    #[test]
    fn ordinary_text_is_left_byte_for_byte() {
        for text in [
            "Hold the button for 5 seconds.\nThen hold the button for 10 seconds.",
            "1. Install packages from the command line 2. Download packages from the command line",
            "no, no, that is wrong",
            "paid through the Working Capital Fund. The Working Capital Fund is described as funding 24 FTEs",
            "It is underfunded. It is underfunded.",
            "It is very very cold. Bring a coat.",
            "",
        ] {
            assert_eq!(without_repeats(text), (text.to_string(), false), "{text:?}");
        }
    }

    #[test]
    fn a_long_loop_costs_linear_time_and_keeps_one_copy() {
        let unit = "the R distribution is available for a limited time after the release";
        let text = vec![unit; 500].join(" ");
        let (once, dropped) = without_repeats(&text);
        assert!(dropped);
        assert_eq!(once, unit);
    }
}
