//! Agreement between a judge and human labels: accuracy, Cohen's kappa (quadratic-weighted for
//! ordinal scales), Spearman's rank correlation and a confusion matrix; and length bias: the
//! Spearman of the judge's score with the answer's length in words, beside its Spearman with
//! the labels (a judge whose score follows length more than the labels is marked).
//!
//! Labels are compared as positions on the judge's ordered outcomes, so the same code serves
//! Yes/No and graded judges. Items a judge left unscored are counted, never compared.

use crate::metrics::rank_correlation::spearman;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}:{line}: {message}")]
    Line { file: String, line: usize, message: String },
}

/// One human label line: `{"id": "q001", "judge": "correctness", "label": "Good"}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HumanLabel {
    pub id: String,
    pub judge: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Read a labels JSONL file; a bad line is an error naming its line.
pub fn read_labels(path: &Path) -> Result<Vec<HumanLabel>, LabelsError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LabelsError::Io { file: file.clone(), source })?;
    let mut labels = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let label: HumanLabel = serde_json::from_str(line).map_err(|e| LabelsError::Line {
            file: file.clone(),
            line: i + 1,
            message: e.to_string(),
        })?;
        labels.push(label);
    }
    Ok(labels)
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Agreement {
    pub judge: String,
    pub outcomes: Vec<String>,
    /// Items with both a human label and a judge label.
    pub n: usize,
    /// Items the judge left unscored (not compared).
    pub unscored: usize,
    pub accuracy: f64,
    /// Unweighted for two outcomes, quadratic-weighted for more.
    pub kappa: Option<f64>,
    pub spearman: Option<f64>,
    /// Spearman between the human label and the judge's expected score: how well the judge
    /// ranks the items even where its argmax threshold is off (None without scores).
    pub score_spearman: Option<f64>,
    /// `confusion[human][judge]`, indexed like `outcomes`.
    pub confusion: Vec<Vec<usize>>,
    /// Spearman of the judge's score with the human labels: `score_spearman`, or `spearman`
    /// (of the judge's label) for a judge without scores.
    pub label_spearman: Option<f64>,
    /// Spearman of the judge's expected score with the answer's length in words, over the
    /// same labelled items (None without scores or lengths).
    pub length_spearman: Option<f64>,
    /// The score tracks answer length more than it tracks the labels:
    /// |length_spearman| > |label_spearman| (an undefined label Spearman counts as 0).
    pub length_biased: bool,
}

impl Agreement {
    /// Sets the length Spearman from (score, words) pairs and the label Spearman and the mark
    /// from what is already known.
    pub fn with_length(mut self, scored_lengths: &[(f64, usize)]) -> Self {
        let (scores, words): (Vec<f64>, Vec<f64>) = scored_lengths.iter().map(|&(s, w)| (s, w as f64)).unzip();
        self.length_spearman = spearman(&scores, &words);
        self.label_spearman = self.score_spearman.or(self.spearman);
        self.length_biased = length_biased(self.length_spearman, self.label_spearman);
        self
    }
}

/// A judge tracks length more than the labels: |rho with length| > |rho with labels|.
pub fn length_biased(length_spearman: Option<f64>, label_spearman: Option<f64>) -> bool {
    length_spearman.is_some_and(|l| l.abs() > label_spearman.map_or(0.0, f64::abs))
}

