//! Judge specs: built-ins load, bad specs fail at load time naming file and field, verdict math.

use assay::judge::distribution::{confidence, verdict_against_baseline, verdict_from_logprobs};
use assay::judge::spec::{load_all, JudgeSpec};
use std::path::Path;

fn spec_error(toml: &str, template: &str) -> String {
    JudgeSpec::parse(toml, Path::new("judges/bad.toml"), template.to_string()).unwrap_err().to_string()
}

#[test]
fn built_in_judges_load() {
    let specs = load_all(None).unwrap();
    for name in ["correctness", "correctness5", "correct", "faithfulness", "relevance", "abstention", "claims"] {
        assert!(specs.contains_key(name), "{name} missing");
    }
    let c5 = &specs["correctness5"];
    assert_eq!(c5.passes("4"), Some(true));
    assert_eq!(c5.passes("3"), Some(false));
    assert_eq!(c5.normalised_value(4), 1.0);
    assert_eq!(c5.normalised_value(0), 0.0);
}

/// `correct` reads a long answer before the question and the correct answer (a small judge
/// loses the correct answer behind a long text) and a short one after them.
#[test]
fn correct_puts_a_long_answer_first_and_a_short_one_last() {
    let specs = load_all(None).unwrap();
    let correct = &specs["correct"];
    let render = |answer: String| {
        let variables = std::collections::BTreeMap::from([
            ("question", "How long do I hold the reset button?".to_string()),
            ("reference", "Five seconds.".to_string()),
            ("answer", answer),
        ]);
        correct.render(&variables).unwrap()
    };
    let short = render("Hold it for five seconds until the light blinks.".into());
    assert!(short.starts_with("You are a strict grader. Question: How long"), "{short}");
    assert!(short.find("Five seconds.").unwrap() < short.find("Hold it for").unwrap());
    assert!(short.ends_with("Reply Yes or No."), "{short}");

    let long = render("Hold it for five seconds until the light blinks. ".repeat(12));
    assert!(long.starts_with("You are a strict grader. Text: Hold it for"), "{long}");
    assert!(long.rfind("Hold it for").unwrap() < long.find("Question: How long").unwrap());
    assert!(long.find("Question:").unwrap() < long.find("Correct answer: Five seconds.").unwrap());
    assert!(long.ends_with("Reply Yes or No."), "{long}");
    // Exactly at the limit (100 words) the short layout still holds.
    let at_limit = render("word ".repeat(100));
    assert!(at_limit.starts_with("You are a strict grader. Question:"), "{at_limit}");
}

