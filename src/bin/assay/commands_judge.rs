//! `assay judges list|show` and `assay agree`: judge specs and their agreement with humans.

use anyhow::Context;
use assay::judge::agreement::{band, compare_with_labels, fit_thresholds, read_labels, Agreement, JudgedItem};
use assay::judge::spec::{default_judges_dir, load_all, write_calibrated_copy};
use clap::Subcommand;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum JudgesCommand {
    /// List the judges: built-ins and those in the judges dir.
    List {
        #[arg(long)]
        json: bool,
        /// Directory of user judge specs (default: <data dir>/assay/judges).
        #[arg(long, env = "ASSAY_JUDGES_DIR")]
        judges_dir: Option<PathBuf>,
    },
    /// Show one judge's spec and prompt template.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
        #[arg(long, env = "ASSAY_JUDGES_DIR")]
        judges_dir: Option<PathBuf>,
    },
}

fn judges_dir(arg: Option<PathBuf>) -> Option<PathBuf> {
    arg.or_else(default_judges_dir)
}

pub fn run(command: JudgesCommand) -> anyhow::Result<i32> {
    match command {
        JudgesCommand::List { json, judges_dir: dir } => {
            let specs = load_all(judges_dir(dir).as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&specs.values().collect::<Vec<_>>())?);
            } else {
                use crate::terminal::text;
                for spec in specs.values() {
                    let calibrated = match (&spec.thresholds, spec.calibrated_on) {
                        (Some(_), Some(n)) => format!(", calibrated on {n} labels"),
                        (Some(_), None) => ", calibrated".to_string(),
                        _ => String::new(),
                    };
                    println!(
                        "{:<14} {:<7} [{}]  {}  ({}{calibrated})",
                        text(&spec.name),
                        format!("{:?}", spec.mode).to_lowercase(),
                        text(&spec.outcomes.join(", ")),
                        text(&spec.description),
                        text(&spec.source)
                    );
                }
            }
        }
        JudgesCommand::Show { name, json, judges_dir: dir } => {
            let specs = load_all(judges_dir(dir).as_deref())?;
            let spec = assay::judge::spec::select(&specs, std::slice::from_ref(&name))?.remove(0);
            if json {
                println!("{}", serde_json::to_string_pretty(&spec)?);
            } else {
                // A user's spec is untrusted text: no escape sequence reaches the terminal.
                use crate::terminal::text;
                println!("name:     {}", text(&spec.name));
                println!("source:   {}", text(&spec.source));
                println!("mode:     {:?}", spec.mode);
                let values: Vec<String> = spec.values.iter().map(|v| v.to_string()).collect();
                println!("outcomes: {} (values {})", text(&spec.outcomes.join(" < ")), values.join(", "));
                println!("inputs:   {}", text(&spec.inputs.join(", ")));
                println!("explain:  {}", spec.explain);
                if let Some(pass) = &spec.pass {
                    println!("pass:     {} or better", text(pass));
                }
                if let Some(model) = &spec.model {
                    println!("model:    {}", text(model));
                }
                if spec.baseline.is_some() {
                    println!("baseline: the question in place of the answer (each verdict is divided by that one's)");
                }
                if !spec.members.is_empty() {
                    println!("members:  {}", text(&spec.members.join(", ")));
                }
                if let Some(thresholds) = &spec.thresholds {
                    let cuts: Vec<String> = thresholds.iter().map(|t| t.to_string()).collect();
                    let on = spec.calibrated_on.map(|n| format!(" on {n} human labels")).unwrap_or_default();
                    println!("calibrated: score cut points {}{on}", cuts.join(", "));
                }
                println!("\n{}", text(&spec.template));
            }
        }
    }
    Ok(0)
}

/// How `assay agree` compares and calibrates.
pub struct AgreeOptions {
    pub json: bool,
    /// Judges without labels of their own (a jury, claims) are compared with the labels of this
    /// judge, as pass / fail (its pass outcome or better is a pass).
    pub labels_as: Option<String>,
    /// Fit score thresholds from the labels, report agreement before and after, and write
    /// calibrated copies of the judge specs into the judges dir.
    pub calibrate: bool,
}

