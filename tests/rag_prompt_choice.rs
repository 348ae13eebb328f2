//! The rag target's prompt template: the run's `--prompt`, else the dataset's own (`prompt` in
//! dataset.toml), else the built-in one. The choice shows in the target's input fingerprint,
//! which goes into the run config (a resumed run must generate with the same prompt).

use assay::dataset::load_dataset;
use assay::retrieve::RetrievalMode;
use assay::targets::{build_target, TargetOptions};
use crate::common;
use std::path::{Path, PathBuf};

#[test]
fn a_dataset_prompt_is_used_unless_the_run_names_one() {
    if !common::smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::dataset_copy(tmp.path());
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/rag.md");
    let fingerprint = |prompt: Option<PathBuf>| {
        let dataset = load_dataset(&dir).unwrap();
        let options = TargetOptions {
            top_k: 4,
            retrieval: RetrievalMode::Bm25,
            model: Some("smollm2-135m-instruct".into()),
            prompt,
            ..TargetOptions::default()
        };
        build_target("rag", &dataset, &options).unwrap_or_else(|e| panic!("{e}")).input_sha256.unwrap()
    };
    assert_eq!(load_dataset(&dir).unwrap().prompt, Some(dir.join("prompt.md")));
    let own = fingerprint(None);
    assert_eq!(own, fingerprint(Some(dir.join("prompt.md"))), "the dataset's prompt.md by default");
    assert_ne!(own, fingerprint(Some(built_in.clone())), "--prompt FILE wins over the dataset's");

    // Without the field the built-in template is used.
    let manifest = std::fs::read_to_string(dir.join("dataset.toml")).unwrap();
    let without: String = manifest.lines().filter(|l| !l.starts_with("prompt")).map(|l| format!("{l}\n")).collect();
    assert_ne!(without, manifest);
    std::fs::write(dir.join("dataset.toml"), without).unwrap();
    assert_eq!(load_dataset(&dir).unwrap().prompt, None);
    assert_eq!(fingerprint(None), fingerprint(Some(built_in)));
}
