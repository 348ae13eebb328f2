//! PDF text fidelity against poppler's pdftotext (its output committed beside each PDF by
//! `pdftotext -enc UTF-8 FILE.pdf`; poppler-utils 22.12). The share of our word tokens that
//! pdftotext's text does not contain (glued or split words, broken ligatures, stray symbols),
//! and the other way round (lost text), must each stay under 0.1%. Page furniture that Assay
//! drops on purpose (page numbers, running headers) is first left out of pdftotext's text. The
//! same measure over more files: scripts/pdf_fidelity.py (README, "PDF text").

use assay::corpus::{read_document, ReadLimits};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Lower-cased runs of letters and digits, after NFKC; hyphenated words (at a line end or
/// inside a line) read as one word; URLs (the tools cut them differently) and words holding
/// U+FFFD (a glyph its font does not map, which Assay may restore and pdftotext splits) are
/// left out.
fn tokens(text: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    // A soft hyphen (U+00AD) marks where a word may break; it is not part of the word.
    let text: String = text.nfkc().filter(|&c| c != '\u{AD}').collect();
    let chars: Vec<char> = text.chars().collect();
    let mut joined = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '-' && i > 0 && chars[i - 1].is_alphanumeric() {
            // Skip the hyphen and any line break after it when a word goes on.
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() && chars[j] != '\n' {
                j += 1;
            }
            if j < chars.len() && chars[j] == '\n' {
                j += 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
            }
            if j < chars.len() && chars[j].is_alphanumeric() && (j == i + 1 || chars[i + 1..j].contains(&'\n')) {
                i = j;
                continue;
            }
        }
        joined.push(c);
        i += 1;
    }
    joined
        .split_whitespace()
        .filter(|w| !w.contains("://") && !w.contains('\u{FFFD}'))
        .flat_map(|w| w.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect()
}

/// pdftotext's text without what Assay drops on purpose: a page number alone on a page's first
/// or last line, and lines at a page's edges (two each side) that recur, digits aside, on half
/// the pages. Written apart from src/corpus/pdf/layout.rs so the test does not grade the
/// library with its own rule.
fn without_page_furniture(text: &str) -> String {
    let pages: Vec<Vec<&str>> = text
        .split('\u{c}')
        .map(|page| page.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
        .collect();
    let key = |line: &str| -> String {
        let masked: String = line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
        masked.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let is_edge = |i: usize, n: usize| i < 2 || i + 2 >= n;
    let mut counts: HashMap<String, usize> = HashMap::new();
    for lines in &pages {
        let keys: HashSet<String> = (0..lines.len()).filter(|&i| is_edge(i, lines.len())).map(|i| key(lines[i])).collect();
        for k in keys {
            *counts.entry(k).or_default() += 1;
        }
    }
    let needed = pages.len().div_ceil(2).max(2);
    let mut kept = Vec::new();
    for lines in &pages {
        let n = lines.len();
        for (i, line) in lines.iter().enumerate() {
            let page_number = (i == 0 || i + 1 == n) && is_page_number(line);
            let running = is_edge(i, n) && pages.len() >= 2 && counts.get(&key(line)).is_some_and(|c| *c >= needed);
            if !page_number && !running {
                kept.push(*line);
            }
        }
    }
    kept.join("\n")
}

/// "7", "- 7 -", "Page 7", "7 / 12", "Page 7 of 12", "xii".
fn is_page_number(line: &str) -> bool {
    let lower = line.to_lowercase();
    let core = lower.trim_matches(|c: char| c == '-' || c == '\u{2013}' || c.is_whitespace());
    let core = core.strip_prefix("page ").unwrap_or(core);
    let parts: Vec<&str> = core.split(|c: char| c == '/' || c.is_whitespace()).filter(|w| !w.is_empty() && *w != "of").collect();
    let arabic = (1..=2).contains(&parts.len()) && parts.iter().all(|w| w.len() <= 5 && w.chars().all(|c| c.is_ascii_digit()));
    let roman = parts.len() == 1 && parts[0].len() <= 6 && parts[0].chars().all(|c| matches!(c, 'i' | 'v' | 'x' | 'l'));
    arabic || roman
}

fn missing_share(words: &[String], other: &HashSet<String>) -> f64 {
    words.iter().filter(|w| !other.contains(*w)).count() as f64 / words.len().max(1) as f64
}

fn check(pdf: &str, reference: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (doc, _) = read_document("doc", &root.join(pdf), ReadLimits::default()).expect(pdf);
    let mut ours = String::new();
    for section in &doc.sections {
        if let Some(heading) = &section.heading {
            ours.push_str(heading);
            ours.push('\n');
        }
        for block in &section.blocks {
            ours.push_str(&block.text);
            ours.push('\n');
        }
    }
    let theirs = without_page_furniture(&std::fs::read_to_string(root.join(reference)).expect(reference));
    let (ours, theirs) = (tokens(&ours), tokens(&theirs));
    assert!(ours.len() > 200 && theirs.len() > 200, "{pdf}: {} and {} words", ours.len(), theirs.len());
    let ours_set: HashSet<String> = ours.iter().cloned().collect();
    let theirs_set: HashSet<String> = theirs.iter().cloned().collect();
    let not_in_theirs: Vec<&String> = ours.iter().filter(|w| !theirs_set.contains(*w)).take(10).collect();
    let not_in_ours: Vec<&String> = theirs.iter().filter(|w| !ours_set.contains(*w)).take(10).collect();
    let (a, b) = (missing_share(&ours, &theirs_set), missing_share(&theirs, &ours_set));
    assert!(a < 0.001, "{pdf}: {:.3}% of our words are not in pdftotext's text, e.g. {not_in_theirs:?}", a * 100.0);
    assert!(b < 0.001, "{pdf}: {:.3}% of pdftotext's words are not in ours, e.g. {not_in_ours:?}", b * 100.0);
}

#[test]
fn pdftex_manual_with_ligatures_matches_pdftotext() {
    check("tests/fixtures/corpus/pdf/libtasn1.pdf", "tests/fixtures/corpus/pdf/libtasn1.pdftotext.txt");
}

/// Chromium writes digit widths in the `/W` range form pdf-extract misreads ("befor e").
#[test]
fn chromium_manual_with_cid_fonts_matches_pdftotext() {
    check("datasets/trailgear/pdf/sunvolt-1000.pdf", "tests/fixtures/corpus/pdf/sunvolt-1000.pdftotext.txt");
}

#[test]
fn libreoffice_manual_matches_pdftotext() {
    check("tests/fixtures/corpus/pdf/tarn-tent.pdf", "tests/fixtures/corpus/pdf/tarn-tent.pdftotext.txt");
}

/// A word hyphenated across a page break ("re-" / "leases"), with the page number and running
/// header between: read as one word, and the footer's number alone is not text lost.
#[test]
fn word_hyphenated_across_a_page_break_matches_pdftotext() {
    check("datasets/realdocs-hard/corpus/ReleaseNotes.pdf", "tests/fixtures/corpus/pdf/ReleaseNotes.pdftotext.txt");
}

/// InDesign (the OMB's FY2023 budget): summary tables set rotated on portrait pages, which read
/// letter by letter along the wrong axis ("Im p rov ea ccesstob eh a v iora l", 8.8% of the
/// words) until glyphs were laid out along their own baseline.
#[test]
fn indesign_budget_with_rotated_tables_matches_pdftotext() {
    check("datasets/budgets/corpus/omb-budget-fy2023.pdf", "tests/fixtures/corpus/pdf/omb-budget-fy2023.pdftotext.txt");
}

/// The same file's ToUnicode map reads the body font's capital E as "e" ("DOe"); the font's
/// encoding names the glyph "E", and the text keeps the capital. Case is outside the word
/// measure above (it lower-cases), so it is checked here.
#[test]
fn a_unicode_map_that_lowercases_a_capital_is_corrected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pdf = root.join("datasets/budgets/corpus/omb-budget-fy2023.pdf");
    let (doc, _) = read_document("omb", &pdf, ReadLimits::default()).expect("omb-budget-fy2023.pdf");
    let text: String = doc.sections.iter().flat_map(|s| s.blocks.iter().map(|b| b.text.as_str())).collect::<Vec<_>>().join("\n");
    assert!(text.contains("Department of Energy (DOE)"), "the capital E is lost");
    assert!(!text.contains("DOe"), "`DOe` is in the text");
}

/// Ghostscript (here groff's PDF of its pdfmark manual) starts justified lines with the `'`
/// operator, which pdf-extract skips, and kerns with a space glyph under negative word spacing.
/// Both are read as the page shows them: no lost line starts, no words split at the kern.
#[test]
fn ghostscript_quote_operator_and_space_kerning_read_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pdf = root.join("datasets/realdocs-hard/corpus/pdfmark.pdf");
    let (doc, _) = read_document("pdfmark", &pdf, ReadLimits::default()).expect("pdfmark.pdf");
    let text: Vec<&str> = doc.sections.iter().flat_map(|s| s.blocks.iter().map(|b| b.text.as_str())).collect();
    let flat = text.join("\n").split_whitespace().collect::<Vec<_>>().join(" ");
    for printed in [
        "To create a PDF bookmark",
        "To enable proper handling of page transitions",
        "however, if such space is required",
        "the user will rarely, if ever, invoke the pdfhref macro directly",
    ] {
        assert!(flat.contains(printed), "`{printed}` is not in the text");
    }
    for broken in ["howev er", "inv oke", " reate a PDF"] {
        assert!(!flat.contains(broken), "`{broken}` is in the text");
    }
}
