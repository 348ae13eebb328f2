//! Verdict math: from each outcome's log-probability to a distribution, a label, a score.
//!
//! The label is the argmax, the score the expected normalised value (Σ p_i · v_i), and the
//! confidence the probability of the label. Kept apart from the model so it is checked exactly.

use super::spec::JudgeSpec;
use super::Verdict;

/// Softmax of the outcomes' log-probabilities; `None` when any is not finite.
pub fn normalise(logprobs: &[f64]) -> Option<Vec<f64>> {
    if logprobs.is_empty() || logprobs.iter().any(|l| l.is_nan() || *l == f64::INFINITY) {
        return None;
    }
    let max = logprobs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return None;
    }
    let exps: Vec<f64> = logprobs.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    Some(exps.iter().map(|e| e / total).collect())
}

/// The verdict of a choice judge given each outcome's log-probability (in spec order).
pub fn verdict_from_logprobs(spec: &JudgeSpec, logprobs: &[f64]) -> Verdict {
    if logprobs.len() != spec.outcomes.len() {
        return unscored(format!("{} scores for {} outcomes", logprobs.len(), spec.outcomes.len()));
    }
    let Some(probs) = normalise(logprobs) else {
        return unscored("the model gave no finite probability to the outcomes".into());
    };
    let best = probs
        .iter()
        .enumerate()
        .fold(0, |best, (i, p)| if *p > probs[best] { i } else { best });
    let score = probs.iter().enumerate().map(|(i, p)| p * spec.normalised_value(i)).sum::<f64>();
    Verdict {
        label: Some(spec.outcomes[best].clone()),
        score: Some(score),
        distribution: spec.outcomes.iter().cloned().zip(probs).collect(),
        ..Verdict::default()
    }
}

/// The verdict of a judge with a baseline: each outcome's probability divided by the
/// baseline's (contextual calibration, Zhao et al. 2021), renormalised. For Yes/No the label is
/// Yes exactly when the answer's P(Yes) is above the baseline's.
pub fn verdict_against_baseline(spec: &JudgeSpec, logprobs: &[f64], baseline: &[f64]) -> Verdict {
    let Some(base) = normalise(baseline).filter(|b| b.len() == logprobs.len()) else {
        return unscored("the model gave no finite probability to the outcomes for the baseline".into());
    };
    // Dividing probabilities is subtracting log-probabilities; the softmax renormalises.
    let divided: Vec<f64> = logprobs.iter().zip(&base).map(|(l, b)| l - b.max(f64::MIN_POSITIVE).ln()).collect();
    let mut verdict = verdict_from_logprobs(spec, &divided);
    if verdict.error.is_none() {
        verdict.baseline = Some(spec.outcomes.iter().cloned().zip(base).collect());
    }
    verdict
}

/// Probability of the verdict's label: how sure the judge was.
pub fn confidence(verdict: &Verdict) -> Option<f64> {
    verdict.distribution.get(verdict.label.as_ref()?).copied()
}

pub fn unscored(error: String) -> Verdict {
    Verdict { error: Some(error), ..Verdict::default() }
}
