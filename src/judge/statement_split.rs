//! Splitting a text into statements without a model: lines first (list items, table rows,
//! paragraphs), then sentences inside a line. A statement judge checks each one on its own,
//! so the split must be the same every time and never depend on what a model generates.
//!
//! Markup that carries no claim is dropped from each statement (list markers, emphasis, heading
//! hashes, citation brackets like `[doc#3]`); headings and fragments of fewer than three words
//! are not statements. Repeated statements (small models repeat themselves) count once.

/// Fewest words a statement has: "Yes." or "Revenue:" claims nothing on its own.
const MIN_WORDS: usize = 3;

/// The statements of `text`, in order, without repeats.
pub fn split_statements(text: &str) -> Vec<String> {
    let lines: Vec<String> = text.lines().map(clean_line).collect();
    let mut header: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if is_table_rule(line) {
            continue;
        }
        let parts = if line.matches('|').count() >= 2 {
            let cells: Vec<String> = line.split('|').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
            // A row followed by a rule row is the table's header: it names the columns.
            if lines.get(i + 1).is_some_and(|next| is_table_rule(next)) {
                header = cells;
                continue;
            }
            vec![table_row(&header, &cells)]
        } else {
            header.clear();
            sentences(line)
        };
        for part in parts {
            let part = part.trim().to_string();
            let words = word_count(&part);
            // A heading ("Key figures:") introduces statements; it is not one.
            let heading = part.ends_with(':') && words < 8;
            if words < MIN_WORDS || heading || !part.chars().any(char::is_alphanumeric) {
                continue;
            }
            if seen.insert(part.to_lowercase()) {
                out.push(part);
            }
        }
    }
    out
}

/// Words of a statement. Scripts written without spaces (Chinese, Japanese) count one word
/// per two of their characters, about a word's worth, so their sentences are statements too.
fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| {
            let unspaced = w.chars().filter(|c| is_unspaced_script(*c)).count();
            (unspaced / 2).max(1)
        })
        .sum()
}

/// Han, kana and Hangul syllables: scripts whose sentences need no spaces between words.
fn is_unspaced_script(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}' | '\u{f900}'..='\u{faff}')
}

/// A table row as one statement, each cell after the first named by its column: its cells
/// only mean something together ("Europe: 2022 10.2; 2021 9.8").
fn table_row(header: &[String], cells: &[String]) -> String {
    let Some((first, rest)) = cells.split_first() else { return String::new() };
    let named: Vec<String> = rest
        .iter()
        .enumerate()
        .map(|(k, cell)| match header.get(k + 1) {
            Some(column) => format!("{column} {cell}"),
            None => cell.clone(),
        })
        .collect();
    format!("{first}: {}", named.join("; "))
}

