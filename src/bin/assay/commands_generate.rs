//! `assay generate`: write question/answer pairs from a dataset's manuals with a local model
//! (kept only when their quote is verbatim in the manual and supports the answer), and
//! `--review` them one by one before they join the dataset.

use assay::dataset::{load_dataset, Question};
use crate::terminal;
use assay::generate::{
    apply_review, generate_pairs, pending_pairs, write_pending, GenerateProgress, GenerateRequest,
    GenerationReport, ReviewDecision,
};
use assay::run::pair_generator;
use std::io::{BufRead, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// Dataset folder (holds dataset.toml).
    dataset: PathBuf,
    /// Pairs wanted per document.
    #[arg(long, default_value_t = 5)]
    per_doc: usize,
    /// Generator model id (default: qwen2.5-coder-0.5b-instruct).
    #[arg(long)]
    model: Option<String>,
    /// Model of the support check (default: qwen2.5-coder-1.5b-instruct, the judge default).
    #[arg(long)]
    judge_model: Option<String>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Only these documents (ids, comma-separated).
    #[arg(long, value_delimiter = ',')]
    docs: Vec<String>,
    /// cpu, or cuda / metal in builds with those features.
    #[arg(long, default_value = "cpu")]
    device: assay::llm::device::DeviceChoice,
    /// Folder of user judge specs (a `faithfulness` there replaces the built-in check).
    #[arg(long, env = "ASSAY_JUDGES_DIR")]
    judges_dir: Option<PathBuf>,
    /// Review the pending pairs instead of generating: accept, edit or reject each; accepted
    /// pairs are added to the dataset's questions file.
    #[arg(long)]
    review: bool,
    /// Print the generation report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: GenerateArgs) -> anyhow::Result<i32> {
    if args.review {
        return review(&args);
    }
    let dataset = load_dataset(&args.dataset)?;
    if args.per_doc == 0 {
        anyhow::bail!("--per-doc must be at least 1");
    }
    // The generator and the support check (a judgement: the judge model by default).
    let (model, mut checker) =
        pair_generator(args.model.as_deref(), args.judge_model.as_deref(), args.judges_dir.as_deref(), args.device)?;

    let cancel = crate::interrupt::cancel_on_ctrl_c("The pairs generated so far are not written (one Ctrl-C alone writes them).");
    let request = GenerateRequest { per_doc: args.per_doc, seed: args.seed, docs: args.docs.clone() };
    let mut on_progress = |event: &GenerateProgress| match event {
        GenerateProgress::Document { doc, excerpts } => eprintln!("{doc}: {excerpts} excerpts"),
        GenerateProgress::Candidate { doc, kept, wanted, outcome } => {
            eprintln!("  {doc} [{kept}/{wanted}] {}", terminal::line(outcome, 160))
        }
    };
    let (pairs, report) = generate_pairs(&dataset, &model, &mut checker, &request, &mut on_progress, &cancel)?;
    let written = write_pending(&dataset, &pairs)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    eprintln!(
        "{} pairs added to {} — review them with `assay generate {} --review`",
        pairs.len(),
        written.display(),
        args.dataset.display()
    );
    Ok(0)
}

fn print_report(report: &GenerationReport) {
    println!("{}  {:>8}  {:>10}  {:>4}  rejected", terminal::pad("document", 18), "excerpts", "candidates", "kept");
    for d in &report.documents {
        let rejected = match &d.problem {
            Some(problem) => problem.clone(),
            None => d.rejected.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "),
        };
        println!(
            "{}  {:>8}  {:>10}  {:>4}  {}",
            terminal::pad(&d.doc, 18),
            d.excerpts,
            d.candidates,
            d.kept,
            rejected
        );
    }
    println!(
        "kept {} of {} candidates ({}) in {:.0} s, {} pairs per minute, model {}",
        report.kept,
        report.candidates,
        report.yield_rate().map_or("—".into(), |y| format!("{:.0}%", y * 100.0)),
        report.seconds,
        report.pairs_per_minute().map_or("—".into(), |r| format!("{r:.2}")),
        report.model
    );
}

/// Interactive review on stdin (works with piped answers too): a, e, r, s or q per pair.
fn review(args: &GenerateArgs) -> anyhow::Result<i32> {
    let dataset = load_dataset(&args.dataset)?;
    let pending = pending_pairs(&dataset)?;
    if pending.is_empty() {
        eprintln!("no generated pairs wait for review in {}", args.dataset.display());
        return Ok(0);
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut ask = |prompt: &str| -> anyhow::Result<Option<String>> {
        eprint!("{prompt}");
        std::io::stderr().flush()?;
        let mut line = String::new();
        Ok((input.read_line(&mut line)? > 0).then(|| line.trim_end_matches(['\n', '\r']).to_string()))
    };
    let mut decisions = Vec::new();
    'pairs: for (n, pair) in pending.iter().enumerate() {
        show_pair(pair, n + 1, pending.len());
        loop {
            let Some(choice) = ask("[a]ccept  [e]dit  [r]eject  [s]kip  [q]uit: ")? else { break 'pairs };
            match choice.trim() {
                "a" => decisions.push(ReviewDecision::Accept { question: pair.clone() }),
                "r" => decisions.push(ReviewDecision::Reject { id: pair.id.clone() }),
                "s" => {}
                "q" => break 'pairs,
                "e" => {
                    let mut edited = pair.clone();
                    if let Some(text) = ask("question (empty keeps it): ")?.filter(|t| !t.trim().is_empty()) {
                        edited.question = text;
                    }
                    if let Some(text) = ask("answer (empty keeps it): ")?.filter(|t| !t.trim().is_empty()) {
                        edited.answer = Some(text);
                    }
                    decisions.push(ReviewDecision::Accept { question: edited });
                }
                _ => continue,
            }
            break;
        }
    }
    let outcome = apply_review(&dataset.root, &decisions)?;
    println!(
        "accepted {}, rejected {}, {} still pending",
        outcome.accepted, outcome.rejected, outcome.pending
    );
    Ok(0)
}

fn show_pair(pair: &Question, n: usize, total: usize) {
    let field = |text: &str| terminal::line(text, 400);
    eprintln!();
    eprintln!("[{n}/{total}] {}  ({})", pair.id, pair.tags.join(", "));
    if let Some(doc) = &pair.doc {
        eprintln!("  scoped to: {doc}");
    }
    eprintln!("  question: {}", field(&pair.question));
    eprintln!("  answer:   {}", field(pair.answer.as_deref().unwrap_or("")));
    eprintln!("  quote:    {}", field(pair.context.as_deref().unwrap_or("")));
}