/// Compare pairs of (human, judge) outcome indexes on a scale of `k` ordered outcomes.
pub fn agreement(judge: &str, outcomes: &[String], pairs: &[(usize, usize)], unscored: usize) -> Agreement {
    let k = outcomes.len();
    let mut confusion = vec![vec![0usize; k]; k];
    for &(h, j) in pairs {
        confusion[h][j] += 1;
    }
    let n = pairs.len();
    let accuracy = if n == 0 { f64::NAN } else { pairs.iter().filter(|(h, j)| h == j).count() as f64 / n as f64 };
    let weights = if k > 2 { Weights::Quadratic } else { Weights::None };
    let human: Vec<f64> = pairs.iter().map(|p| p.0 as f64).collect();
    let judged: Vec<f64> = pairs.iter().map(|p| p.1 as f64).collect();
    Agreement {
        judge: judge.to_string(),
        outcomes: outcomes.to_vec(),
        n,
        unscored,
        accuracy,
        kappa: cohen_kappa(&confusion, weights),
        spearman: spearman(&human, &judged),
        score_spearman: None,
        confusion,
        label_spearman: None,
        length_spearman: None,
        length_biased: false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    None,
    Linear,
    Quadratic,
}

/// Cohen's kappa from a k×k confusion matrix (rows: rater A, columns: rater B).
/// None when undefined (no items, or both raters constant on the same outcome).
pub fn cohen_kappa(confusion: &[Vec<usize>], weights: Weights) -> Option<f64> {
    let k = confusion.len();
    let n: usize = confusion.iter().flatten().sum();
    if n == 0 || k < 2 {
        return None;
    }
    let rows: Vec<f64> = confusion.iter().map(|r| r.iter().sum::<usize>() as f64).collect();
    let cols: Vec<f64> = (0..k).map(|j| confusion.iter().map(|r| r[j]).sum::<usize>() as f64).collect();
    let disagreement = |i: usize, j: usize| -> f64 {
        let d = (i as f64 - j as f64).abs();
        match weights {
            Weights::None => f64::from(u8::from(i != j)),
            Weights::Linear => d,
            Weights::Quadratic => d * d,
        }
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let w = disagreement(i, j);
            observed += w * confusion[i][j] as f64;
            expected += w * rows[i] * cols[j] / n as f64;
        }
    }
    if expected == 0.0 {
        return None;
    }
    Some(1.0 - observed / expected)
}

/// What a judge said about one item: its label (None = unscored) and expected score.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgedItem {
    pub label: Option<String>,
    pub score: Option<f64>,
    /// Length of the judged answer in words (None when there was no answer).
    pub words: Option<usize>,
}

/// Agreement of each judge in `verdicts` (question id → judge → what it said) with the human
/// labels for that judge. Labels that are not an outcome of the judge are errors.
pub fn compare_with_labels(
    outcomes_of: &BTreeMap<String, Vec<String>>,
    verdicts: &BTreeMap<String, BTreeMap<String, JudgedItem>>,
    labels: &[HumanLabel],
) -> Result<Vec<Agreement>, String> {
    /// Per judge: (human, judge) outcome index pairs, (human index, judge score) pairs, and
    /// the unscored count.
    #[derive(Default)]
    struct Pairs {
        labels: Vec<(usize, usize)>,
        scores: Vec<(f64, f64)>,
        /// (judge score, answer words).
        lengths: Vec<(f64, usize)>,
        unscored: usize,
    }
    let mut by_judge: BTreeMap<&str, Pairs> = BTreeMap::new();
    for label in labels {
        let Some(outcomes) = outcomes_of.get(&label.judge) else { continue };
        let Some(judged) = verdicts.get(&label.id).and_then(|v| v.get(&label.judge)) else { continue };
        let position = |l: &str| outcomes.iter().position(|o| o.eq_ignore_ascii_case(l));
        let human = position(&label.label).ok_or_else(|| {
            format!("label `{}` of {} is not an outcome of judge {} ({})", label.label, label.id, label.judge, outcomes.join(", "))
        })?;
        let entry = by_judge.entry(label.judge.as_str()).or_default();
        match judged.label.as_deref().and_then(position) {
            Some(j) => {
                entry.labels.push((human, j));
                if let Some(score) = judged.score {
                    entry.scores.push((human as f64, score));
                    if let Some(words) = judged.words {
                        entry.lengths.push((score, words));
                    }
                }
            }
            None => entry.unscored += 1,
        }
    }
    Ok(by_judge
        .into_iter()
        .map(|(judge, pairs)| {
            let mut a = agreement(judge, &outcomes_of[judge], &pairs.labels, pairs.unscored);
            let (human, scores): (Vec<f64>, Vec<f64>) = pairs.scores.into_iter().unzip();
            a.score_spearman = spearman(&human, &scores);
            a.with_length(&pairs.lengths)
        })
        .collect())
}

