//! PDF: the text of each page, through pdf-extract (which places spaces from glyph positions,
//! so LaTeX output without space characters still reads as words).
//!
//! pdf-extract and lopdf can panic on malformed files; a panic is caught and reported as an
//! unreadable document (or page) so one bad manual never stops a corpus.

use crate::corpus::DocumentProblem;
use pdf_extract::{output_doc_page, MediaBox, OutputDev, OutputError, Transform};
use crate::third_party_panic::contain;
use unicode_normalization::UnicodeNormalization;

/// The raw text of each page (index 0 = page 1), and per-page warnings.
pub(crate) struct PdfText {
    pub pages: Vec<String>,
    pub warnings: Vec<DocumentProblem>,
}

/// The text a document may yield in all: a thousand-page manual has a few MB. Past this the
/// document is refused (pages that repeat one shared content stream, text drawn by nested
/// forms), since every later stage (sections, chunks, the index) multiplies its size.
pub(crate) const MAX_DOCUMENT_TEXT_BYTES: usize = 16 << 20;

/// Glyphs one page may draw: a dense page has a few thousand. Each is kept until the page is
/// laid out, so this bounds a page's memory (about 100 bytes a glyph).
const MAX_GLYPHS_PER_PAGE: usize = 1_000_000;

pub(crate) fn pdf_pages(bytes: &[u8]) -> Result<PdfText, DocumentProblem> {
    if !bytes.starts_with(b"%PDF") && !bytes[..bytes.len().min(1024)].windows(4).any(|w| w == b"%PDF") {
        return Err(DocumentProblem::PdfUnreadable { message: "no %PDF header".into() });
    }
    super::inflate::check_decoded_size(bytes, super::inflate::MAX_DECODED_BYTES)?;
    let mut doc = if super::decrypt::is_encrypted_file(bytes) {
        // Ciphertext in the file: its streams are counted once decrypted, before any decoding.
        let mut doc = super::decrypt::load_undecrypted(bytes)?;
        if doc.is_encrypted() {
            let budget = super::inflate::MAX_DECODED_BYTES;
            contain(|| super::decrypt::decrypt_within_budget(&mut doc, budget))
                .map_err(|panic| DocumentProblem::PdfUnreadable { message: reader_failed(&panic) })??;
        }
        doc
    } else {
        let loaded = contain(|| pdf_extract::Document::load_mem(bytes));
        match loaded {
            Ok(Ok(doc)) => doc,
            Ok(Err(e)) => return Err(DocumentProblem::PdfUnreadable { message: e.to_string() }),
            Err(panic) => return Err(DocumentProblem::PdfUnreadable { message: reader_failed(&panic) }),
        }
    };
    let guarded = |panic: String| DocumentProblem::PdfUnreadable { message: reader_failed(&panic) };
    // Image data is never text, but pdf-extract runs an image drawn with `Do` as if it were a
    // content stream: emptied, it costs nothing.
    contain(|| empty_images(&mut doc)).map_err(guarded)?;
    // Widths pdf-extract would misread shift glyphs and split words: put them in its shape.
    contain(|| super::fonts::normalize_font_widths(&mut doc)).map_err(guarded)?;
    let page_ids: Vec<pdf_extract::ObjectId> = contain(|| doc.get_pages().values().copied().collect()).map_err(guarded)?;
    if page_ids.is_empty() {
        return Err(DocumentProblem::PdfUnreadable { message: "no pages".into() });
    }
    // What drawing the pages will cost, through shared streams, nested forms and fonts.
    let verdicts = contain(|| super::drawing_work::check_drawing_work(&mut doc, &page_ids)).map_err(guarded)??;
    // A ToUnicode map that reads a drawn "E" as "e" would change the words' case.
    contain(|| super::unicode_maps::correct_letter_case_in_unicode_maps(&mut doc)).map_err(guarded)?;
    // Text shown by `'` and `"` would be lost: rewrite them into operators pdf-extract reads.
    contain(|| super::text_operators::expand_quote_operators(&mut doc)).map_err(guarded)?;
    let mut pages = Vec::with_capacity(page_ids.len());
    let mut warnings = Vec::new();
    let mut text_bytes = 0usize;
    let mut first_refused = None;
    for (index, refused) in verdicts.into_iter().enumerate() {
        let page = index as u32 + 1;
        if let Some(why) = refused {
            warnings.push(DocumentProblem::PdfPage { page, message: format!("{why}; not drawn") });
            first_refused.get_or_insert((page, why));
            pages.push(String::new());
            continue;
        }
        let extracted = contain(|| {
            let mut output = PageText::default();
            match output_doc_page(&doc, &mut output, page) {
                Ok(()) => Ok(output.text()),
                Err(_) if output.overflowed => Err(format!("it draws more than {MAX_GLYPHS_PER_PAGE} glyphs; not read")),
                Err(e) => Err(e.to_string()),
            }
        });
        let text = match extracted {
            Ok(Ok(text)) => text,
            Ok(Err(message)) => {
                warnings.push(DocumentProblem::PdfPage { page, message });
                String::new()
            }
            Err(panic) => {
                warnings.push(DocumentProblem::PdfPage { page, message: reader_failed(&panic) });
                String::new()
            }
        };
        text_bytes += text.len();
        if text_bytes > MAX_DOCUMENT_TEXT_BYTES {
            return Err(DocumentProblem::PdfUnreadable {
                message: format!(
                    "its text passes {} MiB by page {page} (pages repeating shared content?); not read",
                    MAX_DOCUMENT_TEXT_BYTES >> 20
                ),
            });
        }
        pages.push(plain_characters(&text));
    }
    // No text at all and pages that could not be drawn: why they could not is the document's
    // problem (a form drawing itself), not "no text".
    if pages.iter().all(|p| p.trim().is_empty()) {
        if let Some((page, why)) = first_refused {
            return Err(DocumentProblem::PdfUnreadable { message: format!("page {page}: {why}; not drawn") });
        }
    }
    contain(|| super::ligatures::restore_unmapped_ligatures(&mut pages)).map_err(guarded)?;
    Ok(PdfText { pages, warnings })
}

