//! GGUF model files (`assay models add FILE`): not GGUF, empty, truncated, an unknown version,
//! and hostile headers (counts and lengths far beyond the file, a zero alignment, a tensor
//! shape whose size overflows). The files are written byte by byte here. Nothing may be
//! registered: the models dir stays as it was.

use crate::common::{assay_command, tree};

const STRING: u32 = 8;
const U32: u32 = 4;
const F32_TYPE: u32 = 0;

/// A GGUF v3 file: header, metadata, tensor infos, then `data` after 32-byte alignment.
struct Gguf {
    version: u32,
    metadata: Vec<(String, u32, Vec<u8>)>,
    tensors: Vec<(String, Vec<u64>, u32, u64)>,
    data: Vec<u8>,
}

fn string(s: &str) -> Vec<u8> {
    let mut out = (s.len() as u64).to_le_bytes().to_vec();
    out.extend(s.as_bytes());
    out
}

impl Gguf {
    fn valid() -> Self {
        Gguf {
            version: 3,
            metadata: vec![
                ("general.architecture".into(), STRING, string("llama")),
                ("general.name".into(), STRING, string("tiny")),
            ],
            tensors: vec![("weight".into(), vec![4, 2], F32_TYPE, 0)],
            data: vec![0u8; 32],
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(self.version.to_le_bytes());
        out.extend((self.tensors.len() as u64).to_le_bytes());
        out.extend((self.metadata.len() as u64).to_le_bytes());
        for (key, kind, value) in &self.metadata {
            out.extend(string(key));
            out.extend(kind.to_le_bytes());
            out.extend(value);
        }
        for (name, dims, dtype, offset) in &self.tensors {
            out.extend(string(name));
            out.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(dtype.to_le_bytes());
            out.extend(offset.to_le_bytes());
        }
        while out.len() % 32 != 0 {
            out.push(0);
        }
        out.extend(&self.data);
        out
    }
}

fn cases() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    let valid = Gguf::valid().bytes();
    let with = |change: &dyn Fn(&mut Gguf)| {
        let mut gguf = Gguf::valid();
        change(&mut gguf);
        gguf.bytes()
    };
    let mut huge_count = valid.clone();
    huge_count[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut huge_string = valid.clone();
    huge_string[24..32].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    vec![
        ("a text file", b"This is not a model, it is a note.\n".to_vec(), vec!["not a usable GGUF model", "unknown magic"]),
        ("an empty file", Vec::new(), vec!["not a usable GGUF model", "ends inside its header (0 bytes)"]),
        ("only the magic", b"GGUF".to_vec(), vec!["not a usable GGUF model", "ends inside its header (4 bytes)"]),
        ("cut inside the metadata", valid[..40].to_vec(), vec!["not a usable GGUF model", "needs at least 50 bytes, only 16 remaining"]),
        ("an unknown version", with(&|g| g.version = 99), vec!["not a usable GGUF model", "unsupported magic/version"]),
        ("a tensor count beyond the file", huge_count, vec!["not a usable GGUF model", "tensor_count"]),
        ("a key length beyond the file", huge_string, vec!["not a usable GGUF model", "string length"]),
        (
            "an array length beyond the file",
            with(&|g| {
                let mut value = STRING.to_le_bytes().to_vec();
                value.extend((1u64 << 29).to_le_bytes());
                g.metadata.push(("tokenizer.ggml.tokens".into(), 9, value));
            }),
            vec!["not a usable GGUF model", "array of 536870912 elements"],
        ),
        (
            "a context of 2^32 - 1 tokens",
            with(&|g| g.metadata.push(("llama.context_length".into(), U32, u32::MAX.to_le_bytes().to_vec()))),
            vec!["not a usable GGUF model", "llama.context_length is 4294967295; a context of 1 to 1048576 tokens is supported"],
        ),
        (
            "a context whose RoPE tables need gigabytes",
            with(&|g| {
                g.metadata.push(("llama.context_length".into(), U32, 1_000_000u32.to_le_bytes().to_vec()));
                g.metadata.push(("llama.rope.dimension_count".into(), U32, 4096u32.to_le_bytes().to_vec()));
            }),
            vec!["not a usable GGUF model", "needs 15625 MiB of RoPE tables (at most 512 MiB)"],
        ),
        (
            "more blocks than tensors",
            with(&|g| g.metadata.push(("llama.block_count".into(), U32, u32::MAX.to_le_bytes().to_vec()))),
            vec!["not a usable GGUF model", "llama.block_count is 4294967295, but the file has 1 tensors"],
        ),
        ("no architecture", with(&|g| g.metadata.remove(0).2.clear()), vec!["not a usable GGUF model", "metadata has no general.architecture"]),
        ("a zero alignment", with(&|g| g.metadata.push(("general.alignment".into(), U32, 0u32.to_le_bytes().to_vec()))), vec!["not a usable GGUF model", "malformed header"]),
        ("a tensor size that overflows", with(&|g| g.tensors[0].1 = vec![1 << 40, 1 << 40]), vec!["not a usable GGUF model", "tensor weight: impossible shape"]),
        ("truncated tensor data", with(&|g| g.data.truncate(8)), vec!["not a usable GGUF model", "file is truncated: tensor weight ends at byte"]),
    ]
}

#[test]
fn each_bad_gguf_is_named_and_nothing_is_registered() {
    let cases = cases();
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let db = tmp.path().join("runs.sqlite");
    for (what, bytes, needles) in &cases {
        let file = tmp.path().join("model.gguf");
        std::fs::write(&file, bytes).unwrap();
        let before = tree(tmp.path());
        let out = assay_command(&["models", "add", file.to_str().unwrap()], &db).env("ASSAY_MODELS", &models).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(stderr.contains("model.gguf"), "{what}: names the file: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "{what}: stderr lacks {needle:?}: {stderr}");
        }
        assert!(!stderr.contains("panicked") && stderr.len() < 4000, "{what}: {stderr}");
        assert!(tree(tmp.path()) == before, "{what}: something was written");
        assert!(!models.exists(), "{what}: the models dir was created");
        eprintln!("ok: {what}: {}", stderr.trim());
    }
    // The harness itself: the well-formed file is accepted.
    let file = tmp.path().join("model.gguf");
    std::fs::write(&file, Gguf::valid().bytes()).unwrap();
    let out = assay_command(&["models", "add", file.to_str().unwrap()], &db).env("ASSAY_MODELS", &models).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{} GGUF cases", cases.len());
}

/// candle's reader builds a 32-byte value for each metadata array element: 40 million 1-byte
/// elements (a 40 MB file) asked for 1.3 GB. The header is scanned first and such an array is
/// refused by its key, in 1 GB of address space, before candle reads it.
#[test]
fn a_metadata_array_beyond_any_vocabulary_is_refused_before_it_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let db = tmp.path().join("runs.sqlite");
    let mut gguf = Gguf::valid();
    let mut value = 0u32.to_le_bytes().to_vec(); // u8 elements
    value.extend(40_000_000u64.to_le_bytes());
    value.resize(value.len() + 40_000_000, 1);
    gguf.metadata.push(("tokenizer.ggml.token_type".into(), 9, value));
    let file = tmp.path().join("model.gguf");
    std::fs::write(&file, gguf.bytes()).unwrap();
    let script = format!("ulimit -v 1000000; exec '{}' models add '{}'", env!("CARGO_BIN_EXE_assay"), file.display());
    let out = std::process::Command::new("sh").arg("-c").arg(script).env("ASSAY_DB", &db).env("ASSAY_MODELS", &models).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("model.gguf") && stderr.contains("metadata tokenizer.ggml.token_type: an array of 40000000 elements"), "{stderr}");
    assert!(!models.exists());
}

