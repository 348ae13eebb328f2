//! Turning raw PDF page text into sections and blocks: drop running headers, footers and page
//! numbers, rejoin hyphenated and wrapped lines, and guess headings.
//!
//! Headers and footers are lines near the top or bottom of a page that repeat on most pages
//! once digits are masked ("Page 3 of 9", a date, a file URL with a page count). Headings are
//! short lines standing alone between blank lines, starting with a capital or a section
//! number, without a final full stop: the layout is all a PDF's text gives away.

use crate::corpus::text::{join_wrapped_lines, starts_list_item};
use crate::corpus::{Block, Section};
use std::collections::HashMap;

/// How many lines at the top and bottom of a page may be a running header or footer.
const EDGE_LINES: usize = 3;

pub(crate) fn pdf_sections(pages: &[String]) -> Vec<Section> {
    let pages: Vec<Vec<&str>> = pages.iter().map(|p| p.lines().map(str::trim).collect()).collect();
    let repeated = repeated_edge_lines(&pages);
    let mut sections: Vec<Section> = Vec::new();
    let mut current = Section { heading: None, blocks: Vec::new() };
    // A paragraph cut by a page break continues on the next page: carry its lines over.
    let mut paragraph: Vec<&str> = Vec::new();
    let mut paragraph_page = 1;
    for (index, lines) in pages.iter().enumerate() {
        let page = index as u32 + 1;
        let mut kept = strip_page_furniture(lines, &repeated);
        // Blank lines at the bottom of a page (often a removed page number) end nothing: the
        // page-break rule below decides whether the paragraph goes on.
        while kept.last().is_some_and(|l| l.is_empty()) {
            kept.pop();
        }
        let mut i = 0;
        // Blank lines at the top of a page do not end a paragraph carried over from the last.
        if !paragraph.is_empty() {
            while kept.get(i).is_some_and(|l| l.is_empty()) {
                i += 1;
            }
        }
        while i < kept.len() {
            let line = kept[i];
            if line.is_empty() {
                flush(&mut paragraph, paragraph_page, &mut current);
                i += 1;
                continue;
            }
            let alone = kept.get(i + 1).is_none_or(|next| next.is_empty())
                && (i == 0 || kept[i - 1].is_empty());
            // A second heading-like line before any text under the first is text (a table's
            // first rows, a subtitle): taking it as the heading would lose the first one.
            let heading_waits_for_text = current.heading.is_some() && current.blocks.is_empty();
            if paragraph.is_empty() && alone && !heading_waits_for_text && looks_like_heading(line) {
                if !current.blocks.is_empty() {
                    sections.push(std::mem::replace(
                        &mut current,
                        Section { heading: None, blocks: Vec::new() },
                    ));
                }
                current.heading = Some(line.split_whitespace().collect::<Vec<_>>().join(" "));
                i += 1;
                continue;
            }
            if starts_list_item(line) {
                flush(&mut paragraph, paragraph_page, &mut current);
            }
            if paragraph.is_empty() {
                paragraph_page = page;
            }
            paragraph.push(line);
            i += 1;
        }
        // Keep the paragraph open across the page break only if it stops mid-sentence.
        let open = paragraph
            .last()
            .is_some_and(|l| !l.ends_with(['.', '!', '?', ':']));
        if !open {
            flush(&mut paragraph, paragraph_page, &mut current);
        }
    }
    flush(&mut paragraph, paragraph_page, &mut current);
    if !current.blocks.is_empty() {
        sections.push(current);
    }
    sections
}

fn flush(paragraph: &mut Vec<&str>, page: u32, section: &mut Section) {
    let text = join_wrapped_lines(paragraph);
    paragraph.clear();
    if !text.is_empty() {
        section.blocks.push(Block { text, page: Some(page) });
    }
}

/// Digits masked so "Page 3 of 9" and "Page 4 of 9" compare equal.
fn edge_key(line: &str) -> String {
    let masked: String = line
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    masked.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn edge_lines<'a>(lines: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    let non_empty: Vec<&str> = lines.iter().copied().filter(|l| !l.is_empty()).collect();
    let n = non_empty.len();
    let head = non_empty.iter().take(EDGE_LINES.min(n)).copied().collect::<Vec<_>>();
    let tail = non_empty
        .iter()
        .skip(n.saturating_sub(EDGE_LINES).max(EDGE_LINES.min(n)))
        .copied()
        .collect::<Vec<_>>();
    head.into_iter().chain(tail)
}

/// Edge-line keys found on at least half of the pages (and on two pages at least).
fn repeated_edge_lines(pages: &[Vec<&str>]) -> Vec<String> {
    if pages.len() < 2 {
        return Vec::new();
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for lines in pages {
        let mut keys: Vec<String> = edge_lines(lines).map(edge_key).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            *counts.entry(key).or_default() += 1;
        }
    }
    let needed = pages.len().div_ceil(2).max(2);
    counts.into_iter().filter(|(_, n)| *n >= needed).map(|(k, _)| k).collect()
}

