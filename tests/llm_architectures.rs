//! Differential test of every supported architecture against llama.cpp: tiny GGUF files with
//! random weights (one per architecture and RoPE scaling, written by
//! scripts/llm_arch_reference.py) run through Assay's runtime, and the logits at every
//! position are compared with llama.cpp's on the same tokens. Random weights exercise each
//! path (fused projections, partial rotary, q/k norms, soft-capping, sliding windows, Llama 3
//! frequency factors, linear and YaRN scaling) without a model download; the real-model
//! greedy checks (llm_greedy.rs) stay.

use std::path::{Path, PathBuf};

use assay::llm::device::DeviceChoice;
use assay::llm::model::LanguageModel;
use sha2::{Digest, Sha256};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/arch")
}

/// The device under test: the CPU, or `ASSAY_TEST_DEVICE` (`cuda` on a GPU machine with a
/// CUDA build: scripts/gpu_check.sh runs this test there).
fn device() -> DeviceChoice {
    match std::env::var("ASSAY_TEST_DEVICE") {
        Ok(name) => name.parse().expect("ASSAY_TEST_DEVICE: cpu, cuda or metal"),
        Err(_) => DeviceChoice::Cpu,
    }
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures().join("reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference.json parses")
}

/// Runs one fixture model and returns (max |Δ| over all logits, largest |logit| in the
/// reference, positions whose argmax differs).
fn compare(name: &str) -> (f32, f32, Vec<usize>) {
    let reference = reference();
    let tokens: Vec<u32> = reference["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| t.as_u64().expect("token id") as u32)
        .collect();
    let model_ref = &reference["models"][name];
    let path = fixtures().join(model_ref["file"].as_str().expect("file"));
    let bytes = std::fs::read(&path).expect("fixture model");
    assert_eq!(
        format!("{:x}", Sha256::digest(&bytes)),
        model_ref["sha256"].as_str().expect("sha256"),
        "{name}: the fixture file is not the one the reference was computed on"
    );
    let model = LanguageModel::load(&path, name, device()).expect("model loads");
    assert_eq!(
        model_ref["architecture"].as_str(),
        Some(format!("{:?}", model.config().architecture).to_lowercase().as_str())
    );
    let mut cache = model.new_cache();
    let ours: Vec<Vec<f32>> = model
        .forward(&tokens, &mut cache, true)
        .expect("forward")
        .to_vec2()
        .expect("logits");
    let theirs: Vec<Vec<f32>> = model_ref["logits"]
        .as_array()
        .expect("logits")
        .iter()
        .map(|row| row.as_array().expect("row").iter().map(|x| x.as_f64().expect("logit") as f32).collect())
        .collect();
    assert_eq!(ours.len(), theirs.len(), "{name}: positions");
    let argmax = |row: &[f32]| {
        row.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i)
            .unwrap_or(0)
    };
    let mut max_diff = 0f32;
    let mut scale = 0f32;
    let mut argmax_differs = Vec::new();
    for (pos, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a.len(), b.len(), "{name}: vocabulary at position {pos}");
        for (x, y) in a.iter().zip(b) {
            max_diff = max_diff.max((x - y).abs());
            scale = scale.max(y.abs());
        }
        if argmax(a) != argmax(b) {
            argmax_differs.push(pos);
        }
    }
    (max_diff, scale, argmax_differs)
}

fn assert_matches_llama_cpp(name: &str) {
    let (max_diff, scale, argmax_differs) = compare(name);
    eprintln!("{name}: max |Δ| {max_diff:.2e} against a logit scale of {scale:.2}");
    // f32 on both sides; llama.cpp's GELU goes through an f16 table, hence 1e-3, not 1e-5.
    assert!(
        max_diff <= 1e-3 * scale.max(1.0),
        "{name}: logits differ from llama.cpp's by up to {max_diff} (scale {scale})"
    );
    assert!(argmax_differs.is_empty(), "{name}: argmax differs at positions {argmax_differs:?}");
}

#[test]
fn llama_matches_llama_cpp() {
    assert_matches_llama_cpp("llama");
}

#[test]
fn llama_with_linear_rope_scaling_matches_llama_cpp() {
    assert_matches_llama_cpp("llama-linear");
}

#[test]
fn llama3_frequency_factors_match_llama_cpp() {
    assert_matches_llama_cpp("llama3-freqs");
}

#[test]
fn qwen2_with_yarn_matches_llama_cpp() {
    assert_matches_llama_cpp("qwen2-yarn");
}

#[test]
fn qwen3_matches_llama_cpp() {
    assert_matches_llama_cpp("qwen3");
}

#[test]
fn phi3_matches_llama_cpp() {
    assert_matches_llama_cpp("phi3");
}

#[test]
fn gemma2_matches_llama_cpp() {
    assert_matches_llama_cpp("gemma2");
}

#[test]
fn gemma3_matches_llama_cpp() {
    assert_matches_llama_cpp("gemma3");
}

#[test]
fn every_reference_model_has_a_test() {
    let reference = reference();
    let names: Vec<&String> = reference["models"].as_object().expect("models").keys().collect();
    let tested = [
        "llama", "llama-linear", "llama3-freqs", "qwen2-yarn", "qwen3", "phi3", "gemma2", "gemma3",
    ];
    for name in names {
        assert!(tested.contains(&name.as_str()), "{name} has no test");
    }
}

#[test]
fn models_add_accepts_each_architecture_and_refuses_others() {
    let models = tempfile::tempdir().expect("temp dir");
    let mut registry = assay::models::registry::Registry::load_in(models.path().to_path_buf()).expect("registry");
    for (name, arch) in [("qwen3", "qwen3"), ("phi3", "phi3"), ("gemma2", "gemma2"), ("llama3-freqs", "llama")] {
        let entry = registry
            .add(&fixtures().join(format!("{name}.gguf")), Some(name))
            .expect("a supported architecture is added");
        assert_eq!(entry.arch, arch);
    }
    // The same file renamed to an architecture the runtime does not have (same length, so
    // the file stays well-formed).
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(fixtures().join("gemma2.gguf")).expect("fixture");
    let renamed = replace_all(&bytes, b"gemma2", b"gemma9");
    let path = dir.path().join("gemma9.gguf");
    std::fs::write(&path, renamed).expect("write");
    let err = registry.add(&path, None).expect_err("refused").to_string();
    assert!(
        err.contains("gemma9.gguf") && err.contains("`gemma9` is not supported") && err.contains("qwen3"),
        "{err}"
    );
    assert!(assay::models::registry::Registry::load_in(models.path().to_path_buf())
        .expect("registry")
        .entry("gemma9")
        .is_err());
}

fn replace_all(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}