/// Score cut points between a judge's `k` outcomes fitted to human labels: for each cut
/// (human outcome ≥ i against < i), the threshold on the expected score that classifies the
/// most labelled items right (ties: the threshold nearest the middle of the tied range). Cuts
/// are then sorted so the bands stay in order. None without both sides of some cut.
pub fn fit_thresholds(pairs: &[(usize, f64)], k: usize) -> Option<Vec<f64>> {
    if k < 2 || pairs.is_empty() {
        return None;
    }
    let mut scores: Vec<f64> = pairs.iter().map(|p| p.1).filter(|s| s.is_finite()).collect();
    scores.sort_by(f64::total_cmp);
    scores.dedup();
    // Candidate thresholds: below everything, between neighbours, above everything.
    let mut candidates = vec![0.0];
    candidates.extend(scores.windows(2).map(|w| (w[0] + w[1]) / 2.0));
    candidates.push(1.0 + f64::EPSILON);
    let mut cuts = Vec::with_capacity(k - 1);
    for i in 1..k {
        let right = |t: f64| pairs.iter().filter(|(h, s)| (*h >= i) == (*s >= t)).count();
        let best = candidates.iter().map(|&t| right(t)).max()?;
        let tied: Vec<f64> = candidates.iter().copied().filter(|&t| right(t) == best).collect();
        cuts.push(tied[tied.len() / 2].min(1.0));
    }
    cuts.sort_by(f64::total_cmp);
    Some(cuts)
}

/// The outcome index a score falls in under cut points `cuts`.
pub fn band(score: f64, cuts: &[f64]) -> usize {
    cuts.iter().filter(|t| score >= **t).count()
}

#[cfg(test)]
mod length_tests {
    use super::*;

    fn item(label: &str, score: f64, words: usize) -> JudgedItem {
        JudgedItem { label: Some(label.into()), score: Some(score), words: Some(words) }
    }

    /// A judge that says Yes to long answers and No to short ones, whatever the labels say.
    #[test]
    fn a_judge_that_follows_length_is_marked() {
        let outcomes = BTreeMap::from([("correct".to_string(), vec!["No".to_string(), "Yes".to_string()])]);
        let said = [("q1", "Yes", 0.2, 20), ("q2", "No", 0.4, 90), ("q3", "Yes", 0.7, 150), ("q4", "No", 0.9, 300)];
        let mut verdicts = BTreeMap::new();
        let mut labels = Vec::new();
        for (id, human, score, words) in said {
            let judged = item(if score >= 0.5 { "Yes" } else { "No" }, score, words);
            verdicts.insert(id.to_string(), BTreeMap::from([("correct".to_string(), judged)]));
            labels.push(HumanLabel { id: id.into(), judge: "correct".into(), label: human.into(), note: None });
        }
        let a = &compare_with_labels(&outcomes, &verdicts, &labels).unwrap_or_default()[0];
        assert_eq!(a.length_spearman, Some(1.0));
        let label_rho = spearman(&[1.0, 0.0, 1.0, 0.0], &[0.2, 0.4, 0.7, 0.9]);
        assert_eq!(a.label_spearman, label_rho);
        assert!(a.length_biased, "{a:?}");
    }

    #[test]
    fn a_judge_that_follows_the_labels_is_not_marked() {
        assert!(!length_biased(Some(0.3), Some(0.8)));
        assert!(!length_biased(Some(-0.5), Some(-0.6)));
        assert!(length_biased(Some(-0.5), Some(0.2)), "a negative length correlation counts too");
        assert!(length_biased(Some(0.1), None), "no label correlation at all");
        assert!(!length_biased(None, None));
        // Without lengths (no answer text) nothing is claimed.
        let a = agreement("correct", &["No".into(), "Yes".into()], &[(0, 0), (1, 1)], 0).with_length(&[]);
        assert_eq!((a.length_spearman, a.length_biased), (None, false));
        assert_eq!(a.label_spearman, a.spearman);
    }
}

#[cfg(test)]
mod calibration_tests {
    use super::*;

    #[test]
    fn a_fitted_threshold_separates_the_labels() {
        // The judge's scores rank perfectly but its 0.5 cut is wrong: all No below 0.3.
        let pairs = [(0, 0.05), (0, 0.1), (0, 0.2), (1, 0.3), (1, 0.35), (1, 0.9)];
        let cuts = fit_thresholds(&pairs, 2).unwrap();
        assert!(cuts[0] > 0.2 && cuts[0] <= 0.3, "{cuts:?}");
        assert!(pairs.iter().all(|(h, s)| band(*s, &cuts) == *h));
        let graded = [(0, 0.1), (1, 0.4), (2, 0.6), (3, 0.9)];
        let cuts = fit_thresholds(&graded, 4).unwrap();
        assert!(graded.iter().all(|(h, s)| band(*s, &cuts) == *h), "{cuts:?}");
    }
}
