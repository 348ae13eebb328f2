//! Statements mode: precision and recall of an answer, one statement at a time, with nothing
//! generated. The answer is split into statements deterministically (`statement_split`) and
//! each is checked against the reference (precision: is it supported?); each statement of the
//! reference is checked against the answer (recall: did the answer give it?). A check is one
//! Yes/No choice scored from option log-probabilities, so it always gives a number.
//!
//! Numbers are checked, not judged: a statement with a number the other side contradicts
//! (`metrics::numbers::number_conflict`) counts as unsupported whatever the model says, and the
//! model is not asked. The verdict keeps every statement with its probability, so a user sees
//! which sentence was judged wrong.
//!
//! The same plan runs in process (every check continues from one reading of the shared start:
//! the text and the question) and on a served model (one first-token request per check).

use std::collections::BTreeMap;

use super::distribution::{normalise, unscored};
use super::error::JudgeError;
use super::injection::without_injection;
use super::nothing_stated::{fails_without_model, worst_outcome};
use super::prompt::{marked, user_prompt_tokens, NO_REFERENCE};
use super::reading::Reader;
use super::spec::JudgeSpec;
use super::statement_split::{grouped, split_statements};
use super::Verdict;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_text::without_chat_markers;
use crate::metrics::numbers::{number_conflict, written_as_the_reference};
use crate::record::{StatementCheck, StatementSide};

/// Most statements checked per side: more are joined into this many groups (cost bound).
pub const MAX_STATEMENTS: usize = 16;

/// One check to make: a statement, the text it is checked against, and a veto found before
/// asking the model.
#[derive(Debug, Clone)]
pub struct PlannedCheck {
    pub side: StatementSide,
    pub statement: String,
    /// The template variables of the check (`question`, `text`, `claim`).
    pub variables: BTreeMap<&'static str, String>,
    pub number_conflict: Option<String>,
}

/// The verdict keys a statements judge writes: its name (F1, or the one side's score), and
/// `.precision` and `.recall` for each side it checks.
pub fn keys(spec: &JudgeSpec) -> Vec<String> {
    let name = &spec.name;
    let mut keys = vec![name.to_string()];
    if spec.checks_side(StatementSide::Answer) {
        keys.push(format!("{name}.precision"));
    }
    if spec.checks_side(StatementSide::Reference) {
        keys.push(format!("{name}.recall"));
    }
    keys
}

