//! Claims mode (claim-level recall and precision, after RAGChecker): the claims of the
//! reference and of the answer are listed by the model under a grammar (a JSON list of one to N
//! short sentences, so the list always parses, whatever the model), then each claim is checked
//! against the other text with a Yes/No choice.
//!
//! Recall is the mean probability that the answer supports a reference claim, precision the
//! mean probability that the reference supports an answer claim; F1 of the two is the judge's
//! score. The share of claims whose label is Yes is kept beside each.
//!
//! Reading: the extraction prompt and the check prompts of a text start with the text, so the
//! text is read once; each claim costs its own tokens and the few after it.

use std::collections::BTreeMap;

use super::distribution::{normalise, unscored};
use super::error::JudgeError;
use super::nothing_stated::fails_without_model;
use super::prompt::{marked, user_prompt_tokens, NO_REFERENCE};
use super::reading::{branch_points, common_prefix, Reader};
use super::spec::JudgeSpec;
use super::Verdict;
use crate::llm::generate::GenerationParams;
use crate::llm::model::LanguageModel;
use crate::metrics::numbers::written_as_the_reference;
use crate::record::FLAG_STATES_NOTHING;

/// At most this many claims per text.
pub const MAX_CLAIMS: usize = 10;
/// Words of text per claim asked for: a short reference gives one or two claims.
const WORDS_PER_CLAIM: usize = 20;
/// Longest claim, in characters.
pub const MAX_CLAIM_CHARS: usize = 160;

/// How well one text supports a list of claims.
#[derive(Debug, Clone)]
struct Support {
    /// Mean probability of Yes.
    mean_probability: f64,
    /// Share of claims whose most probable label is Yes.
    label_share: f64,
    /// Each claim's probability of Yes.
    each: Vec<f64>,
}

/// The verdicts of claims judge `spec` on one item.
pub(super) fn judge_claims(
    model: &LanguageModel,
    spec: &JudgeSpec,
    variables: &BTreeMap<&str, String>,
    reader: &mut Reader<'_>,
) -> Vec<(String, Verdict)> {
    let name = spec.name.clone();
    let keys = [
        name.clone(),
        format!("{name}.recall"),
        format!("{name}.precision"),
        format!("{name}.recall_labels"),
        format!("{name}.precision_labels"),
    ];
    let fail = |error: String| keys.iter().map(|k| (k.clone(), unscored(error.clone()))).collect::<Vec<_>>();
    let (Some(reference), Some(answer)) = (variables.get("reference"), variables.get("answer")) else {
        return fail("claims needs a reference and an answer".into());
    };
    if reference == NO_REFERENCE {
        return fail("no reference answer (the question expects a refusal)".into());
    }
    // An answer that states nothing has no claims to extract (the grammar would make some up).
    if let Some(kind) = fails_without_model(spec, variables) {
        let why = kind.verdict_explanation();
        let flags = vec![FLAG_STATES_NOTHING.to_string()];
        return keys.iter().map(|k| (k.clone(), Verdict { score: Some(0.0), explanation: Some(why.clone()), flags: flags.clone(), ..Verdict::default() })).collect();
    }
    // Numbers read as the reference writes them (`prompt::numbers_as_the_reference`); the
    // claims are the model's own words either way.
    let (answer, reference) = written_as_the_reference(answer, reference);
    let (answer, reference) = (&answer, &reference);
    let reference_claims = match extract_claims(model, spec, reference, reader) {
        Ok(c) => c,
        Err(e) => return fail(format!("reference claims: {e}")),
    };
    let answer_claims = match extract_claims(model, spec, answer, reader) {
        Ok(c) => c,
        Err(e) => return fail(format!("answer claims: {e}")),
    };
    let recall = match support(model, spec, &reference_claims, answer, reader) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    let precision = match support(model, spec, &answer_claims, reference, reader) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    let f1 = |r: f64, p: f64| if r + p == 0.0 { 0.0 } else { 2.0 * r * p / (r + p) };
    let listed = |claims: &[String], support: &Support| {
        claims.iter().zip(&support.each).map(|(c, p)| format!("{c} ({p:.2})")).collect::<Vec<_>>().join(" | ")
    };
    let explanation = format!(
        "reference claims (P supported by the answer): {}; answer claims (P supported by the reference): {}",
        listed(&reference_claims, &recall),
        listed(&answer_claims, &precision)
    );
    let scored = |score: f64| Verdict { score: Some(score), explanation: Some(explanation.clone()), ..Verdict::default() };
    vec![
        (keys[0].clone(), scored(f1(recall.mean_probability, precision.mean_probability))),
        (keys[1].clone(), scored(recall.mean_probability)),
        (keys[2].clone(), scored(precision.mean_probability)),
        (keys[3].clone(), scored(recall.label_share)),
        (keys[4].clone(), scored(precision.label_share)),
    ]
}

/// How many claims a text of `words` words may have.
pub fn claim_budget(words: usize) -> usize {
    (words / WORDS_PER_CLAIM + 1).clamp(1, MAX_CLAIMS)
}

/// The JSON schema of a claim list of one to `max` claims.
pub fn claims_schema(max: usize) -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "minItems": 1,
                "maxItems": max,
                "items": {"type": "string", "minLength": 3, "maxLength": MAX_CLAIM_CHARS}
            }
        },
        "required": ["claims"],
        "additionalProperties": false
    })
}

