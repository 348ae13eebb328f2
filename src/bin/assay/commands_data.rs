//! `assay runs | show | export | import`: reading runs back and bringing datasets in.

use assay::dataset::{import_csv, import_eshop, CsvColumns};
use assay::report::{to_json, write_report, ReportFormat, ReportOptions};
use assay::run::StoredRuns;
use crate::print::{print_item_findings, print_run_summary};
use crate::{terminal, DbArg};
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// eShopSupport's evalquestions.json (QuestionId, ProductId, Question, Answer).
    Eshop {
        file: PathBuf,
        /// Folder of manuals; a product's manual is named <ProductId> or product-<ProductId>.
        #[arg(long)]
        corpus: PathBuf,
        /// New dataset folder to create.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// A CSV with question, reference answer and golden context columns.
    Csv {
        file: PathBuf,
        #[arg(long)]
        corpus: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, default_value = "Question")]
        question_column: String,
        #[arg(long, default_value = "Golden Response")]
        answer_column: String,
        #[arg(long, default_value = "Golden Context")]
        context_column: String,
        /// Column with question ids (default: q0001, q0002, … in row order).
        #[arg(long)]
        id_column: Option<String>,
        /// Column naming the document each question is about.
        #[arg(long)]
        doc_column: Option<String>,
    },
}

/// The scores `assay runs` shows first, when a run has them.
const HEADLINE_METRICS: &[&str] = &[
    "correctness",
    "token_f1",
    "rouge_l",
    "refusal_correct",
    "hit_at_k",
    "mrr",
];

pub fn runs(json: bool, db: &DbArg) -> anyhow::Result<()> {
    let store = StoredRuns::open_existing(&db.path()?)?;
    let listing = store.listing()?;
    // A damaged row is named on stderr, so the JSON on stdout keeps its shape (the runs that
    // read) and the table still lists every other run.
    for damaged in &listing.damaged {
        eprintln!("damaged run {}: {}", terminal::line(&damaged.id, 40), terminal::line(&damaged.damage.to_string(), 300));
    }
    let runs = listing.runs;
    if json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(());
    }
    if runs.is_empty() {
        println!("no readable runs in {}", store.path().display());
        return Ok(());
    }
    println!(
        "{}  {}  {}  {}  {}  {:>9}  {}  headline scores",
        terminal::pad("id", 20),
        terminal::pad("name", 24),
        terminal::pad("dataset", 12),
        terminal::pad("target / model", 28),
        terminal::pad("status", 9),
        "items",
        terminal::pad("created", 20),
    );
    let mut last_experiment = None;
    for run in runs {
        // Runs of one matrix are listed together under their experiment id, which `compare`
        // and `export` accept in place of the runs.
        if run.experiment.is_some() && run.experiment != last_experiment {
            println!("experiment {}:", run.experiment.as_deref().unwrap_or_default());
        }
        last_experiment = run.experiment.clone();
        // A run whose items cannot be read is listed with what is wrong instead of its scores.
        let id = run.id.clone();
        let report = match store.report_of(run) {
            Ok(report) => report,
            Err(e) => {
                println!("{}  unreadable: {}", terminal::pad(&id, 20), terminal::line(&e.to_string(), 300));
                continue;
            }
        };
        let run = &report.run;
        let target = match &run.config.model {
            Some(model) => format!("{} {model}", run.config.target),
            None => run.config.target.clone(),
        };
        let headline: Vec<String> = HEADLINE_METRICS
            .iter()
            .filter_map(|m| report.summary.metrics.get(*m).map(|s| format!("{m} {:.3}", s.mean)))
            .take(3)
            .collect();
        println!(
            "{}  {}  {}  {}  {}  {:>9}  {}  {}",
            terminal::pad(&run.id, 20),
            terminal::pad(&terminal::line(&run.name, 24), 24),
            terminal::pad(&terminal::line(&run.dataset, 12), 12),
            terminal::pad(&terminal::line(&target, 28), 28),
            terminal::pad(run.status.as_str(), 9),
            format!("{}/{}", report.items.len(), run.total_items),
            terminal::pad(run.created_at.get(..19).unwrap_or(&run.created_at), 20),
            headline.join("  ")
        );
    }
    Ok(())
}

pub fn show(reference: &str, json: bool, db: &DbArg) -> anyhow::Result<()> {
    let report = StoredRuns::open_existing(&db.path()?)?.report(reference)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&to_json(std::slice::from_ref(&report)))?);
        return Ok(());
    }
    print_run_summary(&report);
    println!();
    // The columns most people read first; `--json` and exports have all of them.
    let columns: Vec<&str> = ["token_f1", "rouge_l", "citation_recall", "refusal_correct", "hit_at_k", "mrr"]
        .into_iter()
        .filter(|c| report.summary.metrics.contains_key(*c))
        .collect();
    let mut header = format!(
        "{}  {}  {}",
        terminal::pad("id", 8),
        terminal::pad("question", 38),
        terminal::pad("answer", 38)
    );
    for c in &columns {
        header.push_str(&format!("  {:>15}", c));
    }
    println!("{header}");
    for item in &report.items {
        let answer = match (&item.answer, &item.error) {
            (Some(a), _) => a.text.clone(),
            (None, Some(e)) => format!("(error) {e}"),
            (None, None) => String::new(),
        };
        let mut row = format!(
            "{}  {}  {}",
            terminal::pad(&terminal::line(&item.question.id, 8), 8),
            terminal::pad(&terminal::line(&item.question.question, 38), 38),
            terminal::pad(&terminal::line(&answer, 38), 38)
        );
        for c in &columns {
            let value = item
                .metrics
                .get(*c)
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "—".into());
            row.push_str(&format!("  {:>15}", value));
        }
        println!("{row}");
        print_item_findings(item, 10);
    }
    Ok(())
}

pub fn export(
    references: &[String],
    format: ReportFormat,
    output: &Path,
    fail_under: &[String],
    db: &DbArg,
) -> anyhow::Result<()> {
    let stored = StoredRuns::open_existing(&db.path()?)?;
    let reports = stored.reports(references)?;
    let mut options = ReportOptions::for_runs(&reports, fail_under)?;
    // Pairwise judgments stored for the compared runs (`compare --pairwise`) are shown too.
    options.pairwise = assay::run::stored_pairwise_for_report(stored.path(), &reports)?;
    write_report(&reports, format, &options, output)?;
    eprintln!("wrote {}", output.display());
    Ok(())
}

pub fn import(command: ImportCommand) -> anyhow::Result<()> {
    let summary = match command {
        ImportCommand::Eshop {
            file,
            corpus,
            output,
        } => import_eshop(&file, &corpus, &output)?,
        ImportCommand::Csv {
            file,
            corpus,
            output,
            question_column,
            answer_column,
            context_column,
            id_column,
            doc_column,
        } => import_csv(
            &file,
            &corpus,
            &output,
            &CsvColumns {
                question: question_column,
                answer: answer_column,
                context: context_column,
                id: id_column,
                doc: doc_column,
            },
        )?,
    };
    println!(
        "imported {} questions and {} documents into {}",
        summary.questions,
        summary.documents,
        summary.output.display()
    );
    Ok(())
}

