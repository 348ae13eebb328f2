//! An index build whose writing fails (a full disk, simulated with a file-size limit: the
//! process ignores SIGXFSZ, so each write past the limit fails with EFBIG as on a full disk)
//! reports the error and leaves no `.building-*` staging folder behind (issue 36); the next
//! build, with room, succeeds.

use crate::common::{assay_command, dataset_copy};

#[test]
fn a_failed_index_write_leaves_no_staging_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let cache = tmp.path().join("index");
    let db = tmp.path().join("runs.sqlite");
    // 64 blocks of 512 bytes: far less than the sample dataset's chunks.
    let script = format!(
        "trap '' XFSZ; ulimit -f 64; exec '{}' index '{}'",
        env!("CARGO_BIN_EXE_assay"),
        dataset.display()
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("ASSAY_INDEX_CACHE", &cache)
        .env("ASSAY_DB", &db)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the build had room after all: {stderr}");
    assert!(stderr.contains("File too large") || stderr.contains("too large"), "{stderr}");
    let mut left = Vec::new();
    for entry in walk(&cache) {
        if entry.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".building-")) {
            left.push(entry);
        }
    }
    assert!(left.is_empty(), "staging folders left: {left:?}; {stderr}");
    let again = assay_command(&["index", dataset.to_str().unwrap()], &db).env("ASSAY_INDEX_CACHE", &cache).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}