/// The claims of `text`, listed under the grammar after the text (read once, kept for checks).
fn extract_claims(model: &LanguageModel, spec: &JudgeSpec, text: &str, reader: &mut Reader<'_>) -> Result<Vec<String>, String> {
    let vars: BTreeMap<&str, String> = [("text", text.to_string())].into_iter().collect();
    let tokens = user_prompt_tokens(model, &spec.render_extract(&marked(model, &vars)).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    // Where the extraction prompt and the check prompts part: after the text.
    let probe = check_tokens(model, spec, text, "A claim.").map_err(|e| e.to_string())?;
    let keep_at = common_prefix(&tokens, &probe);
    let state = reader.read(&tokens, keep_at).map_err(|e| e.to_string())?;
    let budget = claim_budget(text.split_whitespace().count());
    // Room for every claim at its longest in English text, and the JSON around them; a list cut
    // short anyway keeps its finished claims.
    let params = GenerationParams { max_tokens: budget * (MAX_CLAIM_CHARS / 3 + 4) + 8, ..GenerationParams::default() };
    let generation = model
        .generate_json_after(state, &claims_schema(budget), &params, &mut |_| {}, None)
        .map_err(|e| e.to_string())?;
    let claims = parse_claim_list(&generation.text);
    if claims.is_empty() {
        return Err(format!("no claim finished within {} tokens", params.max_tokens));
    }
    Ok(claims)
}

fn check_tokens(model: &LanguageModel, spec: &JudgeSpec, text: &str, claim: &str) -> Result<Vec<u32>, JudgeError> {
    let vars: BTreeMap<&str, String> = [("text", text.to_string()), ("claim", claim.to_string())].into_iter().collect();
    let rendered = spec.render(&marked(model, &vars))?;
    user_prompt_tokens(model, &rendered).map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })
}

/// How well `text` supports each of `claims` (outcomes are `No`, `Yes`: checked in the spec).
fn support(model: &LanguageModel, spec: &JudgeSpec, claims: &[String], text: &str, reader: &mut Reader<'_>) -> Result<Support, JudgeError> {
    let model_err = |source| JudgeError::Model { judge: spec.name.clone(), source };
    let prompts = claims.iter().map(|c| check_tokens(model, spec, text, c)).collect::<Result<Vec<_>, _>>()?;
    let branches = branch_points(&prompts);
    let mut each = Vec::with_capacity(claims.len());
    for ((tokens, keep_at), claim) in prompts.iter().zip(branches).zip(claims) {
        let state = reader.read(tokens, keep_at).map_err(model_err)?;
        let scores = model.score_options(&state, &spec.outcomes).map_err(model_err)?;
        let logprobs: Vec<f64> = scores.iter().map(|s| s.logprob as f64).collect();
        // No finite probability is no evidence either way: the item is unscored with the reason
        // rather than the claim counted unsupported.
        let yes = normalise(&logprobs)
            .and_then(|p| p.get(1).copied())
            .filter(|p| p.is_finite())
            .ok_or_else(|| JudgeError::NoFiniteProbability { judge: spec.name.clone(), claim: claim.clone() })?;
        each.push(yes);
    }
    let n = each.len().max(1) as f64;
    Ok(Support {
        mean_probability: each.iter().sum::<f64>() / n,
        label_share: each.iter().filter(|p| **p > 0.5).count() as f64 / n,
        each,
    })
}

/// The claims of a generated list `{"claims": ["…", …]}`: all of them when the JSON is whole,
/// the finished strings when it was cut short. Blank and repeated claims are dropped.
pub fn parse_claim_list(text: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct List {
        claims: Vec<String>,
    }
    let raw = match serde_json::from_str::<List>(text) {
        Ok(list) => list.claims,
        Err(_) => finished_strings(text.find('[').map_or("", |at| &text[at + 1..])),
    };
    let mut seen = std::collections::HashSet::new();
    raw.into_iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty() && seen.insert(c.to_lowercase()))
        .collect()
}

/// JSON string literals at the start of `text`, separated by commas, up to the first that is
/// not finished.
fn finished_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while let Some(body) = rest.strip_prefix('"') {
        let mut escaped = false;
        let Some(end) = body.char_indices().find_map(|(i, c)| {
            let closes = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            closes.then_some(i)
        }) else {
            break;
        };
        match serde_json::from_str::<String>(&rest[..end + 2]) {
            Ok(s) => out.push(s),
            Err(_) => break,
        }
        rest = body[end + 1..].trim_start().trim_start_matches(',').trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_lists_parse_whole_or_cut_short() {
        assert_eq!(parse_claim_list(r#"{"claims": ["A is 5 g.", "B is red."]}"#), vec!["A is 5 g.", "B is red."]);
        assert_eq!(parse_claim_list(r#"{"claims": ["A \"x\" is 5 g.", "a \"x\" IS 5 g.", "B is re"#), vec![r#"A "x" is 5 g."#]);
        assert!(parse_claim_list(r#"{"claims": ["#).is_empty());
    }

    #[test]
    fn the_claim_budget_grows_with_the_text() {
        assert_eq!(claim_budget(5), 1);
        assert_eq!(claim_budget(48), 3);
        assert_eq!(claim_budget(600), MAX_CLAIMS);
    }
}
