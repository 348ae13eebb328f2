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
            assert!(issue["problem"]["message"].as_str().unwrap().contains("decode to more than 256 MiB"), "{issue}");
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

/// Deflated `data`.
fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// `mib` MiB of zeros, deflated, as zlib or (without its header and checksum) raw deflate.
fn zeros_deflated(mib: usize, raw: bool) -> Vec<u8> {
    use std::io::Write;
    let zeros = vec![0u8; 1 << 20];
    let level = flate2::Compression::best();
    if raw {
        let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), level);
        (0..mib).for_each(|_| encoder.write_all(&zeros).unwrap());
        encoder.finish().unwrap()
    } else {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), level);
        (0..mib).for_each(|_| encoder.write_all(&zeros).unwrap());
        encoder.finish().unwrap()
    }
}

fn stream_of(dictionary: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< /Length {} {dictionary} >>\nstream\n", data.len()).into_bytes();
    out.extend(data);
    out.extend(b"\nendstream");
    out
}

fn text_lines(words: &str, lines: usize) -> String {
    let shown: Vec<String> = (0..lines).map(|i| format!("({words} {i}) Tj 0 -14 Td")).collect();
    format!("BT /F1 10 Tf 72 700 Td {} ET", shown.join(" "))
}

/// Catalog, a page tree of `pages` pages that all draw object 4 with the resources
/// `resources`, with `rest` as objects 3, 4, … (the pages draw object 3).
fn pages_sharing(pages: usize, resources: &str, rest: Vec<Vec<u8>>) -> Vec<u8> {
    let first_page = 3 + rest.len();
    let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", first_page + i)).collect();
    let mut objects = vec![CATALOG.as_bytes().to_vec(), format!("<< /Type /Pages /Kids [{}] /Count {pages} >>", kids.join(" ")).into_bytes()];
    objects.extend(rest);
    for _ in 0..pages {
        objects.push(format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources {resources} >>").into_bytes());
    }
    pdf_of_bytes(&objects)
}

fn form(body: &str, resources: &str) -> Vec<u8> {
    stream_of(&format!("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources {resources}"), body.as_bytes())
}

/// A ToUnicode map of `codes` two-byte codes, each to itself.
fn identity_unicode_map(codes: u32) -> Vec<u8> {
    let cmap = format!(
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfrange <0000> <{:04X}> <0000> endbfrange endcmap end end",
        codes - 1
    );
    stream_of("/Filter /FlateDecode", &zlib(cmap.as_bytes()))
}

/// One page that uses `fonts` composite fonts sharing one ToUnicode map of 65,536 codes.
fn fonts_sharing_a_map(fonts: usize) -> Vec<u8> {
    let names: Vec<String> = (0..fonts).map(|i| format!("/F{i} {} 0 R", 6 + i)).collect();
    let shown: Vec<String> = (0..fonts).map(|i| format!("/F{i} 12 Tf 72 {} Td <00410042> Tj", 700 - 14 * i as i64)).collect();
    let mut objects = vec![
        CATALOG.as_bytes().to_vec(),
        PAGES.as_bytes().to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << {} >> >> >>", names.join(" ")).into_bytes(),
        stream_of("", format!("BT {} ET", shown.join(" ")).as_bytes()),
        identity_unicode_map(65_536),
    ];
    for i in 0..fonts {
        objects.push(format!("<< /Type /Font /Subtype /Type0 /BaseFont /Shared /Encoding /Identity-H /DescendantFonts [{} 0 R] /ToUnicode 5 0 R >>", 6 + fonts + i).into_bytes());
    }
    for _ in 0..fonts {
        objects.push(format!("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Shared /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor {} 0 R >>", 6 + 2 * fonts).into_bytes());
    }
    objects.push(b"<< /Type /FontDescriptor /FontName /Shared /Flags 4 >>".to_vec());
    pdf_of_bytes(&objects)
}

/// `assay text FILE` with 1.5 GB of address space, stopped after 60 s (forms drawing forms
/// ran for hours): (exit code, stderr, seconds).
fn text_in_bounded_memory(file: &std::path::Path) -> (Option<i32>, String, f64) {
    let script = format!("ulimit -v 1500000; exec timeout 60 '{}' text '{}'", env!("CARGO_BIN_EXE_assay"), file.display());
    let started = std::time::Instant::now();
    let out = std::process::Command::new("sh").arg("-c").arg(script).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), started.elapsed().as_secs_f64())
}

