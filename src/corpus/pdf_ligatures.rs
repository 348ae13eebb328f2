//! Ligatures a PDF's font leaves without letters, put back from the document's own words.
//!
//! Some fonts draw "fi" or "ffi" as one glyph at a code that neither their ToUnicode map nor
//! their encoding names (Philip Morris International's 2022 annual report: a Type 1C font with
//! WinAnsi encoding whose text uses code 0x1F for "fi"). pdf-extract then gives U+0000, which
//! split "signi\0cant" and "Of\0cer" into two words each, lost to search. Which ligature it was
//! cannot be read from the page, but the same word is almost always spelt out elsewhere in the
//! document (in a font that maps it): the candidate that makes a word the document uses wins.

use std::collections::HashMap;

/// What an unmapped ligature glyph usually stands for, most common first (the fallback order).
const LIGATURES: [&str; 5] = ["fi", "fl", "ff", "ffi", "ffl"];

/// Replace each U+0000 between letters by the ligature that makes a word found elsewhere in
/// `pages`, "fi" when none does; a U+0000 not touching a letter is dropped.
pub(crate) fn restore_unmapped_ligatures(pages: &mut [String]) {
    if !pages.iter().any(|p| p.contains('\0')) {
        return;
    }
    let mut vocabulary: HashMap<String, usize> = HashMap::new();
    for page in pages.iter() {
        for word in page.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            *vocabulary.entry(word.to_lowercase()).or_default() += 1;
        }
    }
    for page in pages.iter_mut() {
        if page.contains('\0') {
            *page = restore_page(page, &vocabulary);
        }
    }
}

fn restore_page(page: &str, vocabulary: &HashMap<String, usize>) -> String {
    let chars: Vec<char> = page.chars().collect();
    let mut out = String::with_capacity(page.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\0' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let before = chars[..i].iter().rev().take_while(|c| c.is_alphabetic()).count();
        let after = chars[i + 1..].iter().take_while(|c| c.is_alphabetic()).count();
        if before + after > 0 {
            let head: String = chars[i - before..i].iter().collect();
            let tail: String = chars[i + 1..i + 1 + after].iter().collect();
            let count = |ligature: &str| {
                vocabulary.get(&format!("{head}{ligature}{tail}").to_lowercase()).copied().unwrap_or(0)
            };
            // Most uses in the document; ties (and no use at all) keep the fallback order.
            let best = LIGATURES.iter().rev().max_by_key(|l| count(l)).filter(|l| count(l) > 0).unwrap_or(&LIGATURES[0]);
            out.push_str(best);
        }
        i += 1;
    }
    out
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
    fn pages_without_unmapped_glyphs_are_untouched() {
        let mut pages = vec!["ﬁne as it is".to_string()];
        restore_unmapped_ligatures(&mut pages);
        assert_eq!(pages[0], "ﬁne as it is");
    }
}