/// `assay agree RUN… --labels FILE…`: each judge of the runs against human labels. Several
/// runs (each with its own labels file, in the same order) are pooled: their items are told
/// apart by run, so two answer sets over the same questions give one table over all items.
pub fn agree(runs: &[String], labels: &[PathBuf], options: AgreeOptions, judges_dir_arg: Option<PathBuf>, db: &Path) -> anyhow::Result<i32> {
    if runs.len() != labels.len() {
        anyhow::bail!("give one --labels file per run ({} runs, {} labels files)", runs.len(), labels.len());
    }
    let store = assay::store::Store::open_existing(db).with_context(|| format!("opening {}", db.display()))?;
    let dir = judges_dir(judges_dir_arg);
    let specs = load_all(dir.as_deref())?;
    let mut outcomes_of: BTreeMap<String, Vec<String>> = specs.iter().map(|(k, s)| (k.clone(), s.outcomes.clone())).collect();
    let mut verdicts: BTreeMap<String, BTreeMap<String, JudgedItem>> = BTreeMap::new();
    let mut human = Vec::new();
    for (index, (run, labels_file)) in runs.iter().zip(labels).enumerate() {
        let record = store.find_run(run)?;
        // One key space per run: `0:q001` and `1:q001` are different items.
        let key = |id: &str| if runs.len() == 1 { id.to_string() } else { format!("{index}:{id}") };
        for item in store.items(&record.id)? {
            let words = item.answer.as_ref().map(|a| assay::metrics::normalize::word_count(&a.text));
            let labels = item
                .verdicts
                .iter()
                .map(|(judge, v)| (judge.clone(), JudgedItem { label: v.label.clone(), score: v.score, words }))
                .collect();
            verdicts.insert(key(&item.question.id), labels);
        }
        for mut label in read_labels(labels_file)? {
            label.id = key(&label.id);
            human.push(label);
        }
    }
    if let Some(base) = &options.labels_as {
        add_pass_fail_rows(base, &specs, &mut outcomes_of, &mut verdicts, &mut human)?;
    }
    let agreements = compare_with_labels(&outcomes_of, &verdicts, &human).map_err(anyhow::Error::msg)?;
    if agreements.is_empty() {
        anyhow::bail!("no judge of run(s) {} has human labels in the labels file(s)", runs.join(", "));
    }
    if !options.calibrate {
        if options.json {
            println!("{}", serde_json::to_string_pretty(&agreements)?);
        } else {
            print_agreements(&agreements);
        }
        return Ok(0);
    }
    let mut calibrated = Vec::new();
    for before in &agreements {
        // Pairs of (human outcome, expected score) for this row.
        let outcomes = &outcomes_of[&before.judge];
        let mut pairs = Vec::new();
        for label in human.iter().filter(|l| l.judge == before.judge) {
            let Some(score) = verdicts.get(&label.id).and_then(|v| v.get(&label.judge)).and_then(|j| j.score) else { continue };
            if let Some(h) = outcomes.iter().position(|o| o.eq_ignore_ascii_case(&label.label)) {
                pairs.push((h, score));
            }
        }
        let Some(cuts) = fit_thresholds(&pairs, outcomes.len()) else { continue };
        let mut relabelled = verdicts.clone();
        for items in relabelled.values_mut() {
            if let Some(j) = items.get_mut(&before.judge) {
                if let Some(score) = j.score {
                    j.label = Some(outcomes[band(score, &cuts)].clone());
                }
            }
        }
        let after = compare_with_labels(&outcomes_of, &relabelled, &human)
            .map_err(anyhow::Error::msg)?
            .into_iter()
            .find(|a| a.judge == before.judge);
        // A copy of the spec with the thresholds, for judges whose label the thresholds set.
        let judge_name = before.judge.split('@').next().unwrap_or(&before.judge);
        let written = match (specs.get(judge_name), &dir) {
            (Some(spec), Some(dir)) if spec.outcomes.len() == outcomes.len() && spec.mode != assay::judge::JudgeMode::Claims => {
                Some(write_calibrated_copy(spec, dir, &cuts, pairs.len())?.display().to_string())
            }
            _ => None,
        };
        calibrated.push(Calibration { judge: before.judge.clone(), labels: pairs.len(), thresholds: cuts, before: before.clone(), after, written });
    }
    if options.json {
        println!("{}", serde_json::to_string_pretty(&calibrated)?);
    } else {
        println!("{:<22} {:>6} {:>18} {:>10} {:>10} {:>8} {:>8}", "judge", "labels", "thresholds", "acc before", "acc after", "κ before", "κ after");
        for c in &calibrated {
            let cuts: Vec<String> = c.thresholds.iter().map(|t| format!("{t:.3}")).collect();
            println!(
                "{:<22} {:>6} {:>18} {:>10} {:>10} {:>8} {:>8}",
                c.judge,
                c.labels,
                cuts.join(","),
                fmt(Some(c.before.accuracy)),
                fmt(c.after.as_ref().map(|a| a.accuracy)),
                fmt(c.before.kappa),
                fmt(c.after.as_ref().and_then(|a| a.kappa))
            );
        }
        for c in calibrated.iter().filter(|c| c.written.is_some()) {
            println!("calibrated copy of {} (on {} labels): {}", c.judge, c.labels, c.written.as_deref().unwrap_or(""));
        }
    }
    Ok(0)
}

