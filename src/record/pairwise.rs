//! A pairwise judgment: one question's two answers (run A's and run B's) judged side by side,
//! once in each order, and the preference that remains when the two orders are averaged; or
//! each answer judged alone by an absolute judge, its two scores compared.
//!
//! The judge sees "answer 1" and "answer 2", never the runs' names: the first order shows A's
//! answer as answer 1, the second shows B's. Averaging the two after swapping the labels back
//! cancels a judge's preference for a position (order bias) by construction.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The outcome naming the answer shown first.
pub const FIRST_ANSWER: &str = "1";
/// The outcome naming the answer shown second.
pub const SECOND_ANSWER: &str = "2";
/// The outcome saying neither answer is better.
pub const TIE: &str = "tie";

/// Which run a judge preferred on one question, after both orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preferred {
    A,
    B,
    Tie,
}

/// One question judged in both orders.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairwiseJudgment {
    /// The question's id.
    pub id: String,
    /// The judge's distribution over its outcomes (`1`, `2`, `tie`) with run A's answer shown
    /// first; empty when unscored.
    pub a_first: BTreeMap<String, f64>,
    /// The same with run B's answer shown first.
    pub b_first: BTreeMap<String, f64>,
    /// The order-averaged preference; None when unscored (see `error`).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<PairPreference>,
    /// A judgment made by an absolute judge reading each answer alone: run A's score and run
    /// B's (the two orders then hold the same two scores). None for a side-by-side judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<[f64; 2]>,
    /// Each answer's length in words (for the length-controlled win rate).
    pub words_a: usize,
    pub words_b: usize,
    /// What deterministic checks found in either answer or the question (`possible injection`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Why the question could not be judged (an overflow, a model or server error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The preference of one question once both orders are averaged, by run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairPreference {
    /// Probability that run A's answer is better: (P(`1` | A first) + P(`2` | B first)) / 2.
    pub a_better: f64,
    /// Probability that run B's answer is better: (P(`2` | A first) + P(`1` | B first)) / 2.
    pub b_better: f64,
    /// Probability of a tie, averaged over the orders (0 for a judge without a `tie` outcome).
    pub tie: f64,
    /// The probability that B's answer is better with a tie counted half to each run:
    /// `b_better + tie / 2`. 0.5 is no preference; `2·p_b − 1 = b_better − a_better`.
    pub p_b: f64,
    /// True when both orders name the same winner (A, B or a tie by the most probable outcome).
    pub order_consistent: bool,
    /// The most probable of A / B / tie after averaging.
    pub preferred: Preferred,
}
