//! Judge specs in a user judges folder (`--judges-dir`): malformed, wrong-typed, inconsistent,
//! huge, non-UTF-8 and hostile (a prompt path that leaves the folder, a name with a path).
//! Specs are checked before any model loads, so these need no model.

use crate::common::{dataset_copy, expect_rejected, seeded_db};

const GOOD_TOML: &str = "name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\n";
const GOOD_PROMPT: &str = "Question: {{ question }}\nAnswer: {{ answer }}\nIs it right?";

/// (what, spec file text, prompt file text, expected error parts).
fn cases() -> Vec<(&'static str, Vec<u8>, Vec<u8>, Vec<&'static str>)> {
    let spec = |text: &str| text.as_bytes().to_vec();
    let prompt = GOOD_PROMPT.as_bytes().to_vec();
    let mut huge = b"name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\ndescription = \"".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 2 << 20));
    huge.extend(b"\" oops\n");
    vec![
        ("malformed TOML", spec("name = \"mine\nprompt = \"mine.md\"\n"), prompt.clone(), vec!["mine.toml:1", "invalid"]),
        ("missing field", spec("name = \"mine\"\noutcomes = [\"No\", \"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "missing field `prompt`"]),
        ("wrong type", spec("name = \"mine\"\nprompt = \"mine.md\"\noutcomes = \"Yes\"\n"), prompt.clone(), vec!["mine.toml:3", "invalid type", "expected a sequence"]),
        ("unknown field", spec(&format!("{GOOD_TOML}outcome = [\"No\"]\n")), prompt.clone(), vec!["mine.toml:4", "unknown field `outcome`"]),
        ("one outcome", spec("name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "field `outcomes`", "at least two outcomes, found 1"]),
        ("duplicate outcome", spec("name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"Yes\", \"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "field `outcomes`", "`Yes` appears twice"]),
        ("values for other outcomes", spec(&format!("{GOOD_TOML}values = [0.0, 0.5, 1.0]\n")), prompt.clone(), vec!["mine.toml", "field `values`", "3 values for 2 outcomes"]),
        ("values not increasing", spec(&format!("{GOOD_TOML}values = [1.0, 0.0]\n")), prompt.clone(), vec!["mine.toml", "field `values`", "must increase"]),
        ("pass that is not an outcome", spec(&format!("{GOOD_TOML}pass = \"Maybe\"\n")), prompt.clone(), vec!["mine.toml", "field `pass`", "`Maybe` is not one of the outcomes"]),
        ("unknown input", spec(&format!("{GOOD_TOML}inputs = [\"secret\"]\n")), prompt.clone(), vec!["mine.toml", "field `inputs`", "unknown input `secret`"]),
        ("claims mode with other outcomes", spec("name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"Bad\", \"Good\"]\nmode = \"claims\"\n"), prompt.clone(), vec!["mine.toml", "field `outcomes`", "claims and statements modes"]),
        ("sides on a choice judge", spec(&format!("{GOOD_TOML}sides = [\"reference\"]\n")), prompt.clone(), vec!["mine.toml", "field `sides`", "only a statements judge"]),
        ("nothing_stated_fails without a reference", spec(&format!("{GOOD_TOML}inputs = [\"question\", \"answer\"]\nnothing_stated_fails = true\n")), prompt.clone(), vec!["mine.toml", "field `nothing_stated_fails`", "needs `answer` and `reference`"]),
        ("nothing_stated_fails on a jury", spec("name = \"mine\"\nmode = \"jury\"\nmembers = [\"correct\", \"rouge_l\"]\noutcomes = [\"No\", \"Yes\"]\nnothing_stated_fails = true\n"), prompt.clone(), vec!["mine.toml", "field `nothing_stated_fails`", "only a choice, statements or claims judge"]),
        ("an unknown side", spec("name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\nmode = \"statements\"\nsides = [\"question\"]\n"), prompt.clone(), vec!["mine.toml:5", "unknown variant `question`"]),
        ("name with a path", spec("name = \"../../mine\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "field `name`"]),
        ("prompt outside the folder", spec("name = \"mine\"\nprompt = \"../../../etc/passwd\"\noutcomes = [\"No\", \"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "field `prompt`", "must be a file in the judges folder"]),
        ("absolute prompt path", spec("name = \"mine\"\nprompt = \"/etc/passwd\"\noutcomes = [\"No\", \"Yes\"]\n"), prompt.clone(), vec!["mine.toml", "field `prompt`", "must be a file in the judges folder"]),
        ("missing prompt file", spec("name = \"mine\"\nprompt = \"other.md\"\noutcomes = [\"No\", \"Yes\"]\n"), prompt.clone(), vec!["other.md: cannot read"]),
        ("template syntax error", spec(GOOD_TOML), b"Question: {{ question \nIs it right?".to_vec(), vec!["mine.md: prompt template", "syntax error"]),
        ("template with an unknown variable", spec(GOOD_TOML), b"Question: {{ questoin }}".to_vec(), vec!["mine.md: prompt template", "undefined"]),
        ("template with nested loops", spec(GOOD_TOML), b"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{ question }}".to_vec(), vec!["mine.md: prompt template", "more than 5000000 steps"]),
        ("non-UTF-8 spec", b"name = \"mi\xffne\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\n".to_vec(), prompt.clone(), vec!["mine.toml", "UTF-8"]),
        ("non-UTF-8 prompt", spec(GOOD_TOML), b"Question: \xff {{ question }}".to_vec(), vec!["mine.md", "UTF-8"]),
        ("a huge spec with an error at its end", huge, prompt.clone(), vec!["mine.toml:4", "unexpected key or value"]),
    ]
}

#[test]
fn each_bad_judge_spec_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    let dir = judges.to_str().unwrap();
    let run = ["run", ds, "--target", "answers:answers-careful.jsonl", "--judges", "mine", "--judge-model", "smollm2-135m-instruct", "--judges-dir", dir];
    let cases = cases();
    for (what, spec, prompt, needles) in &cases {
        std::fs::write(judges.join("mine.toml"), spec).unwrap();
        std::fs::write(judges.join("mine.md"), prompt).unwrap();
        let stderr = expect_rejected(&run, &db, &before, needles);
        eprintln!("ok: {what}: {}", stderr.trim());
    }
    std::fs::write(judges.join("mine.toml"), GOOD_TOML).unwrap();
    std::fs::write(judges.join("mine.md"), GOOD_PROMPT).unwrap();
    let unknown = ["run", ds, "--target", "answers:answers-careful.jsonl", "--judges", "mien", "--judges-dir", dir];
    expect_rejected(&unknown, &db, &before, &["no judge named `mien`", "mine"]);
    eprintln!("{} judge spec cases", cases.len() + 1);
}

/// A user's spec text (description, outcomes, the prompt) is printed by `judges list` and
/// `judges show` with escape sequences made visible.
#[test]
fn escape_sequences_in_a_judge_spec_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(judges.join("mine.toml"), format!("{GOOD_TOML}description = \"fine\\u001b]0;owned\\u0007\"\n")).unwrap();
    std::fs::write(judges.join("mine.md"), format!("{GOOD_PROMPT}\x1b[2J\x1b[31m")).unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dir = judges.to_str().unwrap();
    for args in [vec!["judges", "list", "--judges-dir", dir], vec!["judges", "show", "mine", "--judges-dir", dir]] {
        let out = crate::common::assay(&args, &db);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{args:?}: {text:?}");
        assert!(text.contains("\\u{1b}"), "{args:?}: {text:?}");
    }
}

/// A prompt file that is a symlink to a file outside the judges folder is refused (its text
/// would be read into prompts and shown by `judges show`).
#[test]
fn a_prompt_symlink_out_of_the_judges_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "SECRET {{ question }} {{ answer }}").unwrap();
    std::fs::write(judges.join("mine.toml"), GOOD_TOML).unwrap();
    std::os::unix::fs::symlink(&secret, judges.join("mine.md")).unwrap();
    let db = tmp.path().join("runs.sqlite");
    let out = crate::common::assay(&["judges", "show", "mine", "--judges-dir", judges.to_str().unwrap()], &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mine.toml") && stderr.contains("field `prompt`") && stderr.contains("must be a file in the judges folder"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("SECRET"));
}
