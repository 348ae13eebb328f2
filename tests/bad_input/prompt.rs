//! Prompt templates for the rag target (`--prompt FILE`): missing, not a file, malformed,
//! non-UTF-8, huge, and hostile (reading other files, runaway loops). A template is rendered
//! once with sample values before the run, so these fail before any model loads.

use crate::common::{dataset_copy, expect_rejected, seeded_db};

fn cases() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    let mut huge = b"{{ question }}\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 100 << 20));
    vec![
        ("syntax error", b"Question: {{ question \n".to_vec(), vec!["bad-prompt.md: invalid prompt template", "syntax error"]),
        ("unknown variable", b"Question: {{ questoin }}".to_vec(), vec!["bad-prompt.md: invalid prompt template", "undefined"]),
        ("fails when rendered", b"{{ chunks[99].text }} {{ question }}".to_vec(), vec!["bad-prompt.md: invalid prompt template", "undefined"]),
        ("non-UTF-8", b"Question: \xff\xfe {{ question }}".to_vec(), vec!["bad-prompt.md: cannot read the prompt template", "UTF-8"]),
        ("includes another file", b"{% include \"/etc/passwd\" %}{{ question }}".to_vec(), vec!["bad-prompt.md: invalid prompt template", "/etc/passwd"]),
        ("a runaway loop", b"{% for i in range(1000000000) %}{{ question }}{% endfor %}".to_vec(), vec!["bad-prompt.md: invalid prompt template", "range"]),
        // 10^10 iterations: without fuel this ran for minutes and gigabytes.
        ("nested loops", b"{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}{{ question }}".to_vec(), vec!["bad-prompt.md: invalid prompt template", "more than 5000000 steps"]),
        ("a 100 MB template", huge, vec!["bad-prompt.md", "over the limit of 1048576 bytes"]),
    ]
}

#[test]
fn each_bad_prompt_template_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let file = tmp.path().join("bad-prompt.md");
    let path = file.to_str().unwrap();
    let run = ["run", ds, "--target", "rag", "--model", "smollm2-135m-instruct", "--prompt", path, "--limit", "1"];
    let cases = cases();
    for (what, content, needles) in &cases {
        std::fs::write(&file, content).unwrap();
        let stderr = expect_rejected(&run, &db, &before, needles);
        assert!(!dataset.join(".assay").exists(), "{what}: no index was built");
        eprintln!("ok: {what}: {}", stderr.trim());
    }
    std::fs::remove_file(&file).unwrap();
    expect_rejected(&run, &db, &before, &["bad-prompt.md: cannot read the prompt template"]);
    std::fs::create_dir(&file).unwrap();
    expect_rejected(&run, &db, &before, &["bad-prompt.md: cannot read the prompt template"]);
    eprintln!("{} prompt cases", cases.len() + 2);
}

/// A dataset's own template (`prompt` in dataset.toml) is checked like `--prompt FILE`.
#[test]
fn a_bad_dataset_prompt_template_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    std::fs::write(dataset.join("prompt.md"), "Question: {{ questoin }}").unwrap();
    let ds = dataset.to_str().unwrap();
    let run = ["run", ds, "--target", "rag", "--model", "smollm2-135m-instruct", "--limit", "1"];
    let stderr = expect_rejected(&run, &db, &before, &["prompt.md: invalid prompt template", "undefined"]);
    assert!(!dataset.join(".assay").exists(), "no index was built");
    eprintln!("ok: {}", stderr.trim());
}