/// Empty the data of every image XObject (the text reader never needs it).
fn empty_images(doc: &mut pdf_extract::Document) {
    for object in doc.objects.values_mut() {
        if let pdf_extract::Object::Stream(stream) = object {
            if matches!(stream.dict.get(b"Subtype"), Ok(pdf_extract::Object::Name(s)) if s == b"Image") {
                stream.set_plain_content(Vec::new());
            }
        }
    }
}

/// NFKC turns typesetters' ligatures (U+FB01 "ﬁ") and compatibility forms into letters; the
/// typographic hyphens (U+2010, and U+2011 which NFKC folds into it) become the ASCII one users
/// type, as in pdftotext, so an InDesign PDF's "RET‐fusion" matches a question's "RET-fusion".
fn plain_characters(text: &str) -> String {
    text.nfkc().map(|c| if c == '\u{2010}' { '-' } else { c }).collect()
}

/// A gap between glyphs wider than this (in em of the font size) is a word break, whether or
/// not the page has space glyphs (poppler's pdftotext uses the same 0.1 em). Measured against
/// pdftotext on pdfTeX, xdvipdfmx and Chromium PDFs (README, PDF text): 0.2 em glued words
/// in tight justified lines and monospace text; a page-wide switch to 0.8 em on pages with any
/// space glyph glued whole lines. False gaps inside words came from misread font widths, which
/// `fonts` fixes before extraction, not from kerning.
const WORD_GAP_EM: f64 = 0.1;

/// A glyph in its line's own frame: `x` runs along the baseline in reading direction, `y` up
/// from it. For the usual upright text these are the page's coordinates; a landscape table
/// set rotated on a portrait page (OMB's budget tables) reads along the page's y axis.
struct Glyph {
    x: f64,
    y: f64,
    end: f64,
    size: f64,
    text: String,
}

/// Collects a page's glyphs; `text` lays them out once the whole page is known.
#[derive(Default)]
struct PageText {
    glyphs: Vec<Glyph>,
    /// Set once the page passed `MAX_GLYPHS_PER_PAGE`: its drawing stops with an error.
    overflowed: bool,
    /// The page's extent: text set beyond it (overlong lines) is not on the page. A glyph
    /// counts as beyond when its origin is, as in poppler: a word running off the edge is cut
    /// where the printed page cuts it.
    page_box: Option<PageBox>,
}

