//! `dataset.toml` and `questions.jsonl`: malformed, truncated, huge, non-UTF-8, wrong-typed
//! and hostile (path traversal in ids, a corpus or questions file outside the dataset folder,
//! a symbolic link out of it, a 100 MB line).

use crate::common::{dataset_copy, expect_rejected, replace_line, seeded_db};
use std::path::Path;

struct Case {
    what: &'static str,
    /// Rewrites the dataset copy; undone after the case.
    breaks: Box<dyn Fn(&Path)>,
    needles: &'static [&'static str],
}

fn case(what: &'static str, breaks: impl Fn(&Path) + 'static, needles: &'static [&'static str]) -> Case {
    Case { what, breaks: Box::new(breaks), needles }
}

fn questions_line(line: usize, text: &'static str) -> impl Fn(&Path) {
    move |ds: &Path| replace_line(&ds.join("questions.jsonl"), line, text)
}

fn manifest(text: &'static [u8]) -> impl Fn(&Path) {
    move |ds: &Path| std::fs::write(ds.join("dataset.toml"), text).unwrap()
}

fn cases() -> Vec<Case> {
    vec![
        // dataset.toml
        case("malformed TOML", manifest(b"name = \"trailgear\ncorpus = \"corpus\"\n"), &["dataset.toml:1", "invalid dataset.toml"]),
        case("non-UTF-8 TOML", manifest(b"name = \"trailgear\"\ndescription = \"\xff\xfe\"\n"), &["dataset.toml:2", "not valid UTF-8"]),
        case("wrong type in TOML", manifest(b"description = \"x\"\nname = 5\n"), &["dataset.toml:2", "field `name`", "expected a string"]),
        case("unknown key in TOML", manifest(b"name = \"x\"\ncorpse = \"corpus\"\n"), &["dataset.toml:2", "unknown field `corpse`"]),
        case("missing name", manifest(b"corpus = \"corpus\"\n"), &["dataset.toml", "missing field `name`"]),
        case("empty name", manifest(b"name = \"  \"\n"), &["dataset.toml", "field `name` must not be empty"]),
        case("corpus outside the folder", manifest(b"name = \"x\"\ncorpus = \"../../etc\"\n"), &["dataset.toml", "corpus points outside the dataset folder", "../../etc"]),
        case("absolute corpus path", manifest(b"name = \"x\"\ncorpus = \"/etc\"\n"), &["dataset.toml", "corpus points outside the dataset folder", "/etc"]),
        case("prompt outside the folder", manifest(b"name = \"x\"\nprompt = \"../../etc/passwd\"\n"), &["dataset.toml", "prompt points outside the dataset folder", "../../etc/passwd"]),
        case("missing prompt file", manifest(b"name = \"x\"\nprompt = \"rag-prompt.md\"\n"), &["dataset.toml", "field `prompt`", "`rag-prompt.md` is not a file"]),
        case("questions outside the folder", manifest(b"name = \"x\"\nquestions = \"../trailgear/questions.jsonl\"\n"), &["dataset.toml", "questions points outside the dataset folder"]),
        case(
            "corpus through a symbolic link out of the folder",
            |ds: &Path| {
                std::fs::write(ds.join("dataset.toml"), "name = \"x\"\ncorpus = \"manuals\"\n").unwrap();
                std::fs::rename(ds.join("corpus"), ds.parent().unwrap().join("outside")).unwrap();
                std::os::unix::fs::symlink(ds.parent().unwrap().join("outside"), ds.join("manuals")).unwrap();
            },
            &["dataset.toml", "corpus points outside the dataset folder", "manuals"],
        ),
        case("missing questions file", |ds: &Path| std::fs::remove_file(ds.join("questions.jsonl")).unwrap(), &["questions.jsonl: cannot read"]),
        case(
            "questions file is a folder",
            |ds: &Path| {
                std::fs::remove_file(ds.join("questions.jsonl")).unwrap();
                std::fs::create_dir(ds.join("questions.jsonl")).unwrap();
            },
            &["questions.jsonl: cannot read"],
        ),
        // questions.jsonl
        case("malformed line", questions_line(7, r#"{"id": "q007", "question": "broken"#), &["questions.jsonl:7", "invalid JSON"]),
        case(
            "truncated file",
            |ds: &Path| {
                let path = ds.join("questions.jsonl");
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
            },
            &["questions.jsonl:90", "invalid JSON", "EOF"],
        ),
        case("empty file", |ds: &Path| std::fs::write(ds.join("questions.jsonl"), "\n\n").unwrap(), &["questions.jsonl: no questions"]),
        case("a line that is not an object", questions_line(4, r#"["q004", "What?"]"#), &["questions.jsonl:4", "expected a JSON object"]),
        case("duplicate id", questions_line(9, r#"{"id": "q003", "question": "Again?", "answer": "Yes."}"#), &["questions.jsonl:9", "duplicate id \"q003\"", "line 3"]),
        case("missing id", questions_line(6, r#"{"question": "Who?", "answer": "Me."}"#), &["questions.jsonl:6", "`id`", "missing (required)"]),
        case("missing answer", questions_line(4, r#"{"id": "q004", "question": "What now?"}"#), &["questions.jsonl:4", "`answer`", "required"]),
        case("empty question", questions_line(8, r#"{"id": "q008", "question": " ", "answer": "A"}"#), &["questions.jsonl:8", "`question`", "must not be empty"]),
        case("wrong type: bool as string", questions_line(5, r#"{"id": "q005", "question": "Q?", "answer": "A", "refuse": "no"}"#), &["questions.jsonl:5", "`refuse`", "true or false"]),
        case("wrong type: list as string", questions_line(5, r#"{"id": "q005", "question": "Q?", "answer": "A", "citations": "aquapure-500"}"#), &["questions.jsonl:5", "`citations`", "a list of strings"]),
        case("wrong type: number id", questions_line(5, r#"{"id": 5, "question": "Q?", "answer": "A"}"#), &["questions.jsonl:5", "`id`", "expected a string, found 5"]),
        case("unknown field", questions_line(2, r#"{"id": "q002", "question": "Q?", "answr": "A"}"#), &["questions.jsonl:2", "`answr`", "unknown field"]),
        case("unknown doc", questions_line(2, r#"{"id": "q002", "question": "Q?", "answer": "A", "doc": "no-such-manual"}"#), &["questions.jsonl:2", "`doc`", "no-such-manual"]),
        case("path-traversal doc", questions_line(2, r#"{"id": "q002", "question": "Q?", "answer": "A", "doc": "../../etc/passwd"}"#), &["questions.jsonl:2", "`doc`", "unknown document"]),
        case("path-traversal citation", questions_line(2, r#"{"id": "q002", "question": "Q?", "answer": "A", "citations": ["../corpus/x#1"]}"#), &["questions.jsonl:2", "`citations`", "unknown document"]),
        case("path-traversal id", questions_line(3, r#"{"id": "../../etc/passwd", "question": "Q?", "answer": "A"}"#), &["questions.jsonl:3", "`id`", "contains '/'"]),
        case("markup in id", questions_line(3, r#"{"id": "<script>", "question": "Q?", "answer": "A"}"#), &["questions.jsonl:3", "`id`", "contains '<'"]),
        case("id starting with a dot", questions_line(3, r#"{"id": "..", "question": "Q?", "answer": "A"}"#), &["questions.jsonl:3", "`id`", "must not start with '.'"]),
        case(
            "non-UTF-8 line",
            |ds: &Path| {
                let path = ds.join("questions.jsonl");
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.extend_from_slice(b"{\"id\": \"q999\", \"question\": \"\xff\xfe\", \"answer\": \"x\"}\n");
                std::fs::write(&path, bytes).unwrap();
            },
            &["questions.jsonl:91", "not valid UTF-8"],
        ),
        case(
            "UTF-16 file",
            |ds: &Path| {
                let text = std::fs::read_to_string(ds.join("questions.jsonl")).unwrap();
                let mut bytes = vec![0xFF, 0xFE];
                bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
                std::fs::write(ds.join("questions.jsonl"), bytes).unwrap();
            },
            &["questions.jsonl:1", "not valid UTF-8"],
        ),
        case(
            "deeply nested JSON",
            |ds: &Path| {
                let line = format!("{{\"id\": \"q001\", \"question\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
                let path = ds.join("questions.jsonl");
                std::fs::write(&path, line + "\n").unwrap();
            },
            &["questions.jsonl:1", "invalid JSON", "recursion limit exceeded"],
        ),
        case(
            "a 100 MB single line",
            |ds: &Path| {
                let path = ds.join("questions.jsonl");
                let mut line = String::with_capacity(100 << 20);
                line.push_str(r#"{"id": "q001", "question": ""#);
                line.push_str(&"a".repeat(100 << 20));
                line.push_str(r#"", "answer": "A"}"#);
                std::fs::write(&path, line).unwrap();
            },
            &["questions.jsonl:1", "line is over the limit of 1048576 bytes"],
        ),
        case(
            "a long value of the wrong type",
            |ds: &Path| {
                let line = format!("{{\"id\": \"q001\", \"question\": \"Q?\", \"answer\": \"A\", \"tags\": \"{}\"}}", "x".repeat(900_000));
                std::fs::write(ds.join("questions.jsonl"), line + "\n").unwrap();
            },
            &["questions.jsonl:1", "`tags`", "a list of strings", "(900002 bytes)"],
        ),
    ]
}

#[test]
fn each_bad_dataset_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let run = ["run", ds, "--target", "answers:answers-careful.jsonl"];
    let cases = cases();
    for case in &cases {
        let scratch = tempfile::tempdir().unwrap();
        let broken = dataset_copy(scratch.path());
        (case.breaks)(&broken);
        let args = ["run", broken.to_str().unwrap(), "--target", "answers:answers-careful.jsonl"];
        let stderr = expect_rejected(&args, &db, &before, case.needles);
        assert!(!broken.join(".assay").exists(), "{}: nothing written into the dataset", case.what);
        eprintln!("ok: {}: {}", case.what, stderr.trim());
    }
    eprintln!("{} dataset cases", cases.len());
    // The harness itself: the untouched copy still runs.
    crate::common::ok(crate::common::assay(&run, &db));
}

#[test]
fn a_byte_order_mark_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let path = dataset.join("questions.jsonl");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&path).unwrap());
    std::fs::write(&path, bytes).unwrap();
    let loaded = assay::dataset::load_dataset(&dataset).unwrap();
    assert_eq!(loaded.questions[0].id, "q001");
}
