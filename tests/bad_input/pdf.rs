//! PDF manuals in a corpus: truncated, not a PDF, empty, encrypted, without text, and hostile
//! structures (a page tree that contains itself, a stream whose length points at itself, a
//! deeply nested array, an xref table pointing past the end). A document that cannot be read is
//! named with its reason and skipped; the other manuals are still indexed and the run goes on.
//! Nothing here may panic, hang or crash the process.

use crate::common::{assay, dataset_copy, ok, snapshot};
use serde_json::Value;

/// A PDF from numbered object bodies, with a correct xref table (so that only the structure
/// the case describes is wrong).
fn pdf(objects: &[&str]) -> Vec<u8> {
    pdf_of_bytes(&objects.iter().map(|o| o.as_bytes().to_vec()).collect::<Vec<_>>())
}

fn pdf_of_bytes(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).into_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).into_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").into_bytes());
    }
    out.extend(format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).into_bytes());
    out
}

const CATALOG: &str = "<< /Type /Catalog /Pages 2 0 R >>";
const PAGES: &str = "<< /Type /Pages /Kids [3 0 R] /Count 1 >>";

fn page_with(contents: &str) -> String {
    format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {contents} /Resources << /Font << /F1 5 0 R >> >> >>")
}

const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

fn stream(text: &str) -> String {
    format!("<< /Length {} >>\nstream\n{text}\nendstream", text.len())
}

/// A page whose content stream is `inflated_mib` MiB of zeros, deflated (about 1/1000 of that).
fn inflate_bomb(inflated_mib: usize) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated_mib {
        encoder.write_all(&zeros).unwrap();
    }
    let data = encoder.finish().unwrap();
    let mut content = format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", data.len()).into_bytes();
    content.extend(&data);
    content.extend(b"\nendstream");
    let text = |s: &str| s.as_bytes().to_vec();
    pdf_of_bytes(&[text(CATALOG), text(PAGES), text(&page_with("4 0 R")), content, text(FONT)])
}

/// (file stem, bytes, the problem kind the index must report for it).
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let real = std::fs::read(crate::common::trailgear().join("pdf/rackmaster-2.pdf")).unwrap();
    let nested = format!("{}1{}", "[".repeat(50_000), "]".repeat(50_000));
    vec![
        ("truncated", real[..real.len() / 3].to_vec(), "pdf_unreadable"),
        ("not-a-pdf", b"Quick start: unfold the rack, tighten the bolts.".to_vec(), "pdf_unreadable"),
        ("empty", Vec::new(), "empty"),
        ("no-text", pdf(&[CATALOG, PAGES, &page_with("4 0 R"), &stream("0 0 m 100 100 l S"), FONT]), "no_text"),
        ("page-tree-loop", pdf(&[CATALOG, "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", &page_with("4 0 R"), &stream("BT /F1 12 Tf 72 700 Td (Loop) Tj ET"), FONT]), "pdf_unreadable"),
        ("self-referencing-length", pdf(&[CATALOG, PAGES, &page_with("4 0 R"), "<< /Length 4 0 R >>\nstream\nBT /F1 12 Tf (x) Tj ET\nendstream", FONT]), "no_text"),
        ("deeply-nested", pdf(&[CATALOG, PAGES, &page_with("4 0 R"), &nested, FONT]), "no_text"),
        ("xref-past-the-end", {
            let mut bytes = pdf(&[CATALOG, PAGES, &page_with("4 0 R"), &stream("BT /F1 12 Tf 72 700 Td (Far) Tj ET"), FONT]);
            let at = bytes.windows(9).rposition(|w| w == b"startxref").unwrap();
            bytes.truncate(at);
            bytes.extend(b"startxref\n99999999\n%%EOF\n");
            bytes
        }, "pdf_unreadable"),
        // Over the 256 MiB limit on what a document's streams may inflate to (a real bomb of a
        // few GB aborts the process on a failed allocation; the fuzz corpus holds one).
        ("inflate-bomb", inflate_bomb(300), "pdf_unreadable"),
        ("encrypted", std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/bad/needs-password.pdf")).unwrap(), "encrypted"),
    ]
}

#[test]
fn each_bad_pdf_is_named_and_skipped_and_the_rest_is_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let cases = cases();
    for (stem, bytes, _) in &cases {
        std::fs::write(dataset.join("corpus").join(format!("{stem}.pdf")), bytes).unwrap();
    }
    let db = tmp.path().join("runs.sqlite");
    let out = assay(&["index", ds, "--json"], &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value = serde_json::from_str(&ok(out)).unwrap();
    let skipped = report["skipped"].as_array().unwrap();
    for (stem, _, kind) in &cases {
        let issue = skipped
            .iter()
            .find(|i| i["doc"] == *stem)
            .unwrap_or_else(|| panic!("{stem}.pdf is not reported as skipped: {report:#}"));
        assert_eq!(issue["problem"]["kind"], *kind, "{stem}: {issue}");
        if *stem == "inflate-bomb" {
            assert!(issue["problem"]["message"].as_str().unwrap().contains("inflate to more than 256 MiB"), "{issue}");
        }
        assert!(issue["path"].as_str().unwrap().ends_with(&format!("{stem}.pdf")));
        eprintln!("ok: {stem}.pdf: {}", issue["problem"]);
    }
    assert_eq!(report["indexed_documents"], 8, "the eight manuals are still indexed: {report:#}");
    // The text report names each file with its reason, and a run over the corpus still works.
    let text = ok(assay(&["index", ds], &db));
    for (stem, _, _) in &cases {
        assert!(text.contains(&format!("{stem}.pdf: skipped: ")), "{text}");
    }
    ok(assay(&["run", ds, "--target", "retrieve", "--limit", "5"], &db));
    assert!(!snapshot(&db).is_empty());
    eprintln!("{} PDF cases", cases.len());
}
