//! From the two orders' distributions to one preference by run.
//!
//! With run A's answer shown first, outcome `1` means A; with B's shown first, `1` means B. A
//! judge that leans towards the first position adds the same weight to A in one order and to B
//! in the other, so the average of the two (labels swapped back) holds no trace of the lean.
//! A judge asked about each answer in turn gives each order as two probabilities of agreeing
//! with the reference, turned here into the same three outcomes. Kept apart from the model so
//! the arithmetic is checked exactly.

use std::collections::BTreeMap;

use crate::record::{PairPreference, Preferred, FIRST_ANSWER, SECOND_ANSWER, TIE};

/// One order's probabilities by run: (A better, B better, tie).
fn by_run(distribution: &BTreeMap<String, f64>, a_first: bool) -> (f64, f64, f64) {
    let p = |outcome: &str| distribution.get(outcome).copied().unwrap_or(0.0);
    let (first, second, tie) = (p(FIRST_ANSWER), p(SECOND_ANSWER), p(TIE));
    if a_first {
        (first, second, tie)
    } else {
        (second, first, tie)
    }
}

/// The most probable of A / B / tie; on equal probabilities a tie, then A (a preference for B
/// is never claimed on a draw).
fn most_probable((a, b, tie): (f64, f64, f64)) -> Preferred {
    if tie >= a && tie >= b {
        Preferred::Tie
    } else if b > a {
        Preferred::B
    } else if a > b {
        Preferred::A
    } else {
        Preferred::Tie
    }
}

