//! What pdf-extract will do to draw each page, counted before it starts, so that sharing and
//! nesting cannot multiply a small file into unbounded work.
//!
//! pdf-extract draws a page by running its content stream; a `Do` runs a Form XObject's stream
//! by recursion, without a depth limit (a form that draws itself overflows the stack, which
//! aborts the process: no panic guard can catch it), and a form drawn ten times by a form drawn
//! ten times is run a hundred times. Every page that names one content stream runs it again,
//! and every font a page uses is loaded again for that page, building its ToUnicode map and
//! width table anew (one 64K-entry map shared by 50 fonts was 459 MB). So each stream and each
//! font is counted once per use, the way pdf-extract will meet it:
//! - forms nested deeper than `MAX_FORM_DEPTH`, or drawing themselves, make their page
//!   unreadable (a warning; the page is not drawn);
//! - the content bytes all pages run, through every form each use draws, and the font map
//!   entries all pages build, have a budget per document; past it the document is refused.
//!
//! Pages also inherit `/Resources` and `/MediaBox` from their parents, which pdf-extract looks
//! up by recursion with no guard against a `/Parent` loop: both are written on each page here,
//! found through at most `MAX_PARENT_STEPS` parents.

use crate::corpus::DocumentProblem;
use pdf_extract::{Dictionary, Document, Object, ObjectId};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Real documents nest forms a few levels deep; each level is one recursive call in
/// pdf-extract, whose frames are large in a debug build.
pub(crate) const MAX_FORM_DEPTH: usize = 12;
/// Content bytes drawn, counted once per use, in one document: ten times a large manual's.
pub(crate) const MAX_DRAWN_CONTENT_BYTES: u64 = 256 << 20;
/// Form XObjects drawn in one document, counted once per use: pdf-extract decodes and parses a
/// form's stream again for each, and a form drawn ten times by a form drawn ten times is a
/// hundred uses. Real documents draw a logo or a few forms per page.
pub(crate) const MAX_FORM_USES: u64 = 200_000;
/// Font map entries (ToUnicode codes, widths) built for one page: a CJK page with dozens of
/// full fonts stays far below.
pub(crate) const MAX_FONT_ENTRIES_PER_PAGE: u64 = 1_000_000;
/// Font map entries built for the whole document, counted per page as pdf-extract rebuilds
/// them.
pub(crate) const MAX_FONT_ENTRIES: u64 = 32_000_000;
const MAX_PARENT_STEPS: usize = 64;
/// The page size used where a page and its parents give none (US Letter).
const DEFAULT_MEDIA_BOX: [i64; 4] = [0, 0, 612, 792];

/// Per page (in `pages` order): None when it may be drawn, or why not.
pub(crate) type PageVerdicts = Vec<Option<String>>;

/// Write inherited resources and page sizes on each page, then count the work of drawing
/// every page. Err when the document as a whole passes a budget.
pub(crate) fn check_drawing_work(doc: &mut Document, pages: &[ObjectId]) -> Result<PageVerdicts, DocumentProblem> {
    write_inherited_attributes(doc, pages);
    let mut counter = WorkCounter { doc, streams: HashMap::new(), fonts: HashMap::new(), drawn: 0, form_uses: 0, font_entries: 0 };
    let mut verdicts = Vec::with_capacity(pages.len());
    for &page in pages {
        verdicts.push(counter.count_page(page)?);
    }
    Ok(verdicts)
}

/// Copy `/Resources` and `/MediaBox` onto each page from its nearest parent that has them.
fn write_inherited_attributes(doc: &mut Document, pages: &[ObjectId]) {
    for &page in pages {
        let mut found: [Option<Object>; 2] = [None, None];
        let mut node = page;
        for _ in 0..MAX_PARENT_STEPS {
            let Ok(dict) = doc.get_dictionary(node) else { break };
            for (slot, key) in found.iter_mut().zip([b"Resources".as_slice(), b"MediaBox"]) {
                if slot.is_none() {
                    *slot = dict.get(key).ok().cloned();
                }
            }
            match dict.get(b"Parent").and_then(Object::as_reference) {
                Ok(parent) if found.iter().any(Option::is_none) => node = parent,
                _ => break,
            }
        }
        let [resources, media_box] = found;
        let Ok(dict) = doc.get_dictionary_mut(page) else { continue };
        dict.set("Resources", resources.unwrap_or_else(|| Object::Dictionary(Dictionary::new())));
        dict.set("MediaBox", media_box.unwrap_or_else(|| DEFAULT_MEDIA_BOX.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>().into()));
    }
}

