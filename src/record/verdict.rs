//! A judge's verdict on one answer: the label, the expected score and the whole distribution.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// The most probable outcome.
    pub label: Option<String>,
    /// Expected value of the outcome scores, in [0, 1].
    pub score: Option<f64>,
    /// Probability of each allowed outcome.
    #[serde(default)]
    pub distribution: BTreeMap<String, f64>,
    #[serde(default)]
    pub explanation: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    /// Whether the label meets the judge's pass threshold (`pass` in its spec); None when the
    /// spec sets none or the verdict has no label. A run's pass rate is the share of true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// For a judge with a baseline (`baseline` in its spec): its distribution for the same
    /// prompt with the question in place of the answer. `distribution` is then the answer's
    /// divided by this one, renormalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BTreeMap<String, f64>>,
    /// What deterministic checks found in the judged text (`possible injection`: text addressed
    /// to a grader or shaped like a chat turn). Shown beside the score, counted in `show`,
    /// reports and the app: a flagged answer is never silently scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Statement judges: every statement checked, with its probability of being supported, so
    /// a user sees which sentence was judged wrong.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementCheck>,
}

/// The flag a verdict carries when the judged text looks like it addresses the grader.
pub const FLAG_POSSIBLE_INJECTION: &str = "possible injection";
/// The flag on a verdict given without the model to an answer that states nothing
/// (`judge::nothing_stated`).
pub const FLAG_STATES_NOTHING: &str = "states nothing";
/// The flag on every verdict of an item whose values were cut to fit the judge's window.
pub const FLAG_CUT_TO_FIT: &str = "cut to fit the judge's context";
/// The start of the flag on a jury verdict that rests on fewer members than the jury lists;
/// the members left out follow it (`jury members left out: supported, rouge_l`), so runs can
/// count items by which members were missing.
pub const FLAG_MEMBERS_LEFT_OUT: &str = "jury members left out";

/// What a flag tells a reader: the faces show it beside the flag (the line under a run's
/// counts, a badge's tooltip, the drill-down), so each flag is explained by what it means.
pub fn flag_meaning(flag: &str) -> &'static str {
    if flag == FLAG_POSSIBLE_INJECTION {
        "the answer, the question or a retrieved chunk looks like it addresses the grader or forges a chat turn: \
         its scores are kept, read the answer before trusting them"
    } else if flag == FLAG_STATES_NOTHING {
        "the answer states nothing (empty, a refusal where the reference answers, a lead-in, only questions): \
         the judges that check it against the reference scored it 0 without asking the model"
    } else if flag == FLAG_CUT_TO_FIT {
        "text past the judge model's window was cut by a stated rule before judging: the judge did not read all of it"
    } else if flag.starts_with(FLAG_MEMBERS_LEFT_OUT) {
        "the jury's score is the mean of the members that could score this item; the flag names the others"
    } else {
        "a deterministic check flagged this item: read it before trusting its scores"
    }
}

/// Which text a checked statement came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementSide {
    /// A statement of the answer, checked against the reference (precision).
    Answer,
    /// A statement of the reference, checked against the answer (recall).
    Reference,
}

/// One statement and how well the other side supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementCheck {
    pub side: StatementSide,
    pub text: String,
    /// Probability that the other side supports it, in [0, 1] (0 when a number vetoed it).
    pub supported: f64,
    /// A number in the statement that the other side contradicts (the numeric check's veto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_conflict: Option<String>,
}
