//! The user's models file (`<models dir>/user-models.toml`, what `assay models add` writes):
//! malformed, non-UTF-8, wrong-typed, inconsistent, huge, and hostile (file names and ids with
//! paths, an id that shadows a built-in model). Nothing in the models dir may change.

use crate::common::{assay_command, tree};

const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn entry(fields: &str) -> String {
    format!("[[model]]\n{fields}\n")
}

fn good_file() -> String {
    format!("[[model.files]]\nname = \"mine.gguf\"\nsha256 = \"{SHA}\"\nsize = 10\n")
}

fn cases() -> Vec<(&'static str, Vec<u8>, Vec<String>)> {
    let model = |fields: &str, files: &str| format!("{}{files}", entry(fields)).into_bytes();
    let mut huge = entry(&format!("id = \"mine\"\narch = \"llama\"\ndescription = \"{}\" x", "d".repeat(100 << 20))).into_bytes();
    huge.extend(good_file().into_bytes());
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        ("malformed TOML", b"[[model]\nid = \"mine\"\n".to_vec(), s(&["user-models.toml", "line 1"])),
        ("non-UTF-8", [b"[[model]]\nid = \"mine\"\narch = \"llama\"\ndescription = \"\xff\"\n".to_vec(), good_file().into_bytes()].concat(), s(&["user-models.toml", "UTF-8"])),
        ("wrong type", model("id = \"mine\"\narch = \"llama\"", &format!("[[model.files]]\nname = \"mine.gguf\"\nsha256 = \"{SHA}\"\nsize = \"big\"\n")), s(&["user-models.toml", "line 7", "invalid type"])),
        ("unknown field", model("id = \"mine\"\narch = \"llama\"\nquant = \"q4\"", &good_file()), s(&["user-models.toml", "line 4", "unknown field `quant`"])),
        ("missing field", model("id = \"mine\"\narch = \"llama\"", "[[model.files]]\nname = \"mine.gguf\"\nsize = 10\n"), s(&["user-models.toml", "missing field `sha256`"])),
        ("bad sha256", model("id = \"mine\"\narch = \"llama\"", "[[model.files]]\nname = \"mine.gguf\"\nsha256 = \"abc\"\nsize = 10\n"), s(&["user-models.toml", "model[0] (mine).files[0].sha256", "64 hex digits"])),
        ("file name with a path", model("id = \"mine\"\narch = \"llama\"", &format!("[[model.files]]\nname = \"../../etc/passwd\"\nsha256 = \"{SHA}\"\nsize = 10\n")), s(&["user-models.toml", "files[0].name", "plain file name"])),
        ("hidden file name", model("id = \"mine\"\narch = \"llama\"", &format!("[[model.files]]\nname = \".verified\"\nsha256 = \"{SHA}\"\nsize = 10\n")), s(&["user-models.toml", "files[0].name", "plain file name"])),
        ("id with a path", model("id = \"../mine\"\narch = \"llama\"", &good_file()), s(&["user-models.toml", "(../mine).id", "lowercase letters"])),
        ("duplicate id", [model("id = \"mine\"\narch = \"llama\"", &good_file()), model("id = \"mine\"\narch = \"llama\"", &good_file())].concat(), s(&["user-models.toml", "model[1] (mine).id", "appears twice"])),
        ("shadows a built-in model", model("id = \"smollm2-135m-instruct\"\narch = \"llama\"", &good_file()), s(&["user-models.toml", "(smollm2-135m-instruct).id", "already a built-in model id"])),
        ("no files", model("id = \"mine\"\narch = \"llama\"\nfiles = []", ""), s(&["user-models.toml", "(mine).files", "at least one file"])),
        ("a 100 MB line with an error", huge, s(&["user-models.toml", "line 4"])),
    ]
}

#[test]
fn each_bad_models_file_is_named_and_changes_nothing() {
    let cases = cases();
    for (what, content, needles) in &cases {
        let tmp = tempfile::tempdir().unwrap();
        let models = tmp.path().join("models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(models.join("user-models.toml"), content).unwrap();
        let before = tree(tmp.path());
        let db = tmp.path().join("runs.sqlite");
        let out = assay_command(&["models", "list"], &db).env("ASSAY_MODELS", &models).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle.as_str()), "{what}: stderr lacks {needle:?}: {stderr}");
        }
        assert!(!stderr.contains("panicked") && stderr.len() < 4000, "{what}: {stderr}");
        assert!(tree(tmp.path()) == before, "{what}: the models dir changed");
        eprintln!("ok: {what}: {}", stderr.trim());
    }
    eprintln!("{} models file cases", cases.len());
}
