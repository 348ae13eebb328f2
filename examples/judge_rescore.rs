//! Rescoring stored long-answer verdicts without a model: each jury built from the stored
//! `correct` and `supported` verdicts and the deterministic members, ranked against the
//! claim-level reference (claims-long.jsonl's F1) by Spearman, and labelled at a threshold
//! against people's labels. For trying a change to a deterministic member on the four long
//! sets' stored runs (scripts/judge-agreement.sh keeps their exports in target/judge-agreement).
//!
//! Usage: cargo run --example judge_rescore -- [EXPORT_DIR]   (default target/judge-agreement)

use std::collections::BTreeMap;

use assay::judge::jury_metrics::jury_metric;
use assay::metrics::{lexical, rank_correlation::spearman, rouge};
use assay::judge::statement_overlap::statement_overlap;

struct Item {
    answer: String,
    reference: String,
    correct: f64,
    supported: f64,
    /// supported's recall half, the stored score `covered` gives (its checks are the same
    /// prompts); supported's F1 where the reference had no statements.
    recall: f64,
    f1: f64,
    label: Option<bool>,
}

fn read_set(dir: &str, model: &str, dataset: &str, tag: &str) -> anyhow::Result<Vec<Item>> {
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{model}-{tag}.export.json"))?)?;
    let mut f1 = BTreeMap::new();
    for line in std::fs::read_to_string(format!("datasets/{dataset}/claims-long.jsonl"))?.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if let (Some(id), Some(f)) = (v["id"].as_str(), v["f1"].as_f64()) {
            f1.insert(id.to_string(), f);
        }
    }
    let mut labels = BTreeMap::new();
    for line in std::fs::read_to_string(format!("datasets/{dataset}/labels-long.jsonl"))?.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        if let (Some(id), Some(l)) = (v["id"].as_str(), v["label"].as_str()) {
            labels.insert(id.to_string(), l == "Yes");
        }
    }
    let mut items = Vec::new();
    let Some(entries) = export["runs"][0]["items"].as_array() else { anyhow::bail!("{tag}: no items") };
    for it in entries {
        let id = it["id"].as_str().unwrap_or_default();
        let (Some(f), Some(c), Some(s)) = (
            f1.get(id),
            it["verdicts"]["correct"]["score"].as_f64(),
            it["verdicts"]["supported"]["score"].as_f64(),
        ) else {
            continue;
        };
        items.push(Item {
            answer: it["answer"].as_str().unwrap_or_default().to_string(),
            reference: it["reference"].as_str().unwrap_or_default().to_string(),
            correct: c,
            supported: s,
            recall: it["verdicts"]["supported.recall"]["score"].as_f64().unwrap_or(s),
            f1: *f,
            label: labels.get(id).copied(),
        });
    }
    Ok(items)
}