#[derive(serde::Serialize)]
struct Calibration {
    judge: String,
    /// Human labels the thresholds were fitted on.
    labels: usize,
    thresholds: Vec<f64>,
    before: Agreement,
    after: Option<Agreement>,
    /// The calibrated spec copy written, if any.
    written: Option<String>,
}

/// Rows `<judge>@<base>` for every judge of the runs that has a score but no labels of its own:
/// pass / fail against the pass / fail of `base`'s human labels (its label by its 0.5 score
/// cut, or its calibrated band, when it has no two-outcome label of its own).
fn add_pass_fail_rows(
    base: &str,
    specs: &BTreeMap<String, assay::judge::JudgeSpec>,
    outcomes_of: &mut BTreeMap<String, Vec<String>>,
    verdicts: &mut BTreeMap<String, BTreeMap<String, JudgedItem>>,
    human: &mut Vec<assay::judge::agreement::HumanLabel>,
) -> anyhow::Result<()> {
    let base_spec = specs.get(base).with_context(|| format!("--labels-as: no judge named {base}"))?;
    let labelled: std::collections::BTreeSet<String> = human.iter().map(|l| l.judge.clone()).collect();
    let judged: std::collections::BTreeSet<String> = verdicts.values().flat_map(|v| v.keys().cloned()).collect();
    let pass_fail = vec!["No".to_string(), "Yes".to_string()];
    let mut added = Vec::new();
    for judge in judged.iter().filter(|j| !labelled.contains(*j) && j.as_str() != base) {
        let key = format!("{judge}@{base}");
        outcomes_of.insert(key.clone(), pass_fail.clone());
        for items in verdicts.values_mut() {
            let Some(j) = items.get(judge).cloned() else { continue };
            let label = j.score.map(|s| if s >= 0.5 { "Yes" } else { "No" }.to_string());
            let label = match (&j.label, specs.get(judge.as_str())) {
                (Some(l), Some(spec)) if spec.outcomes == pass_fail => Some(l.clone()),
                _ => label,
            };
            items.insert(key.clone(), JudgedItem { label, score: j.score, words: j.words });
        }
        for label in human.iter().filter(|l| l.judge == base) {
            let passes = base_spec.passes(&label.label).unwrap_or(false);
            added.push(assay::judge::agreement::HumanLabel {
                id: label.id.clone(),
                judge: key.clone(),
                label: if passes { "Yes" } else { "No" }.to_string(),
                note: None,
            });
        }
    }
    human.extend(added);
    Ok(())
}

fn fmt(value: Option<f64>) -> String {
    value.map_or("n/a".into(), |v| format!("{v:.3}"))
}

pub fn print_agreements(agreements: &[Agreement]) {
    println!(
        "{:<14} {:>4} {:>9} {:>9} {:>7} {:>9} {:>15} {:>16}",
        "judge", "n", "unscored", "accuracy", "kappa", "spearman", "score spearman", "length spearman"
    );
    for a in agreements {
        println!(
            "{:<14} {:>4} {:>9} {:>9} {:>7} {:>9} {:>15} {:>16}",
            a.judge,
            a.n,
            a.unscored,
            fmt(Some(a.accuracy)),
            fmt(a.kappa),
            fmt(a.spearman),
            fmt(a.score_spearman),
            fmt(a.length_spearman)
        );
    }
    for a in agreements.iter().filter(|a| a.length_biased) {
        println!(
            "\nwarning: {}'s score tracks answer length (Spearman {} with words) more than the labels (Spearman {})",
            a.judge,
            fmt(a.length_spearman),
            fmt(a.label_spearman)
        );
    }
    for a in agreements {
        println!("\n{}: confusion (rows human, columns judge)", a.judge);
        println!("{:>10} {}", "", a.outcomes.iter().map(|o| format!("{o:>9}")).collect::<String>());
        for (row, outcome) in a.confusion.iter().zip(&a.outcomes) {
            println!("{outcome:>10} {}", row.iter().map(|c| format!("{c:>9}")).collect::<String>());
        }
    }
}
