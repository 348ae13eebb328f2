//! `assay labels list|set|clear|export|import`: people's labels on a run's answers, the ones
//! the app's labelling screen writes and `assay agree RUN` reads when given no labels file.

use crate::terminal;
use crate::DbArg;
use anyhow::Context;
use assay::record::AnswerLabel;
use assay::run::{export_labels, import_labels, remove_label, run_labels, set_label, write_labels_file};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum LabelsCommand {
    /// The run's labels, one line per labelled question.
    List {
        run: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Label one answer: correct, wrong or skip (seen, left undecided).
    Set {
        run: String,
        question: String,
        #[arg(value_parser = parse_label)]
        label: AnswerLabel,
        #[arg(long)]
        note: Option<String>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Forget one answer's label.
    Clear {
        run: String,
        question: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Print the labels as the JSONL `assay agree --labels` reads (correct = the `correct`
    /// judge's Yes, wrong = No; skipped answers have no line), or write them to a file.
    Export {
        run: String,
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Read labels from `assay agree` JSONL (any judge with a pass outcome: its pass label or
    /// better is correct); every line is checked before any label is stored.
    Import {
        run: String,
        file: PathBuf,
        #[arg(long, env = "ASSAY_JUDGES_DIR")]
        judges_dir: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
}

fn parse_label(text: &str) -> Result<AnswerLabel, String> {
    AnswerLabel::parse(text).ok_or_else(|| format!("{text:?}: give correct, wrong or skip"))
}

pub fn run(command: LabelsCommand) -> anyhow::Result<i32> {
    match command {
        LabelsCommand::List { run, json, db } => {
            let labels = run_labels(&db.path()?, &run)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&labels)?);
                return Ok(0);
            }
            let count = |l: AnswerLabel| labels.labels.iter().filter(|x| x.label == l).count();
            println!(
                "run {}: {} of {} answers labelled ({} correct, {} wrong, {} skipped)",
                labels.run,
                labels.labels.len(),
                labels.answered,
                count(AnswerLabel::Correct),
                count(AnswerLabel::Wrong),
                count(AnswerLabel::Skip)
            );
            for label in &labels.labels {
                let note = label.note.as_deref().map(|n| format!("  {}", terminal::text(n))).unwrap_or_default();
                println!("{:<12} {:<8} {}{note}", terminal::text(&label.question_id), label.label.as_str(), label.labelled_at);
            }
        }
        LabelsCommand::Set { run, question, label, note, db } => {
            let stored = set_label(&db.path()?, &run, &question, label, note.as_deref())?;
            println!("{}: {}", terminal::text(&stored.question_id), stored.label.as_str());
        }
        LabelsCommand::Clear { run, question, db } => {
            remove_label(&db.path()?, &run, &question)?;
            println!("{}: no label", terminal::text(&question));
        }
        LabelsCommand::Export { run, output, db } => match output {
            Some(file) => {
                let lines = write_labels_file(&db.path()?, &run, &file)?;
                eprintln!("wrote {lines} labels to {}", file.display());
            }
            None => print!("{}", export_labels(&db.path()?, &run)?),
        },
        LabelsCommand::Import { run, file, judges_dir, db } => {
            let db = db.path()?;
            let imported = import_labels(&db, &run, &file, judges_dir.as_deref())
                .with_context(|| format!("importing labels into {}", db.display()))?;
            println!(
                "stored {} labels in run {} ({} replaced an earlier label)",
                imported.stored, imported.run, imported.replaced
            );
        }
    }
    Ok(0)
}
