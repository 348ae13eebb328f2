//! Plain text: decoding bytes that claim to be text, and cutting text into paragraph blocks.

use super::{Block, DocumentProblem};

/// Decode a text file. A NUL byte means the file is not text (a binary under a text name).
/// Invalid UTF-8 is replaced and reported as a warning with the line of its first occurrence.
pub(crate) fn decode_text(bytes: &[u8]) -> Result<(String, Option<DocumentProblem>), DocumentProblem> {
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(DocumentProblem::Binary { offset: offset as u64 });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((text.to_string(), None)),
        Err(first) => {
            let byte = first.valid_up_to();
            let line = bytes[..byte].iter().filter(|b| **b == b'\n').count() as u64 + 1;
            let count = bytes
                .utf8_chunks()
                .filter(|chunk| !chunk.invalid().is_empty())
                .count() as u64;
            let text = String::from_utf8_lossy(bytes).into_owned();
            Ok((text, Some(DocumentProblem::InvalidUtf8 { line, byte: byte as u64, count })))
        }
    }
}

/// Paragraphs (separated by blank lines) become blocks; inside a paragraph, a line that starts
/// a list item starts a new block, and wrapped lines are joined.
pub(crate) fn paragraph_blocks(text: &str, page: Option<u32>) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    let flush = |lines: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        let joined = join_wrapped_lines(lines);
        if !joined.is_empty() {
            blocks.push(Block { text: joined, page });
        }
        lines.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            flush(&mut lines, &mut blocks);
        } else {
            if starts_list_item(trimmed) {
                flush(&mut lines, &mut blocks);
            }
            lines.push(trimmed);
        }
    }
    flush(&mut lines, &mut blocks);
    blocks
}

/// True for `- item`, `* item`, `• item`, `1. step`, `2) step`.
pub(crate) fn starts_list_item(line: &str) -> bool {
    let mut chars = line.chars();
    match chars.next() {
        Some('-' | '*' | '•' | '–' | '▪') => chars.next().is_some_and(char::is_whitespace),
        Some(c) if c.is_ascii_digit() => {
            let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
            let digits = line.len() - rest.len();
            digits <= 3 && (rest.starts_with(". ") || rest.starts_with(") "))
        }
        _ => false,
    }
}

/// Join wrapped lines with spaces. A line ending in a hyphen after a lowercase letter, followed
/// by a line starting with a lowercase letter, was hyphenated by the typesetter: join without
/// the hyphen ("manu-" + "facturer"). Other word hyphens stay, without a space ("USB-" + "C").
pub(crate) fn join_wrapped_lines(lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines {
        // Justified PDF text often carries a space glyph and a positional gap: collapse runs.
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = line.as_str();
        if line.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(line);
            continue;
        }
        let mut tail = out.chars().rev();
        let ends_in_word_hyphen =
            tail.next() == Some('-') && tail.next().is_some_and(char::is_alphanumeric);
        let before_hyphen_lower = out.chars().rev().nth(1).is_some_and(char::is_lowercase);
        let next_lower = line.chars().next().is_some_and(char::is_lowercase);
        if ends_in_word_hyphen && before_hyphen_lower && next_lower {
            out.pop();
        } else if !ends_in_word_hyphen {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_typesetter_hyphens_but_keeps_real_ones() {
        assert_eq!(
            join_wrapped_lines(&["Contact the manu-", "facturer about the USB-", "C port."]),
            "Contact the manufacturer about the USB-C port."
        );
    }

    #[test]
    fn paragraphs_and_list_items_become_blocks() {
        let blocks = paragraph_blocks("First line\nwraps here.\n\n- one\n- two\n1. step", Some(2));
        let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["First line wraps here.", "- one", "- two", "1. step"]);
        assert!(blocks.iter().all(|b| b.page == Some(2)));
    }

    #[test]
    fn invalid_utf8_is_replaced_and_located() {
        let (text, warning) = decode_text(b"ok\nfine\nbad \xFF here\n\xFE").unwrap();
        assert_eq!(text, "ok\nfine\nbad \u{FFFD} here\n\u{FFFD}");
        assert_eq!(
            warning,
            Some(DocumentProblem::InvalidUtf8 { line: 3, byte: 12, count: 2 })
        );
    }

    #[test]
    fn nul_bytes_mean_binary() {
        assert_eq!(
            decode_text(b"\x89PNG\r\n\x1a\n\0\0"),
            Err(DocumentProblem::Binary { offset: 8 })
        );
    }
}
