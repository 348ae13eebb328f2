//! The paired statistics against scipy (reference values from scripts/compare_reference.py).
//!
//! The mean difference, the sign test and the exact permutation test must agree to 1e-9. The
//! BCa interval and the Monte Carlo permutation p are estimates on both sides (different
//! generators), so they must agree within 0.015 and 0.005 — several times the spread of our
//! 10,000-resample interval and 100,000-resample p on these sizes.

use assay::compare::{paired_diff, sign_test_p, Verdict, MIN_PAIRS_FOR_VERDICT};
use serde_json::Value;

fn reference() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/compare/reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn paired_statistics_agree_with_scipy() {
    let reference = reference();
    for case in reference["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let a = floats(&case["a"]);
        let b = floats(&case["b"]);
        let pairs: Vec<(String, f64, f64)> = a
            .iter()
            .zip(&b)
            .enumerate()
            .map(|(i, (x, y))| (format!("q{i}"), *x, *y))
            .collect();
        let diff = paired_diff("m", &pairs, 0, 7);
        let want_ci = floats(&case["ci95_diff"]);
        assert!((diff.mean_diff - case["mean_diff"].as_f64().unwrap()).abs() < 1e-9, "{name}");
        assert_eq!(diff.wins as u64, case["wins"].as_u64().unwrap(), "{name}");
        assert_eq!(diff.losses as u64, case["losses"].as_u64().unwrap(), "{name}");
        assert_eq!(diff.ties as u64, case["ties"].as_u64().unwrap(), "{name}");
        let p = case["sign_test_p"].as_f64().unwrap();
        assert!((diff.sign_test_p - p).abs() < 1e-9, "{name}: p {} vs {p}", diff.sign_test_p);
        for (got, want) in diff.ci95_diff.iter().zip(&want_ci) {
            assert!((got - want).abs() < 0.015, "{name}: ci {:?} vs {want_ci:?}", diff.ci95_diff);
        }
        let want_p = case["permutation_p"].as_f64().unwrap();
        let tolerance = if case["permutation_exact"].as_bool().unwrap() { 1e-9 } else { 0.005 };
        assert!((diff.permutation_p - want_p).abs() < tolerance, "{name}: permutation p {} vs {want_p}", diff.permutation_p);
        // One metric alone: its adjusted p is its own.
        let expected = if pairs.len() < MIN_PAIRS_FOR_VERDICT {
            Verdict::TooFewPairs
        } else if want_p < 0.05 && want_ci[0] > 0.0 {
            Verdict::BBetter
        } else if want_p < 0.05 && want_ci[1] < 0.0 {
            Verdict::ABetter
        } else {
            Verdict::NoSignificantDifference
        };
        // Only insist on the verdict when the reference is clearly on one side of each rule.
        if want_ci[0].abs() > 0.015 && want_ci[1].abs() > 0.015 && (want_p - 0.05).abs() > 0.01 {
            assert_eq!(diff.verdict, expected, "{name}");
        }
    }
}

#[test]
fn sign_test_agrees_with_scipy_binomtest() {
    for case in reference()["sign_tests"].as_array().unwrap() {
        let (w, l, p) = (case[0].as_u64().unwrap() as usize, case[1].as_u64().unwrap() as usize, case[2].as_f64().unwrap());
        let got = sign_test_p(w, l);
        // Relative agreement: the p-values of big samples are tiny.
        assert!((got - p).abs() <= 1e-9 * p || (got - p).abs() < 1e-12, "{w}/{l}: {got} vs {p}");
    }
}

/// A consistent gain on a handful of questions gets no verdict until there are enough pairs:
/// the bootstrap interval of 3 equal gains is [g, g] and would otherwise say "better".
#[test]
fn a_verdict_needs_enough_pairs() {
    let pairs = |n: usize| -> Vec<(String, f64, f64)> { (0..n).map(|i| (format!("q{i}"), 0.2, 0.9)).collect() };
    for n in 1..MIN_PAIRS_FOR_VERDICT {
        let diff = paired_diff("m", &pairs(n), 0, 7);
        assert_eq!(diff.verdict, Verdict::TooFewPairs, "{n} pairs");
        assert!(diff.ci95_diff[0] > 0.0, "the interval alone would have called it");
    }
    assert_eq!(paired_diff("m", &pairs(MIN_PAIRS_FOR_VERDICT), 0, 7).verdict, Verdict::BBetter);
    assert_eq!(paired_diff("m", &[], 0, 7).verdict, Verdict::NoPairs);
}
