//! Reading real manuals: Markdown, and PDFs made by pdfLaTeX, Chromium and LibreOffice
//! (tests/fixtures/corpus/make-pdfs.sh), plus the bad inputs a corpus folder meets.

use assay::corpus::{
    chunk_document, read_corpus, read_document, ChunkSettings, Document, DocumentProblem, ReadLimits,
};
use assay::dataset::CorpusFile;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus").join(rel)
}

fn read(rel: &str) -> Document {
    let path = fixture(rel);
    let id = path.file_stem().unwrap().to_string_lossy().into_owned();
    let (doc, warnings) = read_document(&id, &path, ReadLimits::default()).expect(rel);
    assert!(warnings.is_empty(), "{rel}: {warnings:?}");
    doc
}

fn all_text(doc: &Document) -> String {
    doc.sections
        .iter()
        .flat_map(|s| &s.blocks)
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn markdown_keeps_headings_and_drops_markup() {
    let doc = read("md/ridgeline-stove.md");
    let headings: Vec<&str> = doc.sections.iter().filter_map(|s| s.heading.as_deref()).collect();
    assert!(headings.contains(&"Ridgeline Stove — User Manual > Lighting the stove > Cold weather"));
    let text = all_text(&doc);
    assert!(text.contains("The Ridgeline Stove is a compact canister stove"));
    assert!(text.contains("see the safety section for the rules"));
    assert!(text.contains("Part: Piezo igniter; Quantity: 1; Notes: Fitted to the valve body"));
    assert!(text.contains("3. Open the control valve a quarter turn counter-clockwise."));
    for markup in ["**", "](", "|", "##", "#safety"] {
        assert!(!text.contains(markup), "markup {markup:?} left in:\n{text}");
    }
}

/// Phrases from the Markdown source that every PDF twin must yield as text, in reading order,
/// with spaces between words (pdfLaTeX writes none) and hyphenation undone.
fn assert_pdf_twin(stem: &str, phrases: &[&str]) {
    let doc = read(&format!("pdf/{stem}.pdf"));
    let text = all_text(&doc);
    for phrase in phrases {
        assert!(text.contains(phrase), "{stem}.pdf lacks {phrase:?}; text:\n{text}");
    }
    let pages = doc.pages.expect("PDFs have a page count");
    let block_pages: Vec<u32> = doc.sections.iter().flat_map(|s| &s.blocks).filter_map(|b| b.page).collect();
    assert_eq!(block_pages.first(), Some(&1));
    assert!(block_pages.windows(2).all(|w| w[0] <= w[1]), "pages out of order: {block_pages:?}");
    assert_eq!(block_pages.last(), Some(&pages), "the last page's text has its page number");
    // No line of the result is a bare page number.
    for block in doc.sections.iter().flat_map(|s| &s.blocks) {
        assert!(block.text.trim().parse::<u32>().is_err(), "bare page number block {:?}", block.text);
    }
}

#[test]
fn latex_pdf_reads_as_words_across_pages() {
    assert_pdf_twin(
        "ridgeline-stove",
        &[
            "Never use the stove inside a tent, a vestibule or any closed space",
            "wait thirty seconds for the gas to clear",
            "The electrode gap should be 4 mm.",
            "Warranty: five years against manufacturing defects",
        ],
    );
}

#[test]
fn chromium_pdf_loses_its_running_header_and_footer() {
    assert_pdf_twin(
        "lumen-headlamp",
        &[
            "hold the button for six seconds while the lamp is off",
            "it survives immersion in one metre of water for thirty minutes",
            "the battery is covered for one year",
        ],
    );
    let text = all_text(&read("pdf/lumen-headlamp.pdf"));
    assert!(!text.contains("file://"), "footer URL left in:\n{text}");
    assert!(!text.contains(" PM"), "header date left in:\n{text}");
}

#[test]
fn libreoffice_pdf_reads() {
    assert_pdf_twin(
        "tarn-tent",
        &[
            "Face the narrow end into the wind.",
            "Never store the tent wet; mildew damages the coating within days.",
        ],
    );
}

#[test]
fn pdf_headings_are_found_for_chunks() {
    let doc = read("pdf/lumen-headlamp.pdf");
    let headings: Vec<&str> = doc.sections.iter().filter_map(|s| s.heading.as_deref()).collect();
    for expected in ["Charging", "Lockout", "Water resistance"] {
        assert!(headings.contains(&expected), "{expected:?} not among {headings:?}");
    }
}

#[test]
fn chunk_ids_are_stable_and_chunks_respect_the_budget() {
    let doc = read("md/ridgeline-stove.md");
    let settings = ChunkSettings { size_words: 40, overlap_words: 10 };
    let a = chunk_document(&doc, settings);
    let b = chunk_document(&read("md/ridgeline-stove.md"), settings);
    assert_eq!(a, b);
    for (n, chunk) in a.iter().enumerate() {
        assert_eq!(chunk.id, format!("ridgeline-stove#{n}"));
        assert!(chunk.text.split_whitespace().count() <= 40, "{}", chunk.text);
        assert!(chunk.text.trim_end().ends_with(['.', '!', '?', ')']) || !chunk.text.contains(". "), "{:?}", chunk.text);
    }
    // Overlap: some chunk starts with the last sentence of the one before it.
    assert!(a.windows(2).any(|w| {
        let last = assay::corpus::split_sentences(&w[0].text).pop().unwrap_or_default();
        w[0].heading == w[1].heading && w[1].text.starts_with(&last)
    }));
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> CorpusFile {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    CorpusFile { id: Path::new(name).file_stem().unwrap().to_string_lossy().into_owned(), path }
}

/// A file of `len` bytes without writing them (sparse): only its size is looked at.
fn huge(dir: &Path, name: &str, len: u64) -> CorpusFile {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().set_len(len).unwrap();
    CorpusFile { id: Path::new(name).file_stem().unwrap().to_string_lossy().into_owned(), path }
}

#[test]
fn bad_documents_are_named_and_skipped_while_the_rest_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pdf = std::fs::read(fixture("pdf/ridgeline-stove.pdf")).unwrap();
    let files = vec![
        write(d, "good.md", b"# Good\n\nThis manual is fine."),
        write(d, "empty.md", b""),
        write(d, "blank.txt", b"   \n\n  \n"),
        write(d, "image.md", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        write(d, "latin1.txt", b"Caf\xe9 stove.\nSecond line \xe9t\xe9."),
        write(d, "truncated.pdf", &pdf[..pdf.len() / 3]),
        write(d, "not-a.pdf", b"just some text, no PDF"),
        CorpusFile { id: "needs-password".into(), path: fixture("bad/needs-password.pdf") },
        CorpusFile { id: "owner-password-only".into(), path: fixture("bad/owner-password-only.pdf") },
        CorpusFile { id: "missing".into(), path: d.join("missing.md") },
        huge(d, "huge.txt", 130 * 1024 * 1024),
    ];
    let read = read_corpus(&files, ReadLimits::default());
    let problem = |doc: &str| {
        read.issues.iter().find(|i| i.doc == doc).map(|i| (i.skipped, i.problem.clone()))
    };
    let ids: Vec<&str> = read.documents.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["good", "latin1", "owner-password-only"]);
    assert_eq!(problem("empty"), Some((true, DocumentProblem::Empty)));
    assert_eq!(problem("blank"), Some((true, DocumentProblem::NoText)));
    assert_eq!(problem("image"), Some((true, DocumentProblem::Binary { offset: 8 })));
    assert_eq!(
        problem("latin1"),
        Some((false, DocumentProblem::InvalidUtf8 { line: 1, byte: 3, count: 3 }))
    );
    assert!(matches!(problem("truncated"), Some((true, DocumentProblem::PdfUnreadable { .. }))), "{:?}", problem("truncated"));
    assert!(matches!(problem("not-a"), Some((true, DocumentProblem::PdfUnreadable { .. }))));
    assert_eq!(problem("needs-password"), Some((true, DocumentProblem::Encrypted)));
    assert!(matches!(problem("missing"), Some((true, DocumentProblem::Io { .. }))));
    assert_eq!(
        problem("huge"),
        Some((true, DocumentProblem::TooLarge { bytes: 130 * 1024 * 1024, limit: 128 * 1024 * 1024 }))
    );
    let owner_only = &read.documents[2];
    assert!(all_text(owner_only).contains("Face the narrow end into the wind."));
    // Every issue names its file when shown.
    for issue in &read.issues {
        assert!(issue.to_string().starts_with(&issue.path.display().to_string()), "{issue}");
    }
}
