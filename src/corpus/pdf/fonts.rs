//! Font widths rewritten into the shapes pdf-extract reads correctly, before it reads them.
//!
//! Glyph positions come from advancing by each glyph's width, so a wrong width shifts every
//! later glyph of the text run: words split where the run is positioned again ("befor e",
//! "sur ge") or run together. pdf-extract 0.12 reads a composite font's `/W` entry only in its
//! `c [w1 w2 …]` form: the `c_first c_last w` range form (Chromium writes it for digits; other
//! producers for ligatures and runs of letters) falls back to `/DW`, and a real-valued `/DW`
//! or a `/Widths` array whose length disagrees with `/FirstChar`..`/LastChar` makes it panic.
//! We rewrite those entries in the loaded document (the file is untouched); the fix belongs
//! upstream, and this file goes away once it lands there.

use pdf_extract::{Document, Object};

/// Width entries this file may spell out in one document, over all its fonts: one range may
/// cover 65,536 codes, and a file of a few KB can hold thousands of ranges or fonts sharing
/// one `/W` array (each rewritten for itself). Past this a font keeps its entry as written
/// (pdf-extract then falls back to `/DW`, as it did before this file).
const MAX_SPELLED_OUT_WIDTHS: usize = 1_000_000;

/// Normalise the width entries of every font in `doc`. Returns how many fonts were rewritten.
pub(crate) fn normalize_font_widths(doc: &mut Document) -> usize {
    let mut budget = MAX_SPELLED_OUT_WIDTHS;
    let fonts: Vec<_> = doc
        .objects
        .iter()
        .filter_map(|(id, object)| object.as_dict().ok().filter(|d| is_font(d)).map(|_| *id))
        .collect();
    let mut rewritten = 0;
    for id in fonts {
        let Ok(dict) = doc.get_object(id).and_then(Object::as_dict) else { continue };
        let w = dict.get(b"W").ok().and_then(|w| resolved_array(doc, w));
        let dw = dict.get(b"DW").ok().and_then(|dw| number(doc, dw));
        let widths = dict.get(b"Widths").ok().and_then(|w| resolved_array(doc, w));
        let first = dict.get(b"FirstChar").ok().and_then(|v| number(doc, v));
        let last = dict.get(b"LastChar").ok().and_then(|v| number(doc, v));
        let new_w = w.as_ref().and_then(|w| cid_widths_in_bracket_form(doc, w, &mut budget));
        let new_widths = match (&widths, first, last) {
            (Some(widths), Some(first), Some(last)) => simple_widths_fitted(doc, widths, first, last, &mut budget),
            _ => None,
        };
        let Ok(dict) = doc.get_object_mut(id).and_then(Object::as_dict_mut) else { continue };
        let mut changed = false;
        if let Some(new_w) = new_w {
            dict.set("W", Object::Array(new_w));
            changed = true;
        }
        if let Some(dw) = dw {
            // pdf-extract reads /DW as an integer only.
            if !matches!(dict.get(b"DW"), Ok(Object::Integer(_))) {
                dict.set("DW", Object::Integer(dw.round() as i64));
                changed = true;
            }
        }
        if let Some(new_widths) = new_widths {
            dict.set("Widths", Object::Array(new_widths));
            changed = true;
        }
        rewritten += usize::from(changed);
    }
    rewritten
}

fn is_font(dict: &pdf_extract::Dictionary) -> bool {
    matches!(dict.get(b"Type"), Ok(Object::Name(name)) if name == b"Font")
        || dict.has(b"W") && dict.has(b"CIDSystemInfo")
}

fn resolved_array(doc: &Document, object: &Object) -> Option<Vec<Object>> {
    let (_, object) = doc.dereference(object).ok()?;
    object.as_array().ok().cloned()
}