/// One content stream as far as the count needs it: its decoded length and the names it draws.
struct ContentSummary {
    length: u64,
    drawn_names: Vec<Vec<u8>>,
}

struct WorkCounter<'a> {
    doc: &'a Document,
    streams: HashMap<ObjectId, Rc<ContentSummary>>,
    fonts: HashMap<ObjectId, u64>,
    drawn: u64,
    form_uses: u64,
    font_entries: u64,
}

/// Where a page's count stops: a problem with the page, or with the whole document.
enum Stop {
    Page(String),
    Document(DocumentProblem),
}

impl WorkCounter<'_> {
    fn count_page(&mut self, page: ObjectId) -> Result<Option<String>, DocumentProblem> {
        let doc = self.doc;
        let Ok(dict) = doc.get_dictionary(page) else { return Ok(None) };
        let resources = dict.get(b"Resources").ok().and_then(|r| doc.dereference(r).ok()).and_then(|(_, r)| r.as_dict().ok());
        let mut page_fonts = HashSet::new();
        let mut page_font_entries = 0u64;
        let mut path = Vec::new();
        let mut result = Ok(());
        for content in doc.get_page_contents(page) {
            result = self.count_stream(content, resources, 0, &mut path, &mut page_fonts, &mut page_font_entries);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() && dict.get(b"Contents").is_ok() {
            result = self.count_fonts(resources, &mut page_fonts, &mut page_font_entries);
        }
        match result {
            Ok(()) => Ok(None),
            Err(Stop::Page(why)) => Ok(Some(why)),
            Err(Stop::Document(problem)) => Err(problem),
        }
    }

    /// Count one use of the stream `id` drawn with `resources`, and every form it draws.
    fn count_stream(
        &mut self,
        id: ObjectId,
        resources: Option<&Dictionary>,
        depth: usize,
        path: &mut Vec<ObjectId>,
        page_fonts: &mut HashSet<ObjectId>,
        page_font_entries: &mut u64,
    ) -> Result<(), Stop> {
        let doc = self.doc;
        if path.contains(&id) {
            return Err(Stop::Page(format!("a Form XObject ({} {} R) draws itself", id.0, id.1)));
        }
        if depth > MAX_FORM_DEPTH {
            return Err(Stop::Page(format!("Form XObjects nest deeper than {MAX_FORM_DEPTH} levels")));
        }
        let summary = self.summary(id);
        self.drawn += summary.length;
        if depth > 0 {
            self.form_uses += 1;
            if self.form_uses > MAX_FORM_USES {
                return Err(Stop::Document(DocumentProblem::PdfUnreadable {
                    message: format!("its pages draw Form XObjects more than {MAX_FORM_USES} times (forms drawing forms?); not read"),
                }));
            }
        }
        if self.drawn > MAX_DRAWN_CONTENT_BYTES {
            return Err(Stop::Document(DocumentProblem::PdfUnreadable {
                message: format!(
                    "its pages draw more than {} MiB of content (streams shared by many pages or forms?); not read",
                    MAX_DRAWN_CONTENT_BYTES >> 20
                ),
            }));
        }
        if depth > 0 {
            self.count_fonts(resources, page_fonts, page_font_entries)?;
        }
        let xobjects = resources.and_then(|r| dictionary_entry(doc, r, b"XObject"));
        path.push(id);
        for name in &summary.drawn_names {
            let Some(target) = xobjects.and_then(|x| x.get(name).ok()).and_then(|o| o.as_reference().ok()) else { continue };
            let Ok(Object::Stream(form)) = doc.get_object(target) else { continue };
            if !matches!(form.dict.get(b"Subtype"), Ok(Object::Name(s)) if s == b"Form") {
                continue;
            }
            // pdf-extract draws a form with its own resources, else with its caller's.
            let own = form.dict.get(b"Resources").ok().and_then(|r| doc.dereference(r).ok()).and_then(|(_, r)| r.as_dict().ok());
            self.count_stream(target, own.or(resources), depth + 1, path, page_fonts, page_font_entries)?;
        }
        path.pop();
        Ok(())
    }

    /// The stream's decoded length and the names its `Do` operators draw, read once.
    fn summary(&mut self, id: ObjectId) -> Rc<ContentSummary> {
        let doc = self.doc;
        let summary = self.streams.entry(id).or_insert_with(|| {
            Rc::new(match doc.get_object(id) {
                Ok(Object::Stream(stream)) => {
                    // The document's streams passed the decoded-size budget before it was loaded.
                    let content = stream.decompressed_content().unwrap_or_else(|_| stream.content.clone());
                    ContentSummary { length: content.len() as u64, drawn_names: drawn_names(&content) }
                }
                _ => ContentSummary { length: 0, drawn_names: Vec::new() },
            })
        });
        summary.clone()
    }

    /// Count the fonts of `resources` not yet counted for this page.
    fn count_fonts(&mut self, resources: Option<&Dictionary>, page_fonts: &mut HashSet<ObjectId>, page_entries: &mut u64) -> Result<(), Stop> {
        let doc = self.doc;
        let Some(fonts) = resources.and_then(|r| dictionary_entry(doc, r, b"Font")) else { return Ok(()) };
        for (_, font) in fonts.iter() {
            let Ok(id) = font.as_reference() else { continue };
            if !page_fonts.insert(id) {
                continue;
            }
            let entries = *self.fonts.entry(id).or_insert_with(|| font_entries(doc, id));
            *page_entries += entries;
            self.font_entries += entries;
            if *page_entries > MAX_FONT_ENTRIES_PER_PAGE {
                return Err(Stop::Page(format!(
                    "its fonts' character maps and widths expand to more than {MAX_FONT_ENTRIES_PER_PAGE} entries"
                )));
            }
            if self.font_entries > MAX_FONT_ENTRIES {
                return Err(Stop::Document(DocumentProblem::PdfUnreadable {
                    message: format!(
                        "its pages' fonts expand to more than {MAX_FONT_ENTRIES} character map and width entries (maps shared by many fonts or pages?); not read"
                    ),
                }));
            }
        }
        Ok(())
    }
}