/// Structures that multiply a small file into unbounded work (issue 36): a form that draws
/// itself (a stack overflow in pdf-extract, which no panic guard catches), filters stacked on
/// one stream and lopdf's raw-deflate fallback (gigabytes allocated from a few KB), one content
/// stream drawn by many pages, forms drawing forms drawing forms, one ToUnicode map shared by
/// many fonts, a page tree whose parent is itself. Each is refused by name in bounded time and
/// 1.5 GB of address space, never aborts.
#[test]
fn structures_that_multiply_work_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = |s: &str| s.as_bytes().to_vec();
    let font = || bytes(FONT);
    let exponential_forms = {
        // Ten levels, each form drawing the next ten times: 10^9 uses of 100-byte streams.
        let mut rest = vec![stream_of("", b"/X0 Do"), font()];
        for level in 0..10 {
            let body = format!("BT /F1 12 Tf 72 700 Td (level {level}) Tj ET {}", format!("/X{} Do ", level + 1).repeat(10));
            rest.push(form(&body, &format!("<< /Font << /F1 4 0 R >> /XObject << /X{} {} 0 R >> >>", level + 1, 6 + level)));
        }
        pages_sharing(1, "<< /Font << /F1 4 0 R >> /XObject << /X0 5 0 R >> >>", rest)
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "self-drawing-form",
            pdf_of_bytes(&[
                bytes(CATALOG),
                bytes(PAGES),
                bytes("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >> >>"),
                stream_of("", text_lines("Drawn before the form", 3).replace(" ET", " ET /X1 Do").as_bytes()),
                font(),
                form("/X1 Do", "<< /XObject << /X1 6 0 R >> >>"),
            ]),
            "page 1: a Form XObject (6 0 R) draws itself; not drawn",
        ),
        (
            "stacked-flate",
            pdf_of_bytes(&[bytes(CATALOG), bytes(PAGES), bytes(&page_with("4 0 R")), stream_of("/Filter [/FlateDecode /FlateDecode]", &zlib(&zeros_deflated(2048, false))), font()]),
            "its streams decode to more than 256 MiB",
        ),
        (
            "raw-deflate-fallback",
            pdf_of_bytes(&[bytes(CATALOG), bytes(PAGES), bytes(&page_with("4 0 R")), stream_of("/Filter /FlateDecode", &[b"\xff\xff".to_vec(), zeros_deflated(300, true)].concat()), font()]),
            "its streams decode to more than 256 MiB",
        ),
        (
            "one-stream-many-pages",
            pages_sharing(200, "<< /Font << /F1 4 0 R >> >>", vec![stream_of("/Filter /FlateDecode", &zlib(text_lines("The quick brown fox jumps over the lazy dog", 40_000).as_bytes())), font()]),
            "its pages draw more than 256 MiB of content",
        ),
        ("forms-drawing-forms", exponential_forms, "its pages draw Form XObjects more than 200000 times"),
        ("one-unicode-map-many-fonts", fonts_sharing_a_map(50), "page 1: its fonts' character maps and widths expand to more than 1000000 entries; not drawn"),
    ];
    for (stem, pdf, expected) in &cases {
        let file = tmp.path().join(format!("{stem}.pdf"));
        std::fs::write(&file, pdf).unwrap();
        let (code, stderr, seconds) = text_in_bounded_memory(&file);
        assert_eq!(code, Some(2), "{stem} ({} bytes): {stderr}", pdf.len());
        assert!(stderr.contains(&format!("{stem}.pdf: not a readable PDF: ")) && stderr.contains(expected), "{stem}: {stderr}");
        assert!(seconds < 30.0, "{stem} took {seconds:.1} s");
        eprintln!("ok: {stem}.pdf ({} bytes) in {seconds:.2} s: {}", pdf.len(), stderr.trim());
    }
}

