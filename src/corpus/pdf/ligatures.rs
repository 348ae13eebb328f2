//! Ligatures a PDF's font leaves without letters, put back from the document's own words.
//!
//! Some fonts draw "fi" or "ffi" as one glyph at a code that neither their ToUnicode map nor
//! their encoding names (Philip Morris International's 2022 annual report: a Type 1C font with
//! WinAnsi encoding whose text uses code 0x1F for "fi"). pdf-extract then gives U+0000, which
//! split "signi\0cant" and "Of\0cer" into two words each, lost to search. Others map the glyph
//! to U+FFFD, the replacement character (Word's Calibri "ti" in the DOE's FY2025 Budget in
//! Brief: "opera\u{FFFD}onalize", "en\u{FFFD}\u{FFFD}es"; pdftotext shows the same). Which
//! ligature it was cannot be read from the page, but the same word is almost always spelt out
//! elsewhere in the document (in a font that maps it): the candidates that make a word the
//! document uses win.

use std::collections::HashMap;

/// What an unmapped ligature glyph may stand for, most common first (the order ties keep).
const LIGATURES: [&str; 9] = ["fi", "fl", "ff", "ffi", "ffl", "ti", "tt", "tti", "ft"];

/// U+0000 falls back to "fi" when no candidate makes a known word (it was only ever seen for
/// fi-ligatures); U+FFFD, which any unmappable glyph may become, stays as it is.
const NUL_FALLBACK: &str = "fi";

/// More unknown glyphs than this in one word are left alone (9^3 spellings tried at most).
const MAX_UNKNOWN_IN_WORD: usize = 3;

/// Longer runs of letters are no words (crafted text): left alone, so one spelling costs at
/// most this many characters.
const MAX_WORD_CHARS: usize = 64;

/// Spellings tried in one document: real documents need a few thousand. Past this the
/// remaining unknown glyphs take the fallback without a search, so crafted text with an
/// unknown glyph in every word costs a bounded time.
const MAX_SPELLINGS_TRIED: usize = 1_000_000;

fn is_unknown(c: char) -> bool {
    c == '\0' || c == '\u{FFFD}'
}

/// Replace the unknown glyphs (U+0000, U+FFFD) inside words by the ligatures that make a word
/// found elsewhere in `pages`; see `NUL_FALLBACK` for words the document never spells out. A
/// U+0000 not touching a letter is dropped.
pub(crate) fn restore_unmapped_ligatures(pages: &mut [String]) {
    if !pages.iter().any(|p| p.contains(is_unknown)) {
        return;
    }
    let mut vocabulary: HashMap<String, usize> = HashMap::new();
    for page in pages.iter() {
        for word in page.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            *vocabulary.entry(word.to_lowercase()).or_default() += 1;
        }
    }
    let mut tries_left = MAX_SPELLINGS_TRIED;
    for page in pages.iter_mut() {
        if page.contains(is_unknown) {
            *page = restore_page(page, &vocabulary, &mut tries_left);
        }
    }
}

fn restore_page(page: &str, vocabulary: &HashMap<String, usize>, tries_left: &mut usize) -> String {
    let chars: Vec<char> = page.chars().collect();
    let mut out = String::with_capacity(page.len());
    let mut i = 0;
    while i < chars.len() {
        if !(chars[i].is_alphabetic() || is_unknown(chars[i])) {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let end = i + chars[i..].iter().take_while(|&&c| c.is_alphabetic() || is_unknown(c)).count();
        out.push_str(&restore_word(&chars[i..end], vocabulary, tries_left));
        i = end;
    }
    out
}

/// One run of letters and unknown glyphs: the spelling with the most uses in the document.
fn restore_word(word: &[char], vocabulary: &HashMap<String, usize>, tries_left: &mut usize) -> String {
    let unknown = word.iter().filter(|&&c| is_unknown(c)).count();
    if unknown == 0 {
        return word.iter().collect();
    }
    if unknown == word.len() {
        return word.iter().filter(|&&c| c != '\0').collect();
    }
    let mut best: Option<(usize, String)> = None;
    let combinations = LIGATURES.len().pow(unknown.min(MAX_UNKNOWN_IN_WORD + 1) as u32);
    if unknown <= MAX_UNKNOWN_IN_WORD && word.len() <= MAX_WORD_CHARS && combinations <= *tries_left {
        *tries_left -= combinations;
        // Every choice of a ligature per unknown glyph, in `LIGATURES` order so ties keep it.
        for n in 0..combinations {
            let mut pick = n;
            let mut spelling = String::new();
            for &c in word {
                if is_unknown(c) {
                    spelling.push_str(LIGATURES[pick % LIGATURES.len()]);
                    pick /= LIGATURES.len();
                } else {
                    spelling.push(c);
                }
            }
            let uses = vocabulary.get(&spelling.to_lowercase()).copied().unwrap_or(0);
            if uses > 0 && best.as_ref().is_none_or(|(most, _)| uses > *most) {
                best = Some((uses, spelling));
            }
        }
    }
    match best {
        Some((_, spelling)) => spelling,
        None => word.iter().map(|&c| if c == '\0' { NUL_FALLBACK.to_string() } else { c.to_string() }).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::restore_unmapped_ligatures;

    #[test]
    fn the_documents_own_spelling_decides_the_ligature() {
        let mut pages = vec![
            "Chief Financial Of\0cer and a signi\0cant \0 change".to_string(),
            "The officer reported significant flows; staff were ba\0ed.".to_string(),
        ];
        restore_unmapped_ligatures(&mut pages);
        assert_eq!(pages[0], "Chief Financial Officer and a significant  change");
        // No spelling elsewhere: the commonest ligature.
        assert_eq!(pages[1], "The officer reported significant flows; staff were bafied.");
    }

    #[test]
    fn replacement_characters_become_the_ligatures_the_document_spells_out() {
        let mut pages = vec![
            "we will opera\u{FFFD}onalize it with en\u{FFFD}\u{FFFD}es and \u{FFFD} alone; a\u{FFFD}xq".to_string(),
            "Operationalize the plan: public entities first.".to_string(),
        ];
        restore_unmapped_ligatures(&mut pages);
        // A word the document never spells out keeps its replacement character.
        assert_eq!(pages[0], "we will operationalize it with entities and \u{FFFD} alone; a\u{FFFD}xq");
    }

    #[test]
    fn crafted_text_costs_a_bounded_search() {
        // A long run of letters with unknown glyphs, and more unknown words than the budget
        // searches: each takes the fallback, in bounded time.
        let long = format!("{}\0{}", "a".repeat(10_000), "b".repeat(10_000));
        let many = "x\0y\0z\0 ".repeat(2_000);
        let mut pages = vec![long.clone(), many, "xfiyfizfi".to_string()];
        let started = std::time::Instant::now();
        restore_unmapped_ligatures(&mut pages);
        assert_eq!(pages[0], long.replace('\0', "fi"));
        assert!(pages[1].starts_with("xfiyfizfi xfiyfizfi"), "{}", &pages[1][..40]);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn pages_without_unmapped_glyphs_are_untouched() {
        let mut pages = vec!["ﬁne as it is".to_string()];
        restore_unmapped_ligatures(&mut pages);
        assert_eq!(pages[0], "ﬁne as it is");
    }
}
