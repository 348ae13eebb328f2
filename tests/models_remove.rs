//! `assay models remove ID` through the real CLI, in a models folder of the test's own: a
//! served model's entry is forgotten, a model added by reference leaves its file where it is,
//! a pulled built-in model loses exactly the files `pull` put in its folder (anything else there
//! stays, and so does the folder then), and an id that is not installed or not known is refused
//! with nothing changed.

use std::path::Path;
use std::process::{Command, Output};

const BUILT_IN: &str = "smollm2-135m-instruct";
const BUILT_IN_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

fn assay(args: &[&str], models: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_MODELS", models).output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn listed_ids(models: &Path) -> Vec<String> {
    let list: Vec<serde_json::Value> = serde_json::from_str(&ok(&assay(&["models", "list", "--json"], models))).unwrap();
    list.iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_served_model_is_forgotten_and_the_others_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    for id in ["first-served", "second-served"] {
        ok(&assay(&["models", "add-server", id, "--url", "http://127.0.0.1:9/v1", "--served-model", "m"], &models));
    }
    let said = ok(&assay(&["models", "remove", "first-served"], &models));
    assert!(said.contains("removed served model first-served") && said.contains("untouched"), "{said}");
    let file = std::fs::read_to_string(models.join("user-models.toml")).unwrap();
    assert!(!file.contains("first-served") && file.contains("second-served"), "{file}");
    let ids = listed_ids(&models);
    assert!(!ids.iter().any(|i| i == "first-served") && ids.iter().any(|i| i == "second-served"), "{ids:?}");
}

#[test]
fn a_pulled_model_loses_only_its_downloaded_files() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let folder = models.join(BUILT_IN);
    std::fs::create_dir_all(&folder).unwrap();
    // The file as `pull` names it (its bytes do not matter to removal), and a file of the user's.
    std::fs::write(folder.join(BUILT_IN_FILE), vec![7u8; 123_456]).unwrap();
    std::fs::write(folder.join("my-notes.txt"), "mine").unwrap();
    let said = ok(&assay(&["models", "remove", BUILT_IN], &models));
    assert!(said.contains("deleted") && said.contains("0.1 MB") && said.contains("pull"), "{said}");
    assert!(!folder.join(BUILT_IN_FILE).exists());
    assert_eq!(std::fs::read_to_string(folder.join("my-notes.txt")).unwrap(), "mine");
    // Still known (it is built in), now as not installed; removing again is refused.
    assert!(listed_ids(&models).iter().any(|i| i == BUILT_IN));
    let again = assay(&["models", "remove", BUILT_IN], &models);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not installed"));

    // With nothing else in it, the folder goes too.
    std::fs::remove_file(folder.join("my-notes.txt")).unwrap();
    std::fs::write(folder.join(BUILT_IN_FILE), b"x").unwrap();
    ok(&assay(&["models", "remove", BUILT_IN], &models));
    assert!(!folder.exists());
}

#[test]
fn a_model_added_by_reference_keeps_its_file_and_unknown_ids_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    // A real GGUF header is needed to add: the smallest model, registered where it lies.
    let installed: Vec<serde_json::Value> =
        serde_json::from_str(&ok(&Command::new(env!("CARGO_BIN_EXE_assay")).args(["models", "list", "--json"]).output().unwrap()))
            .unwrap();
    let Some(path) = installed.iter().find(|m| m["id"] == BUILT_IN).and_then(|m| m["path"].as_str()).filter(|p| Path::new(p).exists())
    else {
        panic!("{BUILT_IN} is not installed: run `assay models pull {BUILT_IN}`");
    };
    ok(&assay(&["models", "add", path, "--id", "by-reference"], &models));
    let said = ok(&assay(&["models", "remove", "by-reference"], &models));
    assert!(said.contains("was not deleted"), "{said}");
    assert!(Path::new(path).exists(), "the referenced file stays");
    assert!(!listed_ids(&models).iter().any(|i| i == "by-reference"));

    let before = std::fs::read_to_string(models.join("user-models.toml")).unwrap();
    let out = assay(&["models", "remove", "no-such-model"], &models);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-model") && err.contains(BUILT_IN), "lists the known ids: {err}");
    assert_eq!(std::fs::read_to_string(models.join("user-models.toml")).unwrap(), before);
}