/// The same structures within reason are read as before: a page tree whose `/Parent` loops
/// (pdf-extract looked its attributes up by recursion), a form drawn by several pages and by
/// another form, and a ToUnicode map shared by a few fonts.
#[test]
fn shared_and_nested_content_within_the_budgets_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = |s: &str| s.as_bytes().to_vec();
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "parent-loop",
            pdf_of_bytes(&[
                bytes(CATALOG),
                bytes("<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> >>"),
                bytes("<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>"),
                stream_of("", text_lines("Inherited resources", 3).as_bytes()),
                bytes(FONT),
            ]),
            vec!["Inherited resources 0", "Inherited resources 2"],
        ),
        (
            "shared-forms",
            pages_sharing(
                3,
                "<< /Font << /F1 4 0 R >> /XObject << /Outer 5 0 R >> >>",
                vec![
                    stream_of("", b"/Outer Do /Outer Do"),
                    bytes(FONT),
                    form(&format!("{} /Inner Do", text_lines("Outer form", 2)), "<< /Font << /F1 4 0 R >> /XObject << /Inner 6 0 R >> >>"),
                    form(&text_lines("Inner form", 2), "<< /Font << /F1 4 0 R >> >>"),
                ],
            ),
            vec!["Outer form 0", "Inner form 1"],
        ),
        ("a-map-shared-by-eight-fonts", fonts_sharing_a_map(8), vec!["AB"]),
    ];
    for (stem, pdf, expected) in &cases {
        let file = tmp.path().join(format!("{stem}.pdf"));
        std::fs::write(&file, pdf).unwrap();
        let script = format!("ulimit -v 1500000; exec '{}' text '{}'", env!("CARGO_BIN_EXE_assay"), file.display());
        let out = std::process::Command::new("sh").arg("-c").arg(script).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stem}: {}", String::from_utf8_lossy(&out.stderr));
        for needle in expected {
            assert!(text.contains(needle), "{stem}: {needle:?} not in {text}");
        }
    }
}

/// An encrypted PDF that opens with the empty user password (an owner password only), built
/// by lopdf's own encryption: one page of text, with `stream` as the page's content or, as an
/// object stream, beside it. `(dictionary entries, data)` of that stream.
fn encrypted_pdf(text: &str, extra: Option<(&[(&str, pdf_extract::Object)], Vec<u8>)>, extra_is_content: bool) -> Vec<u8> {
    use pdf_extract::{Dictionary, Document, EncryptionState, EncryptionVersion, Object, Permissions, Stream};
    let name = |n: &str| Object::Name(n.as_bytes().to_vec());
    let dictionary = |entries: Vec<(&str, Object)>| {
        let mut d = Dictionary::new();
        for (key, value) in entries {
            d.set(key, value);
        }
        d
    };
    let mut doc = Document::with_version("1.5");
    let pages = doc.new_object_id();
    let font = doc.add_object(dictionary(vec![("Type", name("Font")), ("Subtype", name("Type1")), ("BaseFont", name("Helvetica"))]));
    let shown = doc.add_object(Stream::new(Dictionary::new(), text_lines(text, 2).into_bytes()));
    let mut content = shown;
    if let Some((entries, data)) = extra {
        let extra = doc.add_object(Stream::new(dictionary(entries.to_vec()), data));
        if extra_is_content {
            content = extra;
        }
    }
    let page = doc.add_object(dictionary(vec![
        ("Type", name("Page")),
        ("Parent", Object::Reference(pages)),
        ("MediaBox", Object::Array(vec![0i64.into(), 0i64.into(), 612i64.into(), 792i64.into()])),
        ("Contents", Object::Reference(content)),
        ("Resources", Object::Dictionary(dictionary(vec![("Font", Object::Dictionary(dictionary(vec![("F1", Object::Reference(font))])))]))),
    ]));
    doc.objects.insert(pages, Object::Dictionary(dictionary(vec![("Type", name("Pages")), ("Kids", Object::Array(vec![Object::Reference(page)])), ("Count", 1i64.into())])));
    let catalog = doc.add_object(dictionary(vec![("Type", name("Catalog")), ("Pages", Object::Reference(pages))]));
    doc.trailer.set("Root", Object::Reference(catalog));
    let id = Object::string_literal(b"assay-bad-input!".to_vec());
    doc.trailer.set("ID", Object::Array(vec![id.clone(), id]));
    let version =
        EncryptionVersion::V2 { document: &doc, owner_password: "owner", user_password: "", key_length: 128, permissions: Permissions::all() };
    let state = EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    // lopdf's writer leaves object streams out (it would write its own): the extra stream is
    // typed `/ObjStX` and renamed in the file, where dictionary names are not encrypted.
    let (stand_in, object_stream) = (b"/ObjStX", b"/ObjStm");
    while let Some(at) = out.windows(stand_in.len()).position(|w| w == stand_in) {
        out[at..at + stand_in.len()].copy_from_slice(object_stream);
    }
    out
}