/// The page's media box, normalised so `left < right` and `bottom < top`.
#[derive(Clone, Copy)]
struct PageBox {
    left: f64,
    right: f64,
    bottom: f64,
    top: f64,
}

impl PageBox {
    /// Whether a glyph at `(x, y)` whose advance runs along `direction` is set past the page's
    /// edge in that direction (a line running off the page), or wholly before its start.
    fn excludes(&self, (x, y): (f64, f64), advance: f64, direction: (f64, f64)) -> bool {
        if direction.0.abs() >= direction.1.abs() {
            x > self.right || x + advance * direction.0.signum() < self.left
        } else {
            y > self.top || y + advance * direction.1.signum() < self.bottom
        }
    }
}

/// The unit vector of `(a, b)`, or `fallback` for a degenerate matrix.
fn unit((a, b): (f64, f64), fallback: (f64, f64)) -> (f64, f64) {
    let length = a.hypot(b);
    if length > 1e-9 {
        (a / length, b / length)
    } else {
        fallback
    }
}

impl PageText {
    /// Line breaks where the baseline moves, blank lines where it jumps by more than a line
    /// and a half, spaces from space glyphs or wide gaps.
    fn text(&self) -> String {
        let mut text = String::new();
        let mut space_pending = false;
        let mut last: Option<&Glyph> = None;
        // The last glyph with ink: a space glyph counts only where it leaves a gap after it.
        // Ghostscript kerns with a space glyph and negative word spacing ("ev e" drawn as
        // "eve"), so a space glyph alone does not make a word break.
        let mut last_ink: Option<&Glyph> = None;
        for glyph in &self.glyphs {
            let blank = glyph.text.trim().is_empty();
            if let Some(prev) = last {
                let size = glyph.size;
                let dy = (glyph.y - prev.y).abs();
                let gap_from_ink = last_ink.map_or(f64::INFINITY, |ink| glyph.x - ink.end);
                if dy > size * 1.5 {
                    text.push_str("\n\n");
                    space_pending = false;
                } else if dy > size * 0.5 || glyph.x < prev.end - size {
                    text.push('\n');
                    space_pending = false;
                } else if !blank
                    && ((space_pending && gap_from_ink > size * WORD_GAP_EM)
                        || glyph.x > ink_end(prev) + size * WORD_GAP_EM
                        || leaves_script(prev, glyph))
                {
                    text.push(' ');
                    space_pending = false;
                } else if !blank {
                    space_pending = false;
                }
            }
            if blank {
                space_pending = true;
            } else {
                text.push_str(&glyph.text);
                last_ink = Some(glyph);
            }
            last = Some(glyph);
        }
        text
    }
}

/// Where a glyph's ink ends, for the word-gap test. A font whose `/Widths` gives 0 for a glyph
/// it draws (subset fonts in Philip Morris International's 2022 annual report do, for the "W"
/// of "We" and the "T" of "Total") would put a word break after every such letter; such a glyph
/// is taken as `ZERO_WIDTH_GLYPH_EM` wide, as wide as the widest letters, so only a real gap
/// beyond it breaks the word. Letters and digits only: an accent drawn over the letter before
/// it is rightly without width.
fn ink_end(glyph: &Glyph) -> f64 {
    let advance = glyph.end - glyph.x;
    let letter = !glyph.text.is_empty() && glyph.text.chars().all(char::is_alphanumeric);
    if advance.abs() < 1e-9 && letter {
        glyph.x + glyph.size * ZERO_WIDTH_GLYPH_EM
    } else {
        glyph.end
    }
}

/// The width taken for a drawn glyph whose font claims it has none: a "W" is about 1 em.
const ZERO_WIDTH_GLYPH_EM: f64 = 1.0;