/// At most `max` statements: when there are more, neighbours are joined into `max` groups of
/// near-equal size, so every statement is still checked (the cost stays bounded).
pub fn grouped(statements: Vec<String>, max: usize) -> Vec<String> {
    let max = max.max(1);
    if statements.len() <= max {
        return statements;
    }
    let n = statements.len();
    (0..max)
        .map(|g| statements[g * n / max..(g + 1) * n / max].join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// A line without list markers, heading hashes, emphasis and citation brackets.
fn clean_line(line: &str) -> String {
    let mut rest = line.trim();
    rest = rest.trim_start_matches('#').trim_start();
    // Bullets and numbered items: "- ", "* ", "• ", "1. ", "2) ", "a) ".
    for bullet in ["- ", "* ", "• ", "+ ", "> "] {
        if let Some(r) = rest.strip_prefix(bullet) {
            rest = r.trim_start();
        }
    }
    let marker_end = rest.char_indices().find(|(_, c)| !c.is_ascii_alphanumeric()).map(|(i, _)| i).unwrap_or(0);
    let marker = &rest[..marker_end];
    let short_marker = (1..=3).contains(&marker.len())
        && (marker.chars().all(|c| c.is_ascii_digit()) || (marker.len() == 1 && marker.chars().all(|c| c.is_ascii_lowercase())));
    if short_marker {
        let after = &rest[marker_end..];
        if let Some(r) = after.strip_prefix(". ").or_else(|| after.strip_prefix(") ")) {
            rest = r.trim_start();
        }
    }
    let without_emphasis = rest.replace("**", "").replace("__", "").replace('`', "");
    without_citations(&without_emphasis)
}

/// Text without bracketed citations (`[doc#3]`, `[budget-fy2023#12, x#1]`): ids, not claims.
fn without_citations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else { break };
        let inside = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        if !inside.contains('#') {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    // Citations leave a space before the full stop: "fact [a#1]." -> "fact ."
    out.replace(" .", ".").replace("  ", " ")
}

/// A Markdown table's rule row (`|---|:--:|`).
fn is_table_rule(line: &str) -> bool {
    !line.is_empty() && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) && line.contains('-')
}

/// Sentences of one line: a break after `.`, `!` or `?` followed by a space and a capital,
/// digit or quote, except after abbreviations and initials ("U.S. Department", "e.g. the"); a
/// full-width `。`, `！` or `？` ends one with nothing after it.
pub fn sentences(line: &str) -> Vec<String> {
    const ABBREVIATIONS: [&str; 18] = [
        "e.g.", "i.e.", "etc.", "vs.", "mr.", "ms.", "dr.", "no.", "fig.", "approx.", "est.", "inc.", "co.", "corp.", "ltd.", "st.", "sec.", "rs.",
    ];
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for (k, &(i, c)) in chars.iter().enumerate() {
        // Full-width stops end a sentence with no space after them.
        if matches!(c, '。' | '！' | '？') {
            if chars.get(k + 1).is_some() {
                out.push(line[start..i + c.len_utf8()].to_string());
                start = i + c.len_utf8();
            }
            continue;
        }
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let Some(&(_, space)) = chars.get(k + 1) else { continue };
        let Some(&(_, next)) = chars.get(k + 2) else { continue };
        if !space.is_whitespace() || !(next.is_uppercase() || next.is_ascii_digit() || next == '"' || next == '(') {
            continue;
        }
        let sentence = &line[start..i + c.len_utf8()];
        let last_word = sentence.split_whitespace().last().unwrap_or("").to_lowercase();
        // "U.S." and single initials ("J. Smith") end in a full stop but no sentence.
        let initial = last_word.trim_end_matches('.').chars().count() == 1 || last_word.matches('.').count() > 1;
        if c == '.' && (ABBREVIATIONS.contains(&last_word.as_str()) || initial) {
            continue;
        }
        out.push(sentence.to_string());
        start = i + c.len_utf8();
    }
    if start < line.len() {
        out.push(line[start..].to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_lists_and_tables_become_statements() {
        let text = "## Revenue\nNet revenue rose 4.2% to $31.8 billion in 2022 [ar#3]. The U.S. market grew most. \
                    Margins fell.\n\n- Operating income was $12.3 billion.\n2. Dividends rose to $5.04 per share.\n\
                    | Segment | 2022 | 2021 |\n|---|---|---|\n| Europe | 10.2 | 9.8 |\nKey figures:";
        assert_eq!(
            split_statements(text),
            vec![
                "Net revenue rose 4.2% to $31.8 billion in 2022.",
                "The U.S. market grew most.",
                "Operating income was $12.3 billion.",
                "Dividends rose to $5.04 per share.",
                "Europe: 2022 10.2; 2021 9.8",
            ]
        );
    }

    #[test]
    fn repeats_and_fragments_are_dropped() {
        let text = "The fee is 5 dollars. The fee is 5 dollars.\nThe fee is 5 dollars.\nYes.\n**Note**";
        assert_eq!(split_statements(text), vec!["The fee is 5 dollars."]);
        assert!(split_statements("").is_empty());
        assert!(split_statements("||||\n---\n\u{0}\u{E000}").is_empty());
    }

    #[test]
    fn decimals_and_abbreviations_do_not_end_sentences() {
        assert_eq!(
            split_statements("It costs 3.5 million, e.g. for ACME Inc. in 2020. That is all there is."),
            vec!["It costs 3.5 million, e.g. for ACME Inc. in 2020.", "That is all there is."]
        );
        // A figure after `Rs.` or `est.` stays in its statement, where its key words are.
        assert_eq!(
            split_statements("Revenue was Rs. 4,800 crore in 2024, est. 5,000 crore in 2025. Operating margins held steady."),
            vec!["Revenue was Rs. 4,800 crore in 2024, est. 5,000 crore in 2025.", "Operating margins held steady."]
        );
    }

    #[test]
    fn many_statements_are_grouped_not_dropped() {
        let many: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
        let groups = grouped(many.clone(), 4);
        assert_eq!(groups.len(), 4);
        assert_eq!(groups.join(" ").split(' ').count(), 10);
        assert_eq!(grouped(many.clone(), 20), many);
    }

    #[test]
    fn unspaced_scripts_and_crlf_split_into_statements() {
        assert_eq!(
            split_statements("营业收入增长了百分之五。净利润为四十二亿元。\r\n- Revenue rose 5% in FY2023.\r\n"),
            vec!["营业收入增长了百分之五。", "净利润为四十二亿元。", "Revenue rose 5% in FY2023."]
        );
    }

    #[test]
    fn any_text_splits_without_panicking() {
        for text in ["。。。", "a.b.c. D", "1) ", "[", "]x[#", "é. É. ö? Ü! 1. 2. 3.", "| a |", ". A"] {
            let _ = split_statements(text);
        }
    }
}