/// The checks of `plan` on the sides `spec` checks (a recall-only judge asks nothing of the
/// answer's statements, so the reference is not read as a text at all).
pub fn plan_for(spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<Vec<PlannedCheck>, String> {
    // A refusal, a lead-in or only questions: nothing to check (`nothing_stated`).
    if fails_without_model(spec, variables).is_some() {
        return Ok(Vec::new());
    }
    let all = plan(variables)?;
    let any = !all.is_empty();
    let checks: Vec<PlannedCheck> = all.into_iter().filter(|check| spec.checks_side(check.side)).collect();
    // The answer states something but the side checked has nothing to check: no score is
    // better than a 0 the answer did not earn (a jury leaves the judge out and says so).
    if any && checks.is_empty() {
        return Err(format!("judge {}: the {} states nothing to check", spec.name, if spec.checks_side(StatementSide::Reference) { "reference" } else { "answer" }));
    }
    Ok(checks)
}

/// The checks for one item: every answer statement against the reference, every reference
/// statement against the answer. Err when the item cannot be judged this way.
pub fn plan(variables: &BTreeMap<&str, String>) -> Result<Vec<PlannedCheck>, String> {
    let (Some(reference), Some(answer)) = (variables.get("reference"), variables.get("answer")) else {
        return Err("a statements judge needs a reference and an answer".into());
    };
    if reference == NO_REFERENCE {
        return Err("no reference answer (the question expects a refusal)".into());
    }
    let question = variables.get("question").cloned().unwrap_or_default();
    // Chat-marker text is no statement (and its bars would read as a table row): the split and
    // the statements shown are of the text the judge reads.
    // Sentences addressed to the grader are no statements either (the item is flagged).
    let (answer, reference) = (without_chat_markers(&without_injection(answer)), without_chat_markers(reference));
    // An answer that states nothing (empty, only markup, or only text addressed to the grader)
    // supports nothing and gives nothing of the reference: F1 0, not unscored, and the model
    // is not asked (`verdicts` says why).
    if statements_of(&answer).is_empty() {
        return Ok(Vec::new());
    }
    // The model reads numbers as the reference writes them (`prompt::numbers_as_the_reference`:
    // the same text `correct` reads, so the two share the answer's reading); the statements
    // shown and the numeric veto keep the answer's own writing.
    let (answer_read, reference_read) = written_as_the_reference(&answer, &reference);
    let mut checks = Vec::new();
    for (side, from, against, against_read) in
        [(StatementSide::Answer, &answer, &reference, &reference_read), (StatementSide::Reference, &reference, &answer, &answer_read)]
    {
        for statement in grouped(statements_of(from), MAX_STATEMENTS) {
            let number_conflict = number_conflict(&statement, against);
            let claim = written_as_the_reference(&statement, &reference).0;
            let variables = [("question", question.clone()), ("text", against_read.clone()), ("claim", claim)]
                .into_iter()
                .collect();
            checks.push(PlannedCheck { side, statement, variables, number_conflict });
        }
    }
    Ok(checks)
}

/// The statements of a text; a text too short to split ("$4.2 billion", "Yes") is one
/// statement as it stands, so a short answer is checked, not left unscored.
fn statements_of(text: &str) -> Vec<String> {
    let statements = split_statements(text);
    if statements.is_empty() && text.chars().any(char::is_alphanumeric) {
        return vec![text.trim().to_string()];
    }
    statements
}

/// The judge's verdicts from each check's probability of support (`supported[i]` for
/// `checks[i]`; a vetoed check's own value is ignored): F1 under the judge's name, precision
/// and recall beside it. A reference with no statements scores as the answer's side alone; an
/// answer with none (no checks at all: `plan`) scores 0 on every key.
pub fn verdicts(spec: &JudgeSpec, checks: &[PlannedCheck], supported: &[f64]) -> Vec<(String, Verdict)> {
    if checks.is_empty() {
        return verdicts_stating_nothing(spec);
    }
    let statements: Vec<StatementCheck> = checks
        .iter()
        .zip(supported)
        .map(|(check, p)| StatementCheck {
            side: check.side,
            text: check.statement.clone(),
            supported: if check.number_conflict.is_some() { 0.0 } else { p.clamp(0.0, 1.0) },
            number_conflict: check.number_conflict.clone(),
        })
        .collect();
    let mean = |side: StatementSide| {
        let values: Vec<f64> = statements.iter().filter(|s| s.side == side).map(|s| s.supported).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let (precision, recall) = (mean(StatementSide::Answer), mean(StatementSide::Reference));
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => 2.0 * p * r / (p + r),
        (Some(_), Some(_)) => 0.0,
        (Some(p), None) => p,
        (None, Some(r)) => r,
        (None, None) => return keys(spec).into_iter().map(|k| (k, unscored("no statements to check".into()))).collect(),
    };
    let unsupported = statements.iter().filter(|s| s.side == StatementSide::Answer && s.supported < 0.5).count();
    let missed = statements.iter().filter(|s| s.side == StatementSide::Reference && s.supported < 0.5).count();
    let conflicts = statements.iter().filter(|s| s.number_conflict.is_some()).count();
    let answer_count = statements.iter().filter(|s| s.side == StatementSide::Answer).count();
    let explanation = format!(
        "{unsupported} of {answer_count} answer statements unsupported, {missed} of {} reference statements missed, {conflicts} number conflicts",
        statements.len() - answer_count
    );
    let label = |score: f64| {
        let best = spec.outcomes.len() - 1;
        spec.calibrated_label(score).map(str::to_string).unwrap_or_else(|| spec.outcomes[if score >= 0.5 { best } else { 0 }].clone())
    };
    let main = Verdict {
        label: Some(label(f1)),
        score: Some(f1),
        distribution: [(spec.outcomes[0].clone(), 1.0 - f1), (spec.outcomes[spec.outcomes.len() - 1].clone(), f1)]
            .into_iter()
            .collect(),
        explanation: Some(explanation.clone()),
        statements,
        ..Verdict::default()
    };
    let part = |score: Option<f64>, missing: &str| match score {
        Some(score) => Verdict { score: Some(score), explanation: Some(explanation.clone()), ..Verdict::default() },
        None => unscored(missing.to_string()),
    };
    let mut out = vec![(spec.name.clone(), main)];
    if spec.checks_side(StatementSide::Answer) {
        out.push((format!("{}.precision", spec.name), part(precision, "no answer statements")));
    }
    if spec.checks_side(StatementSide::Reference) {
        out.push((format!("{}.recall", spec.name), part(recall, "no reference statements")));
    }
    out
}

/// A statements judge's checks for one item with the tokens of each prompt the model must
/// read (vetoed checks need none), made before any reading so the panel can find where these
/// prompts and its other judges' share a start (`reading::branch_points`).
pub(super) struct PreparedStatements {
    checks: Vec<PlannedCheck>,
    /// Indexes into `checks` of the checks the model is asked, in `prompts` order.
    asked: Vec<usize>,
    pub prompts: Vec<Vec<u32>>,
}

/// Plan and tokenize one item's checks (Err: the reason the item is unscored).
pub(super) fn prepare(model: &LanguageModel, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<PreparedStatements, String> {
    let checks = plan_for(spec, variables)?;
    let asked: Vec<usize> = (0..checks.len()).filter(|i| checks[*i].number_conflict.is_none()).collect();
    let prompts = asked
        .iter()
        .map(|i| {
            let rendered = spec.render(&marked(model, &checks[*i].variables))?;
            user_prompt_tokens(model, &rendered).map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })
        })
        .collect::<Result<Vec<_>, JudgeError>>()
        .map_err(|e| e.to_string())?;
    Ok(PreparedStatements { checks, asked, prompts })
}

