//! PDF: the text of each page, through pdf-extract (which places spaces from glyph positions,
//! so LaTeX output without space characters still reads as words).
//!
//! pdf-extract and lopdf can panic on malformed files; a panic is caught and reported as an
//! unreadable document (or page) so one bad manual never stops a corpus.

use super::DocumentProblem;
use pdf_extract::{output_doc_page, PlainTextOutput};
use std::panic::{catch_unwind, AssertUnwindSafe};
use unicode_normalization::UnicodeNormalization;

/// The raw text of each page (index 0 = page 1), and per-page warnings.
pub(crate) struct PdfText {
    pub pages: Vec<String>,
    pub warnings: Vec<DocumentProblem>,
}

pub(crate) fn pdf_pages(bytes: &[u8]) -> Result<PdfText, DocumentProblem> {
    if !bytes.starts_with(b"%PDF") && !bytes[..bytes.len().min(1024)].windows(4).any(|w| w == b"%PDF") {
        return Err(DocumentProblem::PdfUnreadable { message: "no %PDF header".into() });
    }
    let loaded = catch_unwind(AssertUnwindSafe(|| pdf_extract::Document::load_mem(bytes)));
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(DocumentProblem::PdfUnreadable { message: e.to_string() }),
        Err(panic) => {
            return Err(DocumentProblem::PdfUnreadable { message: panic_message(&panic) })
        }
    };
    if doc.is_encrypted() {
        // Most "protected" PDFs only have an owner password and open with an empty user one.
        let decrypted = catch_unwind(AssertUnwindSafe(|| doc.decrypt("")));
        if !matches!(decrypted, Ok(Ok(()))) {
            return Err(DocumentProblem::Encrypted);
        }
    }
    let page_numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    if page_numbers.is_empty() {
        return Err(DocumentProblem::PdfUnreadable { message: "no pages".into() });
    }
    let mut pages = Vec::with_capacity(page_numbers.len());
    let mut warnings = Vec::new();
    for page in page_numbers {
        let extracted = catch_unwind(AssertUnwindSafe(|| {
            let mut text = String::new();
            let mut output = PlainTextOutput::new(&mut text);
            output_doc_page(&doc, &mut output, page).map(|()| text)
        }));
        let text = match extracted {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => {
                warnings.push(DocumentProblem::PdfPage { page, message: e.to_string() });
                String::new()
            }
            Err(panic) => {
                warnings.push(DocumentProblem::PdfPage { page, message: panic_message(&panic) });
                String::new()
            }
        };
        // NFKC turns typesetters' ligatures (U+FB01 "ﬁ") and compatibility forms into letters.
        pages.push(text.nfkc().collect());
    }
    Ok(PdfText { pages, warnings })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into());
    format!("the PDF reader failed: {detail}")
}