/// A GGUF's chat template is the model author's code: nested loops stop on the fuel budget
/// and a template that writes without end stops at the size cap, each with an error naming the
/// file, instead of running for minutes and gigabytes.
#[test]
fn a_runaway_chat_template_stops_with_a_clear_error() {
    use assay::llm::chat_template::{ChatFormat, ChatMessage};
    let cases = [
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "more than 5000000 steps"),
        ("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "passed 16 MiB"),
    ];
    for (source, needle) in cases {
        let format = ChatFormat::Template {
            source: source.into(),
            bos_token: String::new(),
            eos_token: String::new(),
            path: "hostile.gguf".into(),
        };
        let err = format.render(&[ChatMessage::user("hi")]).unwrap_err().to_string();
        assert!(err.contains("hostile.gguf") && err.contains(needle), "{err}");
    }
}

/// `general.name` and `general.architecture` are the file author's text: `models add` and
/// `models list` print them with escape sequences made visible (they could retitle, clear or
/// hijack the terminal).
#[test]
fn escape_sequences_in_gguf_metadata_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let db = tmp.path().join("runs.sqlite");
    let mut gguf = Gguf::valid();
    gguf.metadata[1].2 = string("tiny\x1b]0;owned\x07\x1b[2J\u{9b}31m");
    let file = tmp.path().join("model.gguf");
    std::fs::write(&file, gguf.bytes()).unwrap();
    let added = assay_command(&["models", "add", file.to_str().unwrap()], &db).env("ASSAY_MODELS", &models).output().unwrap();
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let listed = assay_command(&["models", "list"], &db).env("ASSAY_MODELS", &models).output().unwrap();
    assert!(listed.status.success());
    for out in [&added.stdout, &listed.stdout] {
        let text = String::from_utf8_lossy(out);
        assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{9b}'), "{text:?}");
        assert!(text.contains("tiny\\u{1b}]0;owned\\u{7}"), "{text:?}");
    }
}