/// The verdicts of statements judge `spec` on one prepared item, in process: each prompt read
/// from the longest state the reader holds, keeping a state at `keep_at[i]` for the prompts
/// after it that share that start.
pub(super) fn judge_prepared(
    model: &LanguageModel,
    spec: &JudgeSpec,
    prepared: &PreparedStatements,
    keep_at: &[usize],
    reader: &mut Reader<'_>,
) -> Vec<(String, Verdict)> {
    let mut supported = vec![0.0; prepared.checks.len()];
    for (k, (index, tokens)) in prepared.asked.iter().zip(&prepared.prompts).enumerate() {
        let logprobs = reader
            .read(tokens, keep_at.get(k).copied().unwrap_or(0))
            .and_then(|state| model.score_options(&state, &spec.outcomes))
            .map(|scores| scores.iter().map(|s| s.logprob as f64).collect::<Vec<_>>());
        match logprobs {
            Ok(logprobs) => match probability_of_support(spec, &prepared.checks[*index], &logprobs) {
                Ok(p) => supported[*index] = p,
                Err(e) => return failed(spec, e),
            },
            Err(e) => return failed(spec, JudgeError::Model { judge: spec.name.clone(), source: e }.to_string()),
        }
    }
    verdicts(spec, &prepared.checks, &supported)
}

/// P(Yes) of one check from the outcomes' log-probabilities (`No`, `Yes`). Err when the model
/// gave no finite probability: counting it as 0 would mark the statement unsupported on no
/// evidence, so the judge's item is unscored with the reason instead (a jury then leaves it out
/// and says so).
pub fn probability_of_support(spec: &JudgeSpec, check: &PlannedCheck, logprobs: &[f64]) -> Result<f64, String> {
    normalise(logprobs).and_then(|p| p.get(1).copied()).filter(|p| p.is_finite()).ok_or_else(|| {
        format!("judge {}: the model gave no finite probability to Yes or No for the statement {:?}", spec.name, check.statement)
    })
}