/// A dictionary entry, through a reference.
fn dictionary_entry<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    let (_, object) = doc.dereference(dict.get(key).ok()?).ok()?;
    object.as_dict().ok()
}

/// The entries pdf-extract builds for a font: its ToUnicode map's codes and its width table.
fn font_entries(doc: &Document, font: ObjectId) -> u64 {
    let Ok(dict) = doc.get_dictionary(font) else { return 0 };
    let mut entries = 0u64;
    if let Some(Object::Stream(map)) = dict.get(b"ToUnicode").ok().and_then(|m| doc.dereference(m).ok()).map(|(_, m)| m) {
        let content = map.decompressed_content().unwrap_or_else(|_| map.content.clone());
        entries = entries.saturating_add(unicode_map_entries(&content));
    }
    entries = entries.saturating_add(array_len(doc, dict.get(b"Widths").ok()));
    let descendant = dict
        .get(b"DescendantFonts")
        .ok()
        .and_then(|d| doc.dereference(d).ok())
        .and_then(|(_, d)| d.as_array().ok())
        .and_then(|d| d.first())
        .and_then(|d| doc.dereference(d).ok())
        .and_then(|(_, d)| d.as_dict().ok());
    if let Some(cid_font) = descendant {
        if let Some(Object::Array(w)) = cid_font.get(b"W").ok().and_then(|w| doc.dereference(w).ok()).map(|(_, w)| w) {
            for item in w {
                entries = entries.saturating_add(array_len(doc, Some(item)).max(1));
            }
        }
    }
    entries
}

fn array_len(doc: &Document, object: Option<&Object>) -> u64 {
    object
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_array().ok())
        .map_or(0, |a| a.len() as u64)
}