fn main() -> anyhow::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "target/judge-agreement".into());
    let model = "qwen2.5-coder-1.5b-instruct";
    let sets = [("trailgear", "long"), ("realdocs-hard", "rdh-long"), ("budgets", "budgets-long"), ("realdocs", "rd-long")];
    type Score = fn(&Item) -> f64;
    // "alike": the jury's own computation (numbers written as the reference writes them).
    let juries: Vec<(&str, Score)> = vec![
        ("rouge_l as written", |i| rouge::rouge_l(&i.answer, &i.reference)),
        ("rouge_l alike", |i| jury_metric("rouge_l", &i.answer, &i.reference).unwrap_or(0.0)),
        ("token_f1 as written", |i| lexical::token_f1(&i.answer, &i.reference)),
        ("token_f1 alike", |i| jury_metric("token_f1", &i.answer, &i.reference).unwrap_or(0.0)),
        ("statement_overlap as written", |i| statement_overlap(&i.answer, &i.reference)),
        ("statement_overlap alike", |i| jury_metric("statement_overlap", &i.answer, &i.reference).unwrap_or(0.0)),
        ("facts as written", |i| (i.correct + i.supported + rouge::rouge_l(&i.answer, &i.reference)) / 3.0),
        ("facts alike", |i| (i.correct + i.supported + jury_metric("rouge_l", &i.answer, &i.reference).unwrap_or(0.0)) / 3.0),
        ("facts-overlap before 2026-11-29 (supported), as written", |i| {
            (i.correct + i.supported + rouge::rouge_l(&i.answer, &i.reference) + statement_overlap(&i.answer, &i.reference)) / 4.0
        }),
        ("facts-overlap before 2026-11-29 (supported), alike", |i| {
            let m = |n| jury_metric(n, &i.answer, &i.reference).unwrap_or(0.0);
            (i.correct + i.supported + m("rouge_l") + m("statement_overlap")) / 4.0
        }),
        ("covered (supported's recall)", |i| i.recall),
        ("facts-recall alike", |i| (i.correct + i.recall + jury_metric("rouge_l", &i.answer, &i.reference).unwrap_or(0.0)) / 3.0),
        ("facts-overlap alike", |i| {
            let m = |n| jury_metric(n, &i.answer, &i.reference).unwrap_or(0.0);
            (i.correct + i.recall + m("rouge_l") + m("statement_overlap")) / 4.0
        }),
    ];
    let data: Vec<(&str, Vec<Item>)> = sets.iter().map(|(d, t)| Ok((*d, read_set(&dir, model, d, t)?))).collect::<anyhow::Result<_>>()?;
    // JUDGE_RESCORE_SHOW=SET prints the answers of SET whose ROUGE-L moves when numbers are written alike.
    if let Ok(show) = std::env::var("JUDGE_RESCORE_SHOW") {
        for (d, items) in &data {
            if *d == show {
                debug_diffs(items);
            }
        }
        return Ok(());
    }
    print!("{:<56}", "score");
    for (d, items) in &data {
        print!(" {:>14}", format!("{d} ({})", items.len()));
    }
    println!(" {:>8}", "mean");
    for (name, score) in &juries {
        print!("{name:<56}");
        let mut sum = 0.0;
        for (_, items) in &data {
            let s: Vec<f64> = items.iter().map(score).collect();
            let f: Vec<f64> = items.iter().map(|i| i.f1).collect();
            let rho = spearman(&s, &f).unwrap_or(f64::NAN);
            sum += rho;
            print!(" {rho:>14.3}");
        }
        println!(" {:>8.3}", sum / data.len() as f64);
    }
    // Labels at the built-in thresholds: wrong answers passed, right ones failed, per set.
    let by_name = |name: &str| juries.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    for (name, threshold) in
        [("facts as written", 0.45), ("facts alike", 0.45), ("facts-overlap before 2026-11-29 (supported), alike", 0.393), ("facts-recall alike", 0.455), ("facts-overlap alike", 0.395)]
    {
        let Some(f) = by_name(name) else { continue };
        print!("{name} at {threshold}:");
        for (d, items) in &data {
            let c = PassFail::count(items.iter(), f, threshold);
            print!("  {d}: wrong passed {}/{}, right failed {}/{}, kappa {:.3}", c.wrong_passed, c.wrong, c.right_failed, c.right, c.kappa());
        }
        println!();
    }
    // Each jury's threshold fitted (best pooled kappa) on the first two sets and read on the
    // last two, held out: how a new jury would be calibrated before it ships.
    let (fit_on, held_out) = data.split_at(2);
    for (name, f) in &juries {
        let pooled = |sets: &[(&str, Vec<Item>)], t: f64| PassFail::count(sets.iter().flat_map(|(_, items)| items), *f, t);
        let thresholds = (60..=140).map(|k| f64::from(k) * 0.005);
        let best = thresholds.map(|t| (pooled(fit_on, t).kappa(), t)).fold((f64::MIN, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        let c = pooled(held_out, best.1);
        println!(
            "{name:<56} fitted {:.3} (kappa {:.3} there); held out: kappa {:.3}, wrong passed {}/{}, right failed {}/{}",
            best.1,
            best.0,
            c.kappa(),
            c.wrong_passed,
            c.wrong,
            c.right_failed,
            c.right
        );
    }
    Ok(())
}

/// A jury's pass/fail at a threshold against people's labels.
struct PassFail {
    wrong: usize,
    wrong_passed: usize,
    right: usize,
    right_failed: usize,
}

impl PassFail {
    fn count<'a>(items: impl Iterator<Item = &'a Item>, score: fn(&Item) -> f64, threshold: f64) -> Self {
        let mut c = PassFail { wrong: 0, wrong_passed: 0, right: 0, right_failed: 0 };
        for i in items {
            let pass = score(i) >= threshold;
            match i.label {
                Some(true) => (c.right, c.right_failed) = (c.right + 1, c.right_failed + usize::from(!pass)),
                Some(false) => (c.wrong, c.wrong_passed) = (c.wrong + 1, c.wrong_passed + usize::from(pass)),
                None => {}
            }
        }
        c
    }

    /// Cohen's kappa of the judge's pass/fail against the labels.
    fn kappa(&self) -> f64 {
        let n = (self.wrong + self.right) as f64;
        let agreed = (self.wrong - self.wrong_passed + self.right - self.right_failed) as f64 / n;
        let judge_yes = (self.wrong_passed + self.right - self.right_failed) as f64 / n;
        let people_yes = self.right as f64 / n;
        let chance = judge_yes * people_yes + (1.0 - judge_yes) * (1.0 - people_yes);
        if chance >= 1.0 {
            0.0
        } else {
            (agreed - chance) / (1.0 - chance)
        }
    }
}

fn debug_diffs(items: &[Item]) {
    for i in items {
        let (a, _) = assay::metrics::numbers::written_as_the_reference(&i.answer, &i.reference);
        let (x, y) = (jury_metric("rouge_l", &i.answer, &i.reference).unwrap_or(0.0), rouge::rouge_l(&i.answer, &i.reference));
        if (x - y).abs() > 0.01 {
            println!("---- rouge_l alike {x:.3}, as written {y:.3}; claim f1 {:.3}\nANSWER: {}\nREWRITTEN: {a}\nREF: {}", i.f1, i.answer, i.reference);
        }
    }
}