/// The verdicts on an answer that states nothing to check: 0 on every key, labelled by the
/// spec's threshold like any other score.
fn verdicts_stating_nothing(spec: &JudgeSpec) -> Vec<(String, Verdict)> {
    let why = "the answer states nothing to check (empty, only markup or text addressed to the grader, or, where the spec says so, only a refusal, a lead-in or questions)".to_string();
    let main = worst_outcome(spec, why.clone());
    let part = Verdict { score: Some(0.0), explanation: Some(why), ..Verdict::default() };
    let mut out = vec![(spec.name.clone(), main)];
    out.extend(keys(spec).into_iter().skip(1).map(|key| (key, part.clone())));
    out
}

/// Every key of the judge unscored with `error`.
pub(super) fn failed(spec: &JudgeSpec, error: String) -> Vec<(String, Verdict)> {
    keys(spec).into_iter().map(|k| (k, unscored(error.clone()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::spec::builtin;

    fn variables(reference: &str, answer: &str) -> BTreeMap<&'static str, String> {
        [("question", "What was revenue?".to_string()), ("reference", reference.to_string()), ("answer", answer.to_string())]
            .into_iter()
            .collect()
    }

    #[test]
    fn the_model_reads_numbers_as_the_reference_writes_them_and_the_user_sees_the_answers_own() {
        let checks = plan(&variables(
            "Revenue was $4.2 billion in FY2022.",
            "Revenue came to 4,213 million dollars in FY2022. Costs were $3.9 billion.",
        ))
        .expect("plan");
        let answer_side: Vec<&PlannedCheck> = checks.iter().filter(|c| c.side == StatementSide::Answer).collect();
        // Shown as the answer wrote it.
        assert_eq!(answer_side[0].statement, "Revenue came to 4,213 million dollars in FY2022.");
        // Read as the reference writes the same value; the number it does not state stays.
        assert_eq!(answer_side[0].variables["claim"], "Revenue came to $4.2 billion in fiscal year 2022.");
        assert_eq!(answer_side[1].variables["claim"], "Costs were $3.9 billion.");
        assert_eq!(answer_side[0].variables["text"], "Revenue was $4.2 billion in fiscal year 2022.");
        // The recall side reads the answer written the same way: the text `correct` reads too.
        let recall = checks.iter().find(|c| c.side == StatementSide::Reference).expect("a reference statement");
        assert_eq!(recall.statement, "Revenue was $4.2 billion in FY2022.");
        assert!(recall.variables["text"].starts_with("Revenue came to $4.2 billion in fiscal year 2022."), "{recall:?}");
        assert!(checks.iter().all(|c| c.number_conflict.is_none()), "{checks:?}");
    }

    #[test]
    fn both_sides_are_planned_and_numbers_veto() {
        let checks = plan(&variables(
            "Revenue was $4.2 billion in 2022.",
            "Revenue was $5.1 billion in 2022. The company sells tobacco products worldwide.",
        ))
        .expect("plan");
        assert_eq!(checks.iter().filter(|c| c.side == StatementSide::Answer).count(), 2);
        assert_eq!(checks.iter().filter(|c| c.side == StatementSide::Reference).count(), 1);
        assert!(checks[0].number_conflict.is_some(), "{checks:?}");
        let spec = builtin("supported").expect("built-in");
        // The model said Yes to everything; the vetoed statements (the answer's revenue, and the
        // reference's, which the answer contradicts) still count as unsupported.
        assert!(checks[2].number_conflict.is_some(), "{checks:?}");
        let out = verdicts(&spec, &checks, &[0.9, 0.9, 0.9]);
        let main = &out[0].1;
        assert_eq!(main.statements[0].supported, 0.0);
        assert_eq!(main.score, Some(0.0));
        assert_eq!(out[1].1.score, Some(0.45));
        assert_eq!(out[2].1.score, Some(0.0));
        // Without the contradiction, F1 of the two means.
        let fine = plan(&variables("Revenue was $4.2 billion in 2022.", "Revenue was $4.2 billion in 2022. It sells cigarettes."))
            .expect("plan");
        assert!(fine.iter().all(|c| c.number_conflict.is_none()));
        let out = verdicts(&spec, &fine, &[0.8, 0.2, 0.6]);
        let (p, r) = (0.5, 0.6);
        assert!((out[0].1.score.expect("score") - 2.0 * p * r / (p + r)).abs() < 1e-9);
    }

    #[test]
    fn a_recall_only_judge_checks_the_reference_statements_alone() {
        let covered = builtin("covered").expect("built-in");
        let both = builtin("supported").expect("built-in");
        let item = variables(
            "Revenue was $4.2 billion in 2022. Operating margins rose to a record level.",
            "Revenue was $5.1 billion in 2022. The company sells tobacco products worldwide.",
        );
        let checks = plan_for(&covered, &item).expect("plan");
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.side == StatementSide::Reference), "{checks:?}");
        // The answer contradicts the reference's revenue: vetoed on the recall side too.
        assert!(checks[0].number_conflict.is_some() && checks[1].number_conflict.is_none(), "{checks:?}");
        assert_eq!(plan_for(&both, &item).expect("plan").len(), 4);
        let out = verdicts(&covered, &checks, &[0.9, 0.7]);
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["covered", "covered.recall"]);
        assert_eq!(out[0].1.score, Some(0.35));
        assert_eq!(keys, self::keys(&covered));
        // A reference with nothing to check: no score rather than an unearned 0.
        let error = plan_for(&covered, &variables("—", "Revenue was $4.2 billion.")).expect_err("nothing to check");
        assert!(error.contains("reference states nothing"), "{error}");
        // An empty answer still scores 0, on the keys this judge writes.
        let none = plan_for(&covered, &variables("Revenue was $4.2 billion.", "")).expect("plan");
        let out = verdicts(&covered, &none, &[]);
        assert_eq!(out.iter().map(|(k, v)| (k.as_str(), v.score)).collect::<Vec<_>>(), [("covered", Some(0.0)), ("covered.recall", Some(0.0))]);
    }

    #[test]
    fn a_check_without_a_finite_probability_is_an_error_not_a_zero() {
        let spec = builtin("supported").expect("built-in");
        let checks = plan(&variables("Revenue was $4.2 billion.", "Revenue grew.")).expect("plan");
        assert!((probability_of_support(&spec, &checks[0], &[-2.0, -0.1]).expect("finite") - 1.0 / (1.0 + (-1.9f64).exp())).abs() < 1e-9);
        for broken in [[f64::NAN, -0.1], [f64::NEG_INFINITY, f64::NEG_INFINITY], [-0.1, f64::INFINITY]] {
            let error = probability_of_support(&spec, &checks[0], &broken).expect_err("not finite");
            assert!(error.contains("no finite probability") && error.contains("Revenue grew."), "{error}");
        }
    }

    #[test]
    fn items_that_cannot_be_judged_say_why() {
        assert!(plan(&variables(NO_REFERENCE, "Revenue was high this year.")).is_err());
        // An empty answer is no error: it states nothing, so it scores 0 without the model.
        let spec = builtin("supported").expect("built-in");
        for empty in [" \n ", "", "---\n|  |  |", "\u{200b}"] {
            let none = plan(&variables("Revenue was $4.2 billion.", empty)).expect("plan");
            assert!(none.is_empty(), "{empty:?}: {none:?}");
            let out = verdicts(&spec, &none, &[]);
            assert!(out.iter().all(|(_, v)| v.score == Some(0.0) && v.error.is_none()), "{out:?}");
            assert_eq!(out[0].1.label.as_deref(), Some("No"));
        }
        // A one-word answer is one statement, not an unscored item.
        let short = plan(&variables("Revenue was $4.2 billion.", "$4.2 billion")).expect("plan");
        assert_eq!(short[0].statement, "$4.2 billion");
    }
}
