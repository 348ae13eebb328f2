//! The GGUF metadata reader (`GgufInfo::read`: header, metadata, tensor infos, extents) on any
//! bytes. It must return an error naming the file, never panic or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// One file, rewritten for every input: the reader takes a path, as `assay models add` does.
fn scratch() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        dir.join("model.gguf")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("write the input");
    if let Ok(info) = assay::models::gguf_info::GgufInfo::read(path) {
        let _ = info.summary();
    }
});
