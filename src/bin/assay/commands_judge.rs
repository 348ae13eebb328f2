//! `assay judges list|show` and `assay agree`: judge specs and their agreement with humans.

use crate::terminal;
use anyhow::Context;
use assay::run::{judge_agreement, judge_catalog, judge_spec, AgreementRequest, JudgeAgreement};
use clap::Subcommand;
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

pub fn run(command: JudgesCommand) -> anyhow::Result<i32> {
    match command {
        JudgesCommand::List { json, judges_dir: dir } => {
            let specs = judge_catalog(dir.as_deref())?;
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
            let spec = judge_spec(&name, dir.as_deref())?;
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

/// `assay agree RUN… --labels FILE…`: each judge of the runs against human labels, and with
/// `--calibrate` thresholds fitted on them (the library's `judge_agreement` does the work).
pub fn agree(request: &AgreementRequest, json: bool, db: &Path) -> anyhow::Result<i32> {
    let result = judge_agreement(db, request).with_context(|| format!("judging agreement in {}", db.display()))?;
    if !request.calibrate {
        if json {
            println!("{}", serde_json::to_string_pretty(&result.agreements)?);
        } else {
            print_agreements(&result);
        }
        return Ok(0);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&result.calibrations)?);
        return Ok(0);
    }
    println!("{:<22} {:>6} {:>18} {:>10} {:>10} {:>8} {:>8}", "judge", "labels", "thresholds", "acc before", "acc after", "κ before", "κ after");
    for c in &result.calibrations {
        let cuts: Vec<String> = c.thresholds.iter().map(|t| format!("{t:.3}")).collect();
        println!(
            "{:<22} {:>6} {:>18} {:>10} {:>10} {:>8} {:>8}",
            terminal::text(&c.judge),
            c.labels,
            cuts.join(","),
            fmt(Some(c.before.accuracy)),
            fmt(c.after.as_ref().map(|a| a.accuracy)),
            fmt(c.before.kappa),
            fmt(c.after.as_ref().and_then(|a| a.kappa))
        );
    }
    for c in result.calibrations.iter().filter(|c| c.written.is_some()) {
        println!(
            "calibrated copy of {} (on {} labels): {}",
            terminal::text(&c.judge),
            c.labels,
            terminal::text(c.written.as_deref().unwrap_or(""))
        );
    }
    Ok(0)
}

fn fmt(value: Option<f64>) -> String {
    value.map_or("n/a".into(), |v| format!("{v:.3}"))
}

fn print_agreements(result: &JudgeAgreement) {
    let agreements = &result.agreements;
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
