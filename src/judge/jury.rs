//! Juries: one score from several members (model judges and the word-overlap metrics of
//! `jury_metrics`), the mean of the members' expected scores.
//!
//! A member that cannot score an item is left out rather than sinking the jury: ROUGE-L has
//! nothing to compare on a question whose right reply is a refusal (no reference), a statements
//! judge has no statements to check there, and a model can fail on one prompt. A user running a
//! jury expects a score on every item, so the jury scores from the members that could and says
//! so: the verdict carries a flag naming the members left out, and its explanation gives each
//! one's reason. The item is unscored only when no member could score it.

use std::collections::BTreeMap;

use super::distribution::unscored;
use super::jury_metrics::{is_jury_metric, jury_metric};
use super::spec::JudgeSpec;
use super::Verdict;
use crate::dataset::Question;
use crate::record::Answer;

use crate::record::FLAG_MEMBERS_LEFT_OUT;

/// A member's score on the item, or why it has none.
fn member_score(member: &str, verdicts: &BTreeMap<String, Verdict>, question: &Question, answer: &Answer) -> Result<f64, String> {
    match verdicts.get(member) {
        Some(verdict) => match verdict.score {
            Some(score) if score.is_finite() => Ok(score),
            Some(score) => Err(format!("its score is not a number ({score})")),
            None => Err(verdict.error.clone().unwrap_or_else(|| "it gave no score".into())),
        },
        None if is_jury_metric(member) => match question.answer.as_deref() {
            Some(reference) if !question.refuse => {
                jury_metric(member, &answer.text, reference).ok_or_else(|| format!("{member} is not a metric a jury computes"))
            }
            _ => Err("no reference answer to compare with (the question expects a refusal)".into()),
        },
        None => Err("it did not judge this item".into()),
    }
}

/// A jury's verdict: the mean of the expected scores of the members that could score the item,
/// flagged with the members left out; unscored only when none could. Label: the calibrated
/// band, else the best outcome at a mean of 0.5 or more.
pub fn jury_verdict(spec: &JudgeSpec, verdicts: &BTreeMap<String, Verdict>, question: &Question, answer: &Answer) -> Verdict {
    let mut scored: Vec<(&str, f64)> = Vec::new();
    let mut left_out: Vec<(&str, String)> = Vec::new();
    for member in &spec.members {
        match member_score(member, verdicts, question, answer) {
            Ok(score) => scored.push((member, score)),
            Err(why) => left_out.push((member, why)),
        }
    }
    let reasons: Vec<String> = left_out.iter().map(|(member, why)| format!("{member} left out: {why}")).collect();
    if scored.is_empty() {
        return unscored(format!("no member of jury {} could score this item ({})", spec.name, reasons.join("; ")));
    }
    let mean = scored.iter().map(|(_, score)| score).sum::<f64>() / scored.len() as f64;
    let best = spec.outcomes.len() - 1;
    let label = spec
        .calibrated_label(mean)
        .map(str::to_string)
        .unwrap_or_else(|| spec.outcomes[if mean >= 0.5 { best } else { 0 }].clone());
    let parts: Vec<String> = scored.iter().map(|(member, score)| format!("{member} {score:.3}")).collect();
    let mut explanation = format!("mean of {}", parts.join(", "));
    let mut flags = Vec::new();
    if !left_out.is_empty() {
        explanation.push_str(&format!(" ({})", reasons.join("; ")));
        let names: Vec<&str> = left_out.iter().map(|(member, _)| *member).collect();
        flags.push(format!("{FLAG_MEMBERS_LEFT_OUT}: {}", names.join(", ")));
    }
    Verdict { label: Some(label), score: Some(mean), explanation: Some(explanation), flags, ..Verdict::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::spec::builtin;

    fn scored(score: f64) -> Verdict {
        Verdict { score: Some(score), label: Some("Yes".into()), ..Verdict::default() }
    }

    fn question(reference: Option<&str>) -> Question {
        Question {
            id: "q1".into(),
            question: "What was revenue?".into(),
            answer: reference.map(str::to_string),
            refuse: reference.is_none(),
            ..Question::default()
        }
    }

    #[test]
    fn every_member_scored_gives_their_mean_and_no_flag() {
        let spec = builtin("facts").expect("built-in");
        let verdicts: BTreeMap<String, Verdict> = [("correct".to_string(), scored(0.9)), ("supported".to_string(), scored(0.6))].into();
        let answer = Answer { text: "Revenue was $4.2 billion.".into(), ..Answer::default() };
        let verdict = jury_verdict(&spec, &verdicts, &question(Some("Revenue was $4.2 billion.")), &answer);
        assert_eq!(verdict.score, Some((0.9 + 0.6 + 1.0) / 3.0));
        assert!(verdict.flags.is_empty(), "{:?}", verdict.flags);
    }

    #[test]
    fn members_that_cannot_score_are_left_out_and_named() {
        let spec = builtin("facts").expect("built-in");
        // A refusal question: no reference, so supported and ROUGE-L have nothing to compare.
        let verdicts: BTreeMap<String, Verdict> =
            [("correct".to_string(), scored(0.8)), ("supported".to_string(), unscored("no reference answer (the question expects a refusal)".into()))].into();
        let answer = Answer { text: "The documents do not say.".into(), ..Answer::default() };
        let verdict = jury_verdict(&spec, &verdicts, &question(None), &answer);
        assert_eq!(verdict.score, Some(0.8));
        assert!(verdict.error.is_none());
        assert_eq!(verdict.flags, vec![format!("{FLAG_MEMBERS_LEFT_OUT}: supported, rouge_l")]);
        let explanation = verdict.explanation.expect("explained");
        assert!(explanation.contains("supported left out: no reference") && explanation.contains("rouge_l left out"), "{explanation}");
        // A member whose score is not a number is left out too, never averaged in.
        let verdicts: BTreeMap<String, Verdict> = [("correct".to_string(), scored(f64::NAN)), ("supported".to_string(), scored(0.4))].into();
        let verdict = jury_verdict(&spec, &verdicts, &question(Some("Revenue was $4.2 billion.")), &answer);
        assert_eq!(verdict.flags, vec![format!("{FLAG_MEMBERS_LEFT_OUT}: correct")]);
        assert!(verdict.score.is_some_and(f64::is_finite));
    }

    #[test]
    fn a_jury_no_member_could_score_is_unscored_with_every_reason() {
        let spec = builtin("facts").expect("built-in");
        let verdicts: BTreeMap<String, Verdict> =
            [("correct".to_string(), unscored("model failed".into())), ("supported".to_string(), unscored("no reference".into()))].into();
        let verdict = jury_verdict(&spec, &verdicts, &question(None), &Answer::default());
        assert!(verdict.score.is_none());
        let error = verdict.error.expect("why");
        assert!(error.contains("correct left out: model failed") && error.contains("rouge_l left out"), "{error}");
    }
}