fn strip_page_furniture<'a>(lines: &[&'a str], repeated: &[String]) -> Vec<&'a str> {
    let non_empty: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
    let n = non_empty.len();
    let is_edge = |i: usize| {
        let rank = non_empty.iter().position(|&j| j == i);
        rank.is_some_and(|r| r < EDGE_LINES || r + EDGE_LINES >= n)
    };
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let furniture = is_edge(i)
                && (is_page_number(line) || repeated.contains(&edge_key(line)));
            if furniture {
                ""
            } else {
                *line
            }
        })
        .collect()
}

/// "7", "- 7 -", "Page 7", "7 / 12", "Page 7 of 12", "vii".
fn is_page_number(line: &str) -> bool {
    let lower = line.to_lowercase();
    let core = lower.trim_matches(|c: char| c == '-' || c == '–' || c.is_whitespace());
    let core = core.strip_prefix("page").unwrap_or(core).trim();
    let numbers: Vec<&str> = core
        .split(|c: char| c == '/' || c.is_whitespace())
        .filter(|w| !w.is_empty() && *w != "of")
        .collect();
    let arabic = !numbers.is_empty()
        && numbers.len() <= 2
        && numbers.iter().all(|w| w.len() <= 5 && w.chars().all(|c| c.is_ascii_digit()));
    let roman = numbers.len() == 1
        && numbers[0].len() <= 6
        && numbers[0].chars().all(|c| matches!(c, 'i' | 'v' | 'x' | 'l'));
    arabic || roman
}

fn looks_like_heading(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() || words.len() > 10 || line.ends_with(['.', ',', ';', ':']) {
        return false;
    }
    // Table rows standing alone ("Cycle life 3,000 cycles to 80%") carry several numbers;
    // headings carry at most one ("Step 2: Fit the hooks", "3. Setup").
    if words.iter().filter(|w| w.chars().any(|c| c.is_ascii_digit())).count() > 1 {
        return false;
    }
    let first = words[0];
    let numbered = first.chars().all(|c| c.is_ascii_digit() || c == '.')
        && first.chars().next().is_some_and(|c| c.is_ascii_digit())
        && words.len() > 1;
    let capital = first.chars().next().is_some_and(char::is_uppercase);
    (numbered || capital) && line.chars().any(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(lines: &[&str]) -> String {
        lines.join("\n")
    }

    #[test]
    fn drops_running_headers_footers_and_page_numbers() {
        let pages = vec![
            page(&["11/22/26, 9:14 PM    Lumen 300", "", "Charging", "", "Charge it with", "USB-C.", "", "file:///tmp/lumen.html 1/3"]),
            page(&["11/22/26, 9:14 PM    Lumen 300", "", "Hold the button for six sec-", "onds.", "", "file:///tmp/lumen.html 2/3"]),
            page(&["11/22/26, 9:14 PM    Lumen 300", "", "Care", "", "Wipe the lens.", "", "3"]),
        ];
        let sections = pdf_sections(&pages);
        let all: Vec<(Option<&str>, &str, Option<u32>)> = sections
            .iter()
            .flat_map(|s| s.blocks.iter().map(move |b| (s.heading.as_deref(), b.text.as_str(), b.page)))
            .collect();
        assert_eq!(
            all,
            [
                (Some("Charging"), "Charge it with USB-C.", Some(1)),
                (Some("Charging"), "Hold the button for six seconds.", Some(2)),
                (Some("Care"), "Wipe the lens.", Some(3)),
            ]
        );
    }

    #[test]
    fn a_paragraph_cut_by_a_page_break_is_joined() {
        let pages = vec![page(&["The fly must sit", "clear of the", "", "4"]), page(&["", "inner tent.", "", "5"])];
        let sections = pdf_sections(&pages);
        assert_eq!(sections[0].blocks[0].text, "The fly must sit clear of the inner tent.");
        assert_eq!(sections[0].blocks[0].page, Some(1));
    }

    #[test]
    fn heading_shapes() {
        for yes in ["Charging", "3. Setup", "Step 2: Fit the frame hooks", "Error codes"] {
            assert!(looks_like_heading(yes), "{yes}");
        }
        for no in ["Cycle life 3,000 cycles to 80% of original capacity", "the lamp is off",
                   "Hold the button.", "E05 AC output overload Reduce load below 1,200 W"] {
            assert!(!looks_like_heading(no), "{no}");
        }
    }

    #[test]
    fn page_number_shapes() {
        for yes in ["7", "- 7 -", "Page 7", "7 / 12", "Page 7 of 12", "vii"] {
            assert!(is_page_number(yes), "{yes}");
        }
        for no in ["7 days", "Step 7", "Lumen 300 Headlamp", "1,800 mAh"] {
            assert!(!is_page_number(no), "{no}");
        }
    }
}
