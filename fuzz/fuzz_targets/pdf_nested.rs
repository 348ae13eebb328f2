//! PDF structures that multiply work: the input picks a chain of stream filters (Flate, LZW,
//! ASCII85, up to four layers, each possibly with a wrong zlib header so lopdf falls back to
//! raw deflate), how many pages share one content stream, and how deep and wide Form XObjects
//! draw each other (cycles included). The PDF is built from those choices and read by
//! `read_document`: it must give a document or a named problem, never an abort (stack
//! overflow, failed allocation), a panic or a hang. Random bytes rarely make a valid PDF, so
//! this target writes the structure and lets the fuzzer choose its shape and content.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Arbitrary, Debug)]
enum Layer {
    Flate { raw_fallback: bool },
    Lzw,
    Ascii85,
}

#[derive(Arbitrary, Debug)]
struct Shape {
    layers: Vec<Layer>,
    /// Repeats of the text in the shared content stream (a highly compressible payload).
    repeats: u16,
    text: Vec<u8>,
    pages: u8,
    /// Forms drawing forms: how many, how many times each draws the next, and whether the
    /// last draws the first.
    forms: u8,
    draws_per_form: u8,
    cycle: bool,
}

fn scratch() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        dir.join("manual.pdf")
    })
}

/// `data` encoded through `layers`, outermost last; the `/Filter` names in decoding order.
fn encode(mut data: Vec<u8>, layers: &[Layer]) -> (Vec<u8>, Vec<&'static str>) {
    let mut names = Vec::new();
    for layer in layers.iter().take(4) {
        data = match layer {
            Layer::Flate { raw_fallback } => {
                let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                encoder.write_all(&data).expect("in memory");
                let mut out = encoder.finish().expect("in memory");
                if *raw_fallback {
                    out[0] = 0xFF;
                    out[1] = 0xFF;
                }
                out
            }
            Layer::Lzw => weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(&data).expect("in memory"),
            Layer::Ascii85 => ascii85(&data),
        };
        names.insert(0, match layer {
            Layer::Flate { .. } => "/FlateDecode",
            Layer::Lzw => "/LZWDecode",
            Layer::Ascii85 => "/ASCII85Decode",
        });
    }
    (data, names)
}

fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut value = u32::from_be_bytes(word);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = (value % 85) as u8 + b'!';
            value /= 85;
        }
        out.extend_from_slice(&digits[..chunk.len() + 1]);
    }
    out.extend_from_slice(b"~>");
    out
}

fn stream(dictionary: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< /Length {} {dictionary} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
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

fuzz_target!(|shape: Shape| {
    let forms = usize::from(shape.forms % 24);
    let pages = usize::from(shape.pages).max(1);
    let text: String = shape.text.iter().map(|&b| if b.is_ascii_alphanumeric() { b as char } else { ' ' }).collect();
    let shown = format!("BT /F1 10 Tf 72 700 Td ({text}) Tj ET ").repeat(usize::from(shape.repeats % 4096).max(1));
    let content = if forms > 0 { format!("{shown} /X0 Do") } else { shown };
    let (data, filters) = encode(content.into_bytes(), &shape.layers);
    // 1 catalog, 2 pages, 3 content, 4 font, 5.. forms, then the pages.
    let first_form = 5;
    let first_page = first_form + forms;
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            (0..pages).map(|i| format!("{} 0 R", first_page + i)).collect::<Vec<_>>().join(" ")
        )
        .into_bytes(),
        stream(&format!("/Filter [{}]", filters.join(" ")), &data),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    for i in 0..forms {
        let next = if i + 1 < forms { Some(i + 1) } else if shape.cycle { Some(0) } else { None };
        let body = match next {
            Some(n) => format!("BT /F1 10 Tf 72 600 Td (form {i}) Tj ET {}", format!("/X{n} Do ").repeat(usize::from(shape.draws_per_form % 16))),
            None => format!("BT /F1 10 Tf 72 600 Td (form {i}) Tj ET"),
        };
        let xobjects = next.map(|n| format!("/XObject << /X{n} {} 0 R >>", first_form + n)).unwrap_or_default();
        objects.push(stream(&format!("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> {xobjects} >>"), body.as_bytes()));
    }
    let page_xobjects = if forms > 0 { format!("/XObject << /X0 {first_form} 0 R >>") } else { String::new() };
    for _ in 0..pages {
        objects.push(format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> {page_xobjects} >> >>").into_bytes());
    }
    let path = scratch();
    std::fs::write(path, pdf(&objects)).expect("write the input");
    let _ = assay::corpus::read_document("manual", path, assay::corpus::ReadLimits::default());
});