/// One order's distribution over `1`, `2` and `tie` from a judge asked about each answer in
/// turn: `first` and `second` are its probabilities that answer 1 and answer 2 agree with the
/// reference. Read as two independent judgments, answer 1 is the better when it agrees and
/// answer 2 does not, and a tie is both agreeing or neither; so P(`2`) + P(`tie`)/2 is
/// 1/2 + (second − first)/2, the difference of the two answers' scores on one scale.
pub fn from_each_answer(first: f64, second: f64) -> BTreeMap<String, f64> {
    let one = first * (1.0 - second);
    let two = second * (1.0 - first);
    [(FIRST_ANSWER, one), (SECOND_ANSWER, two), (TIE, 1.0 - one - two)].into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// The preference of two answers each judged alone, with scores `y_a` and `y_b`: both orders
/// hold the same two judgments (`from_each_answer`), and the answer preferred is the one scored
/// higher (a tie only on equal scores). Not the most probable of A / B / tie, as side by side:
/// two independent middling scores (0.45 and 0.60) make "both right or both wrong" the most
/// probable reading, which would call nearly every question a tie and hide which way it leans.
pub fn from_scores(y_a: f64, y_b: f64) -> (BTreeMap<String, f64>, BTreeMap<String, f64>, PairPreference) {
    let (a_first, b_first) = (from_each_answer(y_a, y_b), from_each_answer(y_b, y_a));
    let mut preference = combine_orders(&a_first, &b_first);
    preference.preferred = match y_b.partial_cmp(&y_a) {
        Some(std::cmp::Ordering::Greater) => Preferred::B,
        Some(std::cmp::Ordering::Less) => Preferred::A,
        _ => Preferred::Tie,
    };
    (a_first, b_first, preference)
}

/// The order-averaged preference from the distribution with A's answer first and the one with
/// B's answer first (each over the outcomes `1`, `2` and perhaps `tie`, summing to 1).
pub fn combine_orders(a_first: &BTreeMap<String, f64>, b_first: &BTreeMap<String, f64>) -> PairPreference {
    let one = by_run(a_first, true);
    let other = by_run(b_first, false);
    let averaged = ((one.0 + other.0) / 2.0, (one.1 + other.1) / 2.0, (one.2 + other.2) / 2.0);
    PairPreference {
        a_better: averaged.0,
        b_better: averaged.1,
        tie: averaged.2,
        p_b: averaged.1 + averaged.2 / 2.0,
        order_consistent: most_probable(one) == most_probable(other),
        preferred: most_probable(averaged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(first: f64, second: f64, tie: f64) -> BTreeMap<String, f64> {
        [(FIRST_ANSWER, first), (SECOND_ANSWER, second), (TIE, tie)].into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn a_pure_position_bias_cancels() {
        // A judge that always says "1" with 0.7 whatever it reads: no preference between runs.
        let p = combine_orders(&dist(0.7, 0.2, 0.1), &dist(0.7, 0.2, 0.1));
        assert!((p.a_better - 0.45).abs() < 1e-12 && (p.b_better - 0.45).abs() < 1e-12);
        assert!((p.p_b - 0.5).abs() < 1e-12);
        assert!(!p.order_consistent, "A first in one order, B in the other");
        assert_eq!(p.preferred, Preferred::Tie);
    }

    #[test]
    fn a_preference_that_survives_the_swap_is_kept() {
        // B is shown second (outcome 2) in the first order and first (outcome 1) in the second.
        let p = combine_orders(&dist(0.1, 0.8, 0.1), &dist(0.6, 0.2, 0.2));
        assert!((p.b_better - 0.7).abs() < 1e-12, "{p:?}");
        assert!((p.a_better - 0.15).abs() < 1e-12);
        assert!((p.tie - 0.15).abs() < 1e-12);
        assert!((p.p_b - 0.775).abs() < 1e-12);
        assert!(p.order_consistent);
        assert_eq!(p.preferred, Preferred::B);
    }

    #[test]
    fn each_answer_judged_on_one_scale_gives_half_the_difference_of_its_scores() {
        let d = from_each_answer(0.9, 0.3);
        assert!((d[FIRST_ANSWER] - 0.63).abs() < 1e-12 && (d[SECOND_ANSWER] - 0.03).abs() < 1e-12);
        assert!((d.values().sum::<f64>() - 1.0).abs() < 1e-12);
        // A first: A 0.9, B 0.3; B first: B 0.4, A 0.8. p_b = 1/2 + (mean B - mean A)/2.
        let p = combine_orders(&d, &from_each_answer(0.4, 0.8));
        assert!((p.p_b - (0.5 + (0.35 - 0.85) / 2.0)).abs() < 1e-12, "{p:?}");
        assert_eq!(p.preferred, Preferred::A);
        assert!(p.order_consistent);
        // Both answers scored alike in both orders: no preference, and a tie.
        let same = combine_orders(&from_each_answer(0.7, 0.7), &from_each_answer(0.7, 0.7));
        assert!((same.p_b - 0.5).abs() < 1e-12 && same.preferred == Preferred::Tie);
    }

    #[test]
    fn answers_judged_alone_prefer_the_higher_score_even_when_a_tie_is_most_probable() {
        let (a_first, b_first, p) = from_scores(0.45, 0.60);
        assert!(p.tie > p.a_better && p.tie > p.b_better, "{p:?}");
        assert_eq!(p.preferred, Preferred::B);
        assert!((p.p_b - (0.5 + 0.15 / 2.0)).abs() < 1e-12 && p.order_consistent);
        assert_eq!((a_first, b_first), (from_each_answer(0.45, 0.60), from_each_answer(0.60, 0.45)));
        assert_eq!(from_scores(0.7, 0.7).2.preferred, Preferred::Tie);
        assert_eq!(from_scores(0.7, 0.2).2.preferred, Preferred::A);
    }

    #[test]
    fn a_judge_without_ties_and_a_preference_for_a() {
        let two = |first: f64| -> BTreeMap<String, f64> {
            [(FIRST_ANSWER.to_string(), first), (SECOND_ANSWER.to_string(), 1.0 - first)].into_iter().collect()
        };
        let p = combine_orders(&two(0.9), &two(0.3));
        assert!((p.a_better - 0.8).abs() < 1e-12 && (p.b_better - 0.2).abs() < 1e-12 && p.tie == 0.0);
        assert!((p.p_b - 0.2).abs() < 1e-12);
        assert!(p.order_consistent);
        assert_eq!(p.preferred, Preferred::A);
    }
}
