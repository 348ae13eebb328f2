//! The text-showing operators pdf-extract does not know, rewritten into ones it does, before
//! it reads the pages.
//!
//! pdf-extract 0.12 interprets `Tj` and `TJ` but skips `'` (next line, then show a string)
//! and `"` (set word and character spacing, next line, show): the text they show is lost.
//! Ghostscript writes `'` at the start of justified lines (groff's PDFs lose "To c" of "To
//! create", "A l" of "A list"). Rewriting them as `T*` + `Tj` (and `Tw`, `Tc` for `"`) is
//! exactly their meaning in the PDF specification (9.4.3). The document in memory is changed,
//! never the file; the fix belongs upstream, and this file goes away once it lands there.

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Document, Object, ObjectId};

/// Rewrite `'` and `"` in every page's content and every form XObject. Returns how many
/// operators were rewritten.
pub(crate) fn expand_quote_operators(doc: &mut Document) -> usize {
    let mut rewritten = 0;
    let pages: Vec<ObjectId> = doc.get_pages().values().copied().collect();
    for page in pages {
        let Ok(bytes) = doc.get_page_content(page) else { continue };
        if let Some((content, n)) = expanded(&bytes) {
            if doc.change_page_content(page, content).is_ok() {
                rewritten += n;
            }
        }
    }
    let forms: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter_map(|(id, o)| match o {
            Object::Stream(s) if s.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Form") => Some(*id),
            _ => None,
        })
        .collect();
    for id in forms {
        let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) else { continue };
        let bytes = match stream.decompressed_content() {
            Ok(b) => b,
            Err(_) => stream.content.clone(),
        };
        if let Some((content, n)) = expanded(&bytes) {
            stream.set_plain_content(content);
            rewritten += n;
        }
    }
    rewritten
}

/// The content with `'` and `"` expanded, or None when it has none (or does not parse: then
/// pdf-extract reports it as it would have).
fn expanded(bytes: &[u8]) -> Option<(Vec<u8>, usize)> {
    // Cheap test first: most content streams have neither byte outside strings.
    if !bytes.iter().any(|&b| b == b'\'' || b == b'"') {
        return None;
    }
    let content = Content::decode(bytes).ok()?;
    let mut n = 0;
    let mut operations = Vec::with_capacity(content.operations.len());
    for op in content.operations {
        match (op.operator.as_str(), op.operands.as_slice()) {
            ("'", [text]) => {
                n += 1;
                operations.push(Operation::new("T*", vec![]));
                operations.push(Operation::new("Tj", vec![text.clone()]));
            }
            ("\"", [word_spacing, char_spacing, text]) => {
                n += 1;
                operations.push(Operation::new("Tw", vec![word_spacing.clone()]));
                operations.push(Operation::new("Tc", vec![char_spacing.clone()]));
                operations.push(Operation::new("T*", vec![]));
                operations.push(Operation::new("Tj", vec![text.clone()]));
            }
            _ => operations.push(op),
        }
    }
    if n == 0 {
        return None;
    }
    Content { operations }.encode().ok().map(|bytes| (bytes, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operators(bytes: &[u8]) -> Vec<String> {
        Content::decode(bytes).unwrap().operations.into_iter().map(|o| o.operator).collect()
    }

    #[test]
    fn quote_operators_become_next_line_and_show() {
        let (out, n) = expanded(b"BT 12 TL (First) Tj (To c) ' 1 0.5 (second) \" ET").unwrap();
        assert_eq!(n, 2);
        assert_eq!(operators(&out), ["BT", "TL", "Tj", "T*", "Tj", "Tw", "Tc", "T*", "Tj", "ET"]);
        let shown: Vec<Vec<u8>> = Content::decode(&out)
            .unwrap()
            .operations
            .into_iter()
            .filter(|o| o.operator == "Tj")
            .filter_map(|o| o.operands[0].as_str().ok().map(<[u8]>::to_vec))
            .collect();
        assert_eq!(shown, [b"First".to_vec(), b"To c".to_vec(), b"second".to_vec()]);
    }

    #[test]
    fn content_without_them_is_left_alone() {
        assert!(expanded(b"BT (it's) Tj ET").is_none());
        assert!(expanded(b"BT (plain) Tj ET").is_none());
    }
}