/// How many codes a ToUnicode CMap defines: each `bfrange` spans `hi - lo + 1` codes (the
/// CMap parser makes one entry per code), each `bfchar` pair one.
pub(crate) fn unicode_map_entries(cmap: &[u8]) -> u64 {
    let mut entries = 0u64;
    let mut in_range = false;
    let mut in_char = false;
    let mut hex: Vec<u64> = Vec::new();
    let mut i = 0;
    while i < cmap.len() {
        let c = cmap[i];
        if c == b'<' {
            let end = cmap[i + 1..].iter().position(|&b| b == b'>').map_or(cmap.len(), |p| i + 1 + p);
            let digits: Vec<u8> = cmap[i + 1..end].iter().copied().filter(u8::is_ascii_hexdigit).collect();
            // Codes of more than four bytes are out of the parser's u32: count them as the most.
            let value = if digits.len() > 8 { u64::from(u32::MAX) } else { u64::from_str_radix(std::str::from_utf8(&digits).unwrap_or("0"), 16).unwrap_or(0) };
            hex.push(value);
            i = end + 1;
            continue;
        }
        if c == b'[' && in_range {
            // The destination array of a range: its codes are the range's own.
            let end = cmap[i..].iter().position(|&b| b == b']').map_or(cmap.len(), |p| i + p);
            hex.push(0);
            i = end + 1;
            continue;
        }
        if c.is_ascii_alphabetic() {
            let end = cmap[i..].iter().position(|b| !b.is_ascii_alphabetic()).map_or(cmap.len(), |p| i + p);
            match &cmap[i..end] {
                b"beginbfrange" => (in_range, in_char) = (true, false),
                b"beginbfchar" => (in_range, in_char) = (false, true),
                b"endbfrange" | b"endbfchar" => (in_range, in_char) = (false, false),
                _ => {}
            }
            hex.clear();
            i = end;
            continue;
        }
        if in_range && hex.len() == 3 {
            if hex[1] >= hex[0] {
                entries = entries.saturating_add(hex[1] - hex[0] + 1);
            }
            hex.clear();
        }
        if in_char && hex.len() == 2 {
            entries = entries.saturating_add(1);
            hex.clear();
        }
        i += 1;
    }
    if in_range && hex.len() == 3 && hex[1] >= hex[0] {
        entries = entries.saturating_add(hex[1] - hex[0] + 1);
    }
    entries
}

/// The names a content stream draws with `Do` (a name token right before the operator).
/// Strings, hex strings and comments are skipped so that text cannot fake one.
fn drawn_names(content: &[u8]) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    let mut last_name: Option<&[u8]> = None;
    let mut i = 0;
    while i < content.len() {
        let c = content[i];
        match c {
            b'(' => {
                let mut depth = 0usize;
                while i < content.len() {
                    match content[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                last_name = None;
                i += 1;
            }
            b'<' | b'%' => {
                let stop: &[u8] = if c == b'<' { b">" } else { b"\r\n" };
                i += content[i..].iter().position(|b| stop.contains(b)).unwrap_or(content.len() - i) + 1;
                last_name = None;
            }
            b'/' => {
                let start = i + 1;
                let end = content[start..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || b"/[]<>(){}%".contains(b))
                    .map_or(content.len(), |p| start + p);
                last_name = Some(&content[start..end]);
                i = end;
            }
            _ if c.is_ascii_whitespace() => i += 1,
            _ => {
                let end = content[i..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || b"/[]<>(){}%".contains(b))
                    .map_or(content.len(), |p| i + p)
                    .max(i + 1);
                if &content[i..end] == b"Do" {
                    if let Some(name) = last_name {
                        names.push(name.to_vec());
                    }
                }
                last_name = None;
                i = end;
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_names_skip_strings_and_comments() {
        let content = b"q /Im1 Do Q BT (/Fake Do) Tj ET % /Hidden Do\n/Fm2 Do <2F58> Do";
        assert_eq!(drawn_names(content), vec![b"Im1".to_vec(), b"Fm2".to_vec()]);
    }

    #[test]
    fn unicode_maps_count_every_code_a_range_spans() {
        let cmap = b"2 beginbfchar <01> <0041> <02> <0042> endbfchar\n2 beginbfrange <0000> <FFFF> <0000> <10> <12> [<0041> <0042> <0043>] endbfrange";
        assert_eq!(unicode_map_entries(cmap), 2 + 65_536 + 3);
        assert_eq!(unicode_map_entries(b"1 beginbfrange <00000000> <FFFFFFFF> <0000> endbfrange"), 1 << 32);
    }
}