/// A `tokenizer.json` dropped beside a registered GGUF replaces its tokenizer at load (issue
/// 36: `models list` still said only "sha256 verified"). The list names the file, its JSON
/// carries it, and the model's identity (the key of its cached generations) changes with it.
#[test]
fn a_tokenizer_beside_the_file_is_shown_and_counted_in_the_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let db = tmp.path().join("runs.sqlite");
    let folder = tmp.path().join("downloads");
    std::fs::create_dir(&folder).unwrap();
    let file = folder.join("model.gguf");
    std::fs::write(&file, Gguf::valid().bytes()).unwrap();
    let added = assay_command(&["models", "add", file.to_str().unwrap(), "--id", "tiny"], &db).env("ASSAY_MODELS", &models).output().unwrap();
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let list = |args: &[&str]| {
        let out = assay_command(args, &db).env("ASSAY_MODELS", &models).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = list(&["models", "list"]);
    assert!(!before.contains("tokenizer:"), "{before}");
    let identity = || {
        let registry = assay::models::registry::Registry::load_in(models.clone()).unwrap();
        registry.identity(registry.entry("tiny").unwrap()).unwrap()
    };
    let plain = identity();
    assert_eq!(plain.len(), 64, "{plain}");
    std::fs::write(folder.join("tokenizer.json"), br#"{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"}}"#).unwrap();
    let after = list(&["models", "list"]);
    assert!(after.contains("tokenizer.json replaces the GGUF's own"), "{after}");
    let json: serde_json::Value = serde_json::from_str(&list(&["models", "list", "--json"])).unwrap();
    let tiny = json.as_array().unwrap().iter().find(|m| m["id"] == "tiny").unwrap();
    assert!(tiny["tokenizer_override"].as_str().unwrap().ends_with("tokenizer.json"), "{tiny}");
    let with_json = identity();
    assert!(with_json.starts_with(&format!("{plain}+tokenizer.json:")) && with_json.len() == 64 + 16 + 64, "{with_json}");
}

/// Changes of the user's models file take the models folder's lock (issue 36): eight `models
/// add` started at once each read the file, added their entry and wrote it back, and a later
/// write dropped earlier entries. Three rounds; every entry must be there after each.
#[test]
fn concurrent_adds_keep_every_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    for round in 0..3 {
        let models = tmp.path().join(format!("models-{round}"));
        let children: Vec<_> = (0..8)
            .map(|i| {
                let mut gguf = Gguf::valid();
                gguf.metadata[1].2 = string(&format!("tiny {round} {i}"));
                let file = tmp.path().join(format!("model-{round}-{i}.gguf"));
                std::fs::write(&file, gguf.bytes()).unwrap();
                assay_command(&["models", "add", file.to_str().unwrap(), "--id", &format!("m{i}")], &db)
                    .env("ASSAY_MODELS", &models)
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success(), "round {round}: an add failed");
        }
        let registry = assay::models::registry::Registry::load_in(models.clone()).unwrap();
        for i in 0..8 {
            assert!(registry.entry(&format!("m{i}")).is_ok(), "round {round}: m{i} was lost");
        }
    }
}
