//! `assay models scan` through the real binary, on folders laid out as Ollama, LM Studio and
//! the Hugging Face cache lay theirs out (written here, holding the small architecture
//! fixtures as their models): found models are registered by reference under the tools'
//! names, a second scan adds nothing, and what cannot run is skipped with the reason.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/arch").join(name)
}

fn sha256_hex(path: &Path) -> String {
    assay::models::registry::sha256_file(path).expect("sha256").0
}

/// Ollama: a manifest per name and tag naming the weights' blob by digest.
fn ollama_store(root: &Path, model: &str, tag: &str, gguf: &Path) {
    let digest = sha256_hex(gguf);
    let blobs = root.join("blobs");
    fs::create_dir_all(&blobs).unwrap();
    fs::copy(gguf, blobs.join(format!("sha256-{digest}"))).unwrap();
    // The template layer's blob is not a model and must not be picked.
    fs::write(blobs.join("sha256-0000"), "{{ .Prompt }}").unwrap();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "layers": [
            {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:0000", "size": 13},
            {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{digest}"), "size": 1},
        ]
    });
    let dir = root.join("manifests/models.example/library").join(model);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(tag), manifest.to_string()).unwrap();
}

fn scan(home: &Path, models: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["models", "scan"])
        .args(args)
        .env("HOME", home)
        .env("ASSAY_MODELS", models)
        .env_remove("OLLAMA_MODELS")
        .env_remove("HF_HOME")
        .env_remove("HF_HUB_CACHE")
        .output()
        .expect("assay runs")
}

#[test]
fn scan_registers_the_models_other_tools_hold() {
    let home = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    // Default places under HOME.
    ollama_store(&home.path().join(".ollama/models"), "qwen3", "4b", &fixture("qwen3.gguf"));
    let lm = home.path().join(".lmstudio/models/someone/Phi-3-GGUF");
    fs::create_dir_all(&lm).unwrap();
    fs::copy(fixture("phi3.gguf"), lm.join("phi3-mini.Q4_K_M.gguf")).unwrap();
    fs::write(lm.join("mmproj-phi3.gguf"), b"not loaded").unwrap();
    let hf = home.path().join(".cache/huggingface/hub/models--org--Gemma-2-GGUF");
    fs::create_dir_all(hf.join("blobs")).unwrap();
    fs::create_dir_all(hf.join("snapshots/abc123")).unwrap();
    fs::copy(fixture("gemma2.gguf"), hf.join("blobs/f00d")).unwrap();
    std::os::unix::fs::symlink("../../blobs/f00d", hf.join("snapshots/abc123/gemma-2.gguf")).unwrap();
    fs::write(hf.join("snapshots/abc123/big-00001-of-00002.gguf"), b"part").unwrap();

    let dry = common::ok(scan(home.path(), models.path(), &["--dry-run", "--json"]));
    let found: serde_json::Value = serde_json::from_str(&dry).unwrap();
    let names: Vec<&str> = found.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "qwen3:4b",
            "someone/Phi-3-GGUF/mmproj-phi3.gguf",
            "someone/Phi-3-GGUF/phi3-mini.Q4_K_M.gguf",
            "org/Gemma-2-GGUF/big-00001-of-00002.gguf",
            "org/Gemma-2-GGUF/gemma-2.gguf",
        ]
    );
    assert!(
        !models.path().join(assay::models::registry::USER_MODELS_FILE).exists(),
        "a dry run registers nothing"
    );

    let out = common::ok(scan(home.path(), models.path(), &["--json"]));
    let scanned: serde_json::Value = serde_json::from_str(&out).unwrap();
    let by_name = |name: &str| {
        scanned
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {out}"))
            .clone()
    };
    let qwen = by_name("qwen3:4b");
    assert_eq!((qwen["outcome"].as_str(), qwen["id"].as_str()), (Some("added"), Some("qwen3-4b")));
    assert_eq!(by_name("someone/Phi-3-GGUF/phi3-mini.Q4_K_M.gguf")["outcome"], "added");
    assert_eq!(by_name("org/Gemma-2-GGUF/gemma-2.gguf")["id"], "org-gemma-2-gguf-gemma-2");
    let projector = by_name("someone/Phi-3-GGUF/mmproj-phi3.gguf");
    assert_eq!(projector["outcome"], "skipped");
    assert!(projector["reason"].as_str().unwrap().contains("vision projector"));
    assert!(by_name("org/Gemma-2-GGUF/big-00001-of-00002.gguf")["reason"]
        .as_str()
        .unwrap()
        .contains("split GGUF"));

    // Registered by reference: the registry lists them, verified, at the tools' own paths.
    let list = common::ok(
        Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(["models", "list", "--json"])
            .env("ASSAY_MODELS", models.path())
            .output()
            .unwrap(),
    );
    let listed: serde_json::Value = serde_json::from_str(&list).unwrap();
    let qwen = listed.as_array().unwrap().iter().find(|m| m["id"] == "qwen3-4b").expect("listed");
    assert_eq!(qwen["arch"], "qwen3");
    assert_eq!(qwen["state"], "verified");
    assert!(qwen["path"].as_str().unwrap().contains("/blobs/sha256-"), "{qwen}");

    // A second scan finds the same files and adds nothing.
    let again = common::ok(scan(home.path(), models.path(), &[]));
    assert!(again.contains("already registered as qwen3-4b"), "{again}");
    assert!(again.trim_end().ends_with("5 found, 0 added"), "{again}");
}

#[test]
fn scan_flags_point_at_other_folders_and_unsupported_files_are_skipped() {
    let home = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let garbage = elsewhere.path().join("lm/pub/repo");
    fs::create_dir_all(&garbage).unwrap();
    fs::write(garbage.join("broken.gguf"), b"this is not a model").unwrap();
    let out = common::ok(scan(
        home.path(),
        models.path(),
        &["--lm-studio", elsewhere.path().join("lm").to_str().unwrap()],
    ));
    assert!(out.contains("skipped\tpub/repo/broken.gguf") && out.contains("not a usable GGUF"), "{out}");
    assert!(out.trim_end().ends_with("1 found, 0 added"), "{out}");
}
