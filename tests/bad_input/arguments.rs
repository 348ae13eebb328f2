//! Command-line values that are wrong: an unknown metric, a malformed gate, an unknown target,
//! a run that does not exist. Checked before the database is opened.

use crate::common::{dataset_copy, expect_rejected, seeded_db};

#[test]
fn each_bad_argument_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let answers = ["run", ds, "--target", "answers:answers-careful.jsonl"];
    let with = |extra: &[&'static str]| [&answers[..], extra].concat();
    expect_rejected(&with(&["--metrics", "token_f1,vibes"]), &db, &before, &["vibes"]);
    expect_rejected(&with(&["--fail-under", "token_f1"]), &db, &before, &["--fail-under \"token_f1\"", "METRIC=VALUE"]);
    expect_rejected(&with(&["--fail-under", "token_f1=lots"]), &db, &before, &["\"lots\" is not a number"]);
    expect_rejected(&with(&["--fail-under", "vibes=0.5"]), &db, &before, &["unknown metric \"vibes\""]);
    expect_rejected(&["run", ds, "--target", "oracle"], &db, &before, &["unknown target \"oracle\""]);
    let resume = crate::common::expect_refusal(&["run", ds, "--resume", "no-such-run"], &db, &["no run matches \"no-such-run\""]);
    assert!(!resume.is_empty());
    assert_eq!(crate::common::snapshot(&db), before);
}