/// Encrypted PDFs (issue 36): in the file their streams are ciphertext, which the decoded-size
/// check cannot decode, so once lopdf had decrypted them nothing bounded what they decoded to:
/// a 4 KB file's stacked-Flate content stream was decoded whole while its page was measured
/// (lopdf ran out of memory at this test's 1.5 GB limit; without one it takes 2 GB), and lopdf
/// expands object streams as it decrypts. Every stream is now counted once decrypted, before
/// anything decodes it, and such a file is refused by name. An encrypted manual within the
/// budget, with an object stream, still reads.
#[test]
fn encrypted_pdfs_are_read_within_the_decoded_size_budget() {
    use pdf_extract::Object;
    let tmp = tempfile::tempdir().unwrap();
    let name = |n: &str| Object::Name(n.as_bytes().to_vec());
    let stacked = || Object::Array(vec![name("FlateDecode"), name("FlateDecode")]);
    let bomb = zlib(&zeros_deflated(2048, false));
    let object_stream: Vec<(&str, Object)> = vec![("Type", name("ObjStX")), ("N", 1i64.into()), ("First", 4i64.into()), ("Filter", stacked())];
    let content: Vec<(&str, Object)> = vec![("Filter", stacked())];
    let refused = [
        ("encrypted-content-stream", encrypted_pdf("Never drawn", Some((&content, bomb.clone())), true)),
        ("encrypted-object-stream", encrypted_pdf("Beside a bomb", Some((&object_stream, bomb)), false)),
    ];
    for (stem, pdf) in &refused {
        let file = tmp.path().join(format!("{stem}.pdf"));
        std::fs::write(&file, pdf).unwrap();
        let (code, stderr, seconds) = text_in_bounded_memory(&file);
        assert_eq!(code, Some(2), "{stem} ({} bytes): {stderr}", pdf.len());
        assert!(stderr.contains(&format!("{stem}.pdf: not a readable PDF: its streams decode to more than 256 MiB")), "{stem}: {stderr}");
        eprintln!("ok: {stem}.pdf ({} bytes) in {seconds:.2} s: {}", pdf.len(), stderr.trim());
    }
    let readable = tmp.path().join("encrypted-manual.pdf");
    let small: Vec<(&str, Object)> = vec![("Type", name("ObjStX")), ("N", 1i64.into()), ("First", 4i64.into()), ("Filter", name("FlateDecode"))];
    std::fs::write(&readable, encrypted_pdf("An owner password only", Some((&small, zlib(b"9 0 (a string in an object stream)"))), false)).unwrap();
    let script = format!("ulimit -v 1500000; exec '{}' text '{}'", env!("CARGO_BIN_EXE_assay"), readable.display());
    let out = std::process::Command::new("sh").arg("-c").arg(script).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("An owner password only 0") && text.contains("An owner password only 1"), "{text}");
}
