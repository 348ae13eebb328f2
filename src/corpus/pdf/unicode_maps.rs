//! A simple font's ToUnicode map corrected where it contradicts the font's own encoding on the
//! case of a letter, before pdf-extract reads it.
//!
//! The OMB's FY2023 budget (InDesign 17) maps the code of the capital "E" of its body font to
//! "e" in the ToUnicode map, while the font's encoding (WinAnsi) names that code "E": every
//! "DOE" read "DOe", every sentence-initial "Every" "every". pdf-extract, like the PDF
//! specification, lets the ToUnicode map win. Where the encoding names a code as a plain ASCII
//! letter and the map gives the same letter in the other case, we trust the glyph name (it
//! says what is drawn); every other entry is left as the producer wrote it.

use pdf_extract::{Document, Object};

/// Correct the ToUnicode maps of every simple font in `doc`. Returns how many maps changed.
pub(crate) fn correct_letter_case_in_unicode_maps(doc: &mut Document) -> usize {
    let mut fixes: Vec<(pdf_extract::ObjectId, Vec<u8>)> = Vec::new();
    // One map may serve thousands of fonts: it is decoded and corrected once, by the first.
    let mut seen = std::collections::HashSet::new();
    for object in doc.objects.values() {
        let Ok(font) = object.as_dict() else { continue };
        if !is_simple_font(font) {
            continue;
        }
        let Some(letters) = encoded_letters(doc, font) else { continue };
        let Ok(Object::Reference(map_id)) = font.get(b"ToUnicode") else { continue };
        if !seen.insert(*map_id) {
            continue;
        }
        let Ok(Object::Stream(map)) = doc.get_object(*map_id) else { continue };
        let Ok(content) = map.get_plain_content() else { continue };
        if let Some(corrected) = corrected_map(&content, &letters) {
            fixes.push((*map_id, corrected));
        }
    }
    let changed = fixes.len();
    for (id, content) in fixes {
        if let Ok(Object::Stream(stream)) = doc.get_object_mut(id) {
            stream.set_plain_content(content);
        }
    }
    changed
}

fn is_simple_font(dict: &pdf_extract::Dictionary) -> bool {
    matches!(dict.get(b"Type"), Ok(Object::Name(name)) if name == b"Font")
        && matches!(dict.get(b"Subtype"), Ok(Object::Name(s)) if matches!(s.as_slice(), b"Type1" | b"TrueType" | b"MMType1"))
}

/// The ASCII letter each single-byte code draws, by the font's `/Encoding`: one of the
/// standard encodings (where codes 0x41–0x5A and 0x61–0x7A are the letters themselves) with
/// its `/Differences`. None when the font has no such encoding (a built-in one would need
/// the font program).
fn encoded_letters(doc: &Document, font: &pdf_extract::Dictionary) -> Option<[Option<u8>; 256]> {
    let encoding = doc.dereference(font.get(b"Encoding").ok()?).ok()?.1;
    let (base, differences) = match encoding {
        Object::Name(name) => (Some(name.as_slice()), None),
        Object::Dictionary(dict) => (
            dict.get(b"BaseEncoding").ok().and_then(|b| b.as_name().ok()),
            dict.get(b"Differences").ok().and_then(|d| doc.dereference(d).ok()).and_then(|(_, d)| d.as_array().ok()),
        ),
        _ => return None,
    };
    if !matches!(base, Some(b"WinAnsiEncoding" | b"MacRomanEncoding" | b"StandardEncoding") | None) {
        return None;
    }
    let mut letters = [None; 256];
    for code in (b'A'..=b'Z').chain(b'a'..=b'z') {
        letters[code as usize] = Some(code);
    }
    let mut code = 0usize;
    for entry in differences.into_iter().flatten() {
        match entry {
            Object::Integer(start) => code = usize::try_from(*start).unwrap_or(usize::MAX),
            Object::Name(name) => {
                if code < 256 {
                    letters[code] = match name.as_slice() {
                        [c] if c.is_ascii_alphabetic() => Some(*c),
                        _ => None,
                    };
                }
                code = code.saturating_add(1);
            }
            _ => {}
        }
    }
    Some(letters)
}

/// The map with each `bfchar` entry `<XX> <00yy>` whose code draws letter L and whose target
/// is L in the other case rewritten to L; None when no entry needs it.
fn corrected_map(content: &[u8], letters: &[Option<u8>; 256]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(content).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(start) = rest.find("beginbfchar") {
        let body_start = start + "beginbfchar".len();
        let Some(body_len) = rest[body_start..].find("endbfchar") else { break };
        out.push_str(&rest[..body_start]);
        let body = &rest[body_start..body_start + body_len];
        out.push_str(&corrected_bfchar_body(body, letters, &mut changed));
        rest = &rest[body_start + body_len..];
    }
    out.push_str(rest);
    changed.then(|| out.into_bytes())
}

/// One `bfchar` section's pairs of hex strings, corrected in place.
fn corrected_bfchar_body(body: &str, letters: &[Option<u8>; 256], changed: &mut bool) -> String {
    let tokens: Vec<&str> = body.split_whitespace().collect();
    if tokens.len() % 2 != 0 || !tokens.iter().all(|t| t.starts_with('<') && t.ends_with('>')) {
        return body.to_string();
    }
    let mut out = String::from("\n");
    for pair in tokens.chunks(2) {
        let (source, target) = (pair[0], pair[1]);
        let mapped = match (hex_value(source), hex_value(target)) {
            (Some(code), Some(unit)) if source.len() == 4 && target.len() == 6 => {
                letters.get(code as usize).copied().flatten().filter(|&letter| {
                    let drawn = char::from(letter);
                    char::from_u32(unit).is_some_and(|c| c != drawn && c.eq_ignore_ascii_case(&drawn))
                })
            }
            _ => None,
        };
        match mapped {
            Some(letter) => {
                *changed = true;
                out.push_str(&format!("{source} <{:04X}>\n", letter));
            }
            None => out.push_str(&format!("{source} {target}\n")),
        }
    }
    out
}

fn hex_value(token: &str) -> Option<u32> {
    u32::from_str_radix(token.strip_prefix('<')?.strip_suffix('>')?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::corrected_map;

    fn winansi_letters() -> [Option<u8>; 256] {
        let mut letters = [None; 256];
        for code in (b'A'..=b'Z').chain(b'a'..=b'z') {
            letters[code as usize] = Some(code);
        }
        letters
    }

    #[test]
    fn a_capital_mapped_to_its_small_letter_is_read_as_the_capital() {
        let map = b"2 beginbfchar\n<44> <0044>\n<45> <0065>\nendbfchar\n";
        let corrected = corrected_map(map, &winansi_letters()).expect("one entry to correct");
        let text = String::from_utf8(corrected).expect("ASCII");
        assert!(text.contains("<45> <0045>"), "{text}");
        assert!(text.contains("<44> <0044>"), "{text}");
    }

    #[test]
    fn maps_that_agree_or_name_other_letters_are_left_alone() {
        // A ligature, a letter mapped to another letter (not a case slip) and agreeing entries.
        let map = b"3 beginbfchar\n<1F> <00660069>\n<41> <0042>\n<61> <0061>\nendbfchar\n";
        assert!(corrected_map(map, &winansi_letters()).is_none());
    }
}