fn number(doc: &Document, object: &Object) -> Option<f64> {
    match doc.dereference(object).ok()?.1 {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

/// `/W` with every range `c_first c_last w` spelled out as `c_first [w w …]`, references
/// resolved; None when it has no range (nothing to fix) or cannot be read (left to pdf-extract,
/// which reports it). Ranges longer than `MAX_RANGE` are a broken file, not a font; a `/W`
/// that would spell out more than `budget` widths is left as it is.
fn cid_widths_in_bracket_form(doc: &Document, w: &[Object], budget: &mut usize) -> Option<Vec<Object>> {
    const MAX_RANGE: i64 = 65_536;
    let mut out = Vec::with_capacity(w.len());
    let mut had_range = false;
    let mut i = 0;
    while i < w.len() {
        let first = number(doc, &w[i])? as i64;
        match doc.dereference(w.get(i + 1)?).ok()?.1 {
            Object::Array(widths) => {
                let widths: Option<Vec<Object>> = widths.iter().map(|x| number(doc, x).map(real)).collect();
                out.push(Object::Integer(first));
                out.push(Object::Array(widths?));
                i += 2;
            }
            _ => {
                let last = number(doc, &w[i + 1])? as i64;
                let width = number(doc, w.get(i + 2)?)?;
                if last < first || last - first > MAX_RANGE {
                    return None;
                }
                let spelled = (last - first + 1) as usize;
                *budget = budget.checked_sub(spelled)?;
                out.push(Object::Integer(first));
                out.push(Object::Array((first..=last).map(|_| real(width)).collect()));
                had_range = true;
                i += 3;
            }
        }
    }
    had_range.then_some(out)
}

/// A simple font's `/Widths` padded with zeros or cut to `LastChar - FirstChar + 1` entries
/// (pdf-extract asserts the lengths agree); None when they already agree.
fn simple_widths_fitted(doc: &Document, widths: &[Object], first: f64, last: f64, budget: &mut usize) -> Option<Vec<Object>> {
    let wanted = (last - first + 1.0).max(0.0) as usize;
    if widths.len() == wanted || wanted > 65_536 {
        return None;
    }
    *budget = budget.checked_sub(wanted)?;
    let mut fitted: Vec<Object> = widths.iter().take(wanted).map(|w| real(number(doc, w).unwrap_or(0.0))).collect();
    fitted.resize(wanted, Object::Integer(0));
    Some(fitted)
}

fn real(value: f64) -> Object {
    Object::Real(value as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Object};

    #[test]
    fn ranges_are_spelled_out_and_brackets_kept() {
        let mut doc = Document::with_version("1.5");
        let w = vec![
            Object::Integer(0),
            Object::Array(vec![Object::Real(600.0), Object::Integer(0)]),
            Object::Integer(19),
            Object::Integer(21),
            Object::Real(636.25),
        ];
        let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "CIDFontType2", "W" => w, "DW" => Object::Real(500.0) });
        assert_eq!(normalize_font_widths(&mut doc), 1);
        let dict = doc.get_object(font).unwrap().as_dict().unwrap();
        let w = dict.get(b"W").unwrap().as_array().unwrap();
        assert_eq!(w.len(), 4);
        assert_eq!(w[2], Object::Integer(19));
        assert_eq!(w[3].as_array().unwrap(), &vec![Object::Real(636.25); 3]);
        assert_eq!(dict.get(b"DW").unwrap(), &Object::Integer(500));
        // Already in shape: nothing to do the second time.
        assert_eq!(normalize_font_widths(&mut doc), 0);
    }

    #[test]
    fn simple_widths_are_fitted_to_the_char_range() {
        let mut doc = Document::with_version("1.5");
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "FirstChar" => 32, "LastChar" => 35,
            "Widths" => vec![Object::Integer(250), Object::Integer(300)],
        });
        assert_eq!(normalize_font_widths(&mut doc), 1);
        let widths = doc.get_object(font).unwrap().as_dict().unwrap().get(b"Widths").unwrap().as_array().unwrap().len();
        assert_eq!(widths, 4);
    }

    #[test]
    fn spelled_out_widths_stop_at_the_document_budget() {
        let mut doc = Document::with_version("1.5");
        // One shared /W of 40 ranges of 65,536 codes: 2.6 million widths per font if spelled out.
        let ranges: Vec<Object> = (0..40).flat_map(|i| [Object::Integer(i * 65_536), Object::Integer(i * 65_536 + 65_535), Object::Integer(500)]).collect();
        let w = doc.add_object(Object::Array(ranges));
        for _ in 0..20 {
            doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "CIDFontType2", "W" => w });
        }
        assert_eq!(normalize_font_widths(&mut doc), 0);
        let small = doc.add_object(dictionary! { "Type" => "Font", "W" => vec![Object::Integer(1), Object::Integer(3), Object::Integer(9)] });
        assert_eq!(normalize_font_widths(&mut doc), 1);
        assert_eq!(doc.get_object(small).unwrap().as_dict().unwrap().get(b"W").unwrap().as_array().unwrap().len(), 2);
    }
}