#[test]
fn bad_specs_are_rejected_with_file_and_field() {
    let base = "name = \"x\"\nprompt = \"x.md\"\n";
    let e = spec_error(&format!("{base}outcomes = []"), "{{ answer }}");
    assert!(e.contains("judges/bad.toml") && e.contains("outcomes"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"Yes\", \"Yes\"]"), "{{ answer }}");
    assert!(e.contains("appears twice"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]"), "{{ answr }}");
    assert!(e.contains("prompt template") && e.contains("x.md"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\npass = \"Maybe\""), "{{ answer }}");
    assert!(e.contains("`pass`"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\nvalues = [1.0]"), "{{ answer }}");
    assert!(e.contains("`values`"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\nmode = \"freeform\""), "{{ answer }}");
    assert!(e.contains("judges/bad.toml"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\ninputs = [\"answer\"]\nbaseline = \"question\""), "{{ answer }}");
    assert!(e.contains("judges/bad.toml") && e.contains("`baseline`") && e.contains("needs both"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\ninputs = [\"question\", \"answer\"]\nbaseline = \"reference\""), "{{ answer }}");
    assert!(e.contains("judges/bad.toml:5") && e.contains("expected `question`"), "{e}");
    let e = spec_error(&format!("{base}outcomes = [\"No\", \"Yes\"]\nmode = \"claims\"\ninputs = [\"question\", \"answer\"]\nbaseline = \"question\""), "{{ text }}");
    assert!(e.contains("only a choice judge"), "{e}");
}

#[test]
fn a_user_spec_overrides_a_built_in() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("relevance.toml"), "name = \"relevance\"\nprompt = \"r.md\"\noutcomes = [\"Off\", \"On\"]\n").unwrap();
    std::fs::write(dir.path().join("r.md"), "Q: {{ question }} A: {{ answer }}").unwrap();
    let specs = load_all(Some(dir.path())).unwrap();
    assert_eq!(specs["relevance"].outcomes, ["Off", "On"]);
    assert!(specs["relevance"].source.ends_with("relevance.toml"));
}

#[test]
fn verdict_math() {
    let specs = load_all(None).unwrap();
    let spec = &specs["correctness"];
    let probs = [0.1f64, 0.2, 0.3, 0.4];
    let logprobs: Vec<f64> = probs.iter().map(|p| p.ln() - 3.0).collect();
    let v = verdict_from_logprobs(spec, &logprobs);
    assert_eq!(v.label.as_deref(), Some("Perfect"));
    let total: f64 = v.distribution.values().sum();
    assert!((total - 1.0).abs() < 1e-12);
    let expected = 0.2 * (1.0 / 3.0) + 0.3 * (2.0 / 3.0) + 0.4;
    assert!((v.score.unwrap() - expected).abs() < 1e-12);
    assert!((confidence(&v).unwrap() - 0.4).abs() < 1e-12);
    let bad = verdict_from_logprobs(spec, &[f64::NAN, 0.0, 0.0, 0.0]);
    assert!(bad.error.is_some() && bad.score.is_none());
}

/// Against a baseline each outcome's probability is divided by the baseline's and
/// renormalised: an even baseline changes nothing, a baseline that leans Yes takes it away.
#[test]
fn verdict_against_a_baseline() {
    let specs = load_all(None).unwrap();
    let spec = &specs["correct"];
    let ln = |p: &[f64]| p.iter().map(|p| p.ln() - 1.5).collect::<Vec<f64>>();
    let answer = ln(&[0.4, 0.6]);
    let even = verdict_against_baseline(spec, &answer, &ln(&[0.5, 0.5]));
    assert!((even.distribution["Yes"] - 0.6).abs() < 1e-12 && even.label.as_deref() == Some("Yes"));
    let leaning = verdict_against_baseline(spec, &answer, &ln(&[0.3, 0.7]));
    let yes = (0.6 / 0.7) / (0.6 / 0.7 + 0.4 / 0.3);
    assert!((leaning.distribution["Yes"] - yes).abs() < 1e-12, "{:?}", leaning.distribution);
    assert!((leaning.score.unwrap() - yes).abs() < 1e-12);
    assert_eq!(leaning.label.as_deref(), Some("No"), "0.6 is below the baseline's 0.7");
    assert!((leaning.baseline.as_ref().unwrap()["Yes"] - 0.7).abs() < 1e-12);
    let broken = verdict_against_baseline(spec, &answer, &[f64::NAN, 0.0]);
    assert!(broken.score.is_none() && broken.error.as_deref().unwrap().contains("baseline"));
    assert!(verdict_from_logprobs(spec, &answer).baseline.is_none());
}

/// `judge_spec`, what `assay judges show` prints, gives a jury itself (its members checked),
/// not its first member.
#[test]
fn a_jury_shows_as_itself() {
    for name in ["facts", "facts-overlap"] {
        let spec = assay::run::judge_spec(name, None).unwrap();
        assert_eq!(spec.name, name);
        assert_eq!(spec.mode, assay::judge::spec::JudgeMode::Jury);
        assert!(spec.members.iter().any(|m| m == "correct"), "{:?}", spec.members);
    }
    assert_eq!(assay::run::judge_spec("correct", None).unwrap().name, "correct");
    assert!(assay::run::judge_spec("no-such-judge", None).unwrap_err().to_string().contains("no-such-judge"));
}