/// Back from a superscript or subscript to the line's own size and baseline: a word break, as
/// pdftotext reads it (a footnote mark before "the", "a11 x1" in a formula), even without a gap.
/// Only from a digit or small letter to a letter or digit: footnote marks and indices are
/// those, while a small raised capital is part of a word (the "A" of the LaTeX logo), an
/// accent set above its letter is neither, and a following "." or ")" belongs to what it
/// follows.
fn leaves_script(prev: &Glyph, glyph: &Glyph) -> bool {
    prev.size < glyph.size * 0.85
        && (glyph.y - prev.y).abs() > glyph.size * 0.15
        && !prev.text.is_empty()
        && prev.text.chars().all(|c| c.is_alphanumeric() && !c.is_uppercase())
        && glyph.text.chars().next().is_some_and(char::is_alphanumeric)
}

impl OutputDev for PageText {
    fn begin_page(&mut self, _: u32, media_box: &MediaBox, _: Option<(f64, f64, f64, f64)>) -> Result<(), OutputError> {
        let (left, right) = (media_box.llx.min(media_box.urx), media_box.llx.max(media_box.urx));
        let (bottom, top) = (media_box.lly.min(media_box.ury), media_box.lly.max(media_box.ury));
        self.page_box = (right > left && top > bottom).then_some(PageBox { left, right, bottom, top });
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(&mut self, trm: &Transform, width: f64, _spacing: f64, font_size: f64, glyph: &str) -> Result<(), OutputError> {
        // The glyph's scale: the square root of the matrix's area factor, which rotation leaves
        // alone (for upright text it is the font size times the text matrix's scale).
        let size = (font_size * font_size * (trm.m11 * trm.m22 - trm.m12 * trm.m21)).abs().sqrt().max(1e-6);
        let origin = (trm.m31, trm.m32);
        // The baseline runs along the matrix's first row: read every glyph in that frame, so
        // rotated text lays out like upright text. "Up" is square to it, not the matrix's
        // second row, which a glyph drawn flipped (a symbol font's arrow) turns over.
        let along = unit((trm.m11, trm.m12), (1.0, 0.0));
        let up = (-along.1, along.0);
        if let Some(page) = self.page_box {
            if page.excludes(origin, width * size, along) {
                return Ok(());
            }
        }
        if self.glyphs.len() >= MAX_GLYPHS_PER_PAGE {
            self.overflowed = true;
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        let x = origin.0 * along.0 + origin.1 * along.1;
        let y = origin.0 * up.0 + origin.1 * up.1;
        self.glyphs.push(Glyph { x, y, end: x + width * size, size, text: glyph.to_string() });
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

fn reader_failed(panic: &str) -> String {
    format!("the PDF reader failed: {panic}")
}

#[cfg(test)]
mod tests {
    use super::{plain_characters, Glyph, PageText};

    fn glyph(x: f64, width_em: f64, text: &str) -> Glyph {
        Glyph { x, y: 100.0, end: x + width_em * 8.0, size: 8.0, text: text.into() }
    }

    #[test]
    fn a_glyph_its_font_gives_no_width_does_not_end_the_word() {
        // "We": the W drawn with advance 0, the e placed 0.97 em after it (PMI's annual report).
        let we = PageText { glyphs: vec![glyph(64.8, 0.0, "W"), glyph(72.54, 0.565, "e")], page_box: None, overflowed: false };
        assert_eq!(we.text(), "We");
        // A real gap beyond a letter's width still breaks: "A" then a word 1.4 em on.
        let apart = PageText { glyphs: vec![glyph(10.0, 0.0, "A"), glyph(21.2, 0.5, "b")], page_box: None, overflowed: false };
        assert_eq!(apart.text(), "A b");
    }

    #[test]
    fn ligatures_become_letters_and_typographic_hyphens_ascii() {
        assert_eq!(plain_characters("e\u{FB00}ect of\u{FB01}cer"), "effect officer");
        assert_eq!(plain_characters("RET\u{2010}fusion, Dana\u{2011}Farber"), "RET-fusion, Dana-Farber");
        // Dashes and the minus sign are not hyphens: they keep their meaning.
        assert_eq!(plain_characters("5\u{2013}10 \u{2212}3"), "5\u{2013}10 \u{2212}3");
    }
}
