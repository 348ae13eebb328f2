//! `assay judges list|show` and `assay agree`: judge specs and their agreement with humans.

use anyhow::Context;
use assay::judge::agreement::{compare_with_labels, read_labels, Agreement, JudgedItem};
use assay::judge::spec::{default_judges_dir, load_all};
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
                    println!(
                        "{:<14} {:<7} [{}]  {}  ({})",
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
                println!("\n{}", text(&spec.template));
            }
        }
    }
    Ok(0)
}

/// `assay agree RUN… --labels FILE…`: each judge of the runs against human labels. Several
/// runs (each with its own labels file, in the same order) are pooled: their items are told
/// apart by run, so two answer sets over the same questions give one table over all items.
pub fn agree(runs: &[String], labels: &[PathBuf], json: bool, judges_dir_arg: Option<PathBuf>, db: &Path) -> anyhow::Result<i32> {
    if runs.len() != labels.len() {
        anyhow::bail!("give one --labels file per run ({} runs, {} labels files)", runs.len(), labels.len());
    }
    let store = assay::store::Store::open_existing(db).with_context(|| format!("opening {}", db.display()))?;
    let specs = load_all(judges_dir(judges_dir_arg).as_deref())?;
    let outcomes_of: BTreeMap<String, Vec<String>> = specs.iter().map(|(k, s)| (k.clone(), s.outcomes.clone())).collect();
    let mut verdicts: BTreeMap<String, BTreeMap<String, JudgedItem>> = BTreeMap::new();
    let mut human = Vec::new();
    for (index, (run, labels_file)) in runs.iter().zip(labels).enumerate() {
        let record = store.find_run(run)?;
        // One key space per run: `0:q001` and `1:q001` are different items.
        let key = |id: &str| if runs.len() == 1 { id.to_string() } else { format!("{index}:{id}") };
        for item in store.items(&record.id)? {
            let labels = item
                .verdicts
                .iter()
                .map(|(judge, v)| (judge.clone(), JudgedItem { label: v.label.clone(), score: v.score }))
                .collect();
            verdicts.insert(key(&item.question.id), labels);
        }
        for mut label in read_labels(labels_file)? {
            label.id = key(&label.id);
            human.push(label);
        }
    }
    let agreements = compare_with_labels(&outcomes_of, &verdicts, &human).map_err(anyhow::Error::msg)?;
    if agreements.is_empty() {
        anyhow::bail!("no judge of run(s) {} has human labels in the labels file(s)", runs.join(", "));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&agreements)?);
    } else {
        print_agreements(&agreements);
    }
    Ok(0)
}

fn fmt(value: Option<f64>) -> String {
    value.map_or("n/a".into(), |v| format!("{v:.3}"))
}

pub fn print_agreements(agreements: &[Agreement]) {
    println!(
        "{:<14} {:>4} {:>9} {:>9} {:>7} {:>9} {:>15}",
        "judge", "n", "unscored", "accuracy", "kappa", "spearman", "score spearman"
    );
    for a in agreements {
        println!(
            "{:<14} {:>4} {:>9} {:>9} {:>7} {:>9} {:>15}",
            a.judge,
            a.n,
            a.unscored,
            fmt(Some(a.accuracy)),
            fmt(a.kappa),
            fmt(a.spearman),
            fmt(a.score_spearman)
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
