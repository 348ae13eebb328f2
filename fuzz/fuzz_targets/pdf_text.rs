//! PDF text extraction (`read_document` on a .pdf: lopdf + pdf-extract behind our panic
//! containment, then our page layout into sections). Any bytes must give a document or a
//! named problem, never a panic, a crash or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn scratch() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        dir.join("manual.pdf")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("write the input");
    let limits = assay::corpus::ReadLimits::default();
    if let Ok((document, _warnings)) = assay::corpus::read_document("manual", path, limits) {
        for chunk in assay::corpus::chunk_document(&document, assay::corpus::ChunkSettings::default()) {
            assert!(!chunk.id.is_empty());
        }
    }
});
