//! Thin commands over the core: each opens the store (same default as the CLI), calls one core
//! function and returns its serde shape. Errors reach the UI as their `Display` text.

use assay::compare::{experiment, question_grid, Comparison, ExperimentOptions, GroupDiff, LeaderboardRow, QuestionGrid, SideBySide};
use assay::dataset::{import_csv, import_eshop, known_datasets, load_dataset, CsvColumns, KnownDataset, Question};
use assay::generate::{ReviewDecision, ReviewOutcome};
use assay::record::RunRecord;
use assay::report::charts::{distribution_charts, mean_charts, run_means_chart};
use assay::report::{
    judged_statements, metric_guide, score_meaning, to_json, write_report, JudgedStatements, MetricGuide, ReportFormat,
    ReportOptions,
};
use assay::run::{default_database, judge_agreement, judge_catalog, AgreementRequest, JudgeAgreement, StoredRuns};
use assay::stats::RunReport;
use serde::Serialize;
use crate::write_grants::WriteGrants;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauri::State;

/// `$ASSAY_DB`, else `<data dir>/assay/assay.sqlite`: the CLI's default, so CLI runs show up here.
pub fn default_db() -> Result<PathBuf, String> {
    default_database().ok_or_else(|| "no home directory: set ASSAY_DB to a database file".to_string())
}

/// The store, created on first use so a new user sees an empty list rather than an error.
pub fn open_store() -> Result<StoredRuns, String> {
    let path = default_db()?;
    StoredRuns::open_or_create(&path).map_err(|e| e.to_string())
}

fn load(store: &StoredRuns, reference: &str) -> Result<RunReport, String> {
    store.report(reference).map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn db_path() -> Result<String, String> {
    Ok(default_db()?.display().to_string())
}

#[tauri::command]
pub async fn list_runs() -> Result<serde_json::Value, String> {
    // The runs that read, and those whose row is damaged named with their table, row and field
    // (the core's RunListing), so one damaged run neither hides the others nor goes unseen.
    let listing = open_store()?.listing().map_err(|e| e.to_string())?;
    serde_json::to_value(listing).map_err(|e| e.to_string())
}

/// Everything the Run screen shows: the JSON export of the run and the report's charts.
#[derive(Serialize)]
pub struct RunView {
    /// The run in the JSON export schema (docs: DESIGN.md).
    run: serde_json::Value,
    /// Trusted SVG from the core (labels escaped there): every metric's mean with its interval,
    /// and per metric the distribution of item scores (as in the HTML report).
    means_chart: String,
    histograms: Vec<String>,
    /// Mean tokens per answered item, from the core's summary.
    avg_prompt_tokens: Option<f64>,
    avg_completion_tokens: Option<f64>,
    /// By question id: each statement judge's checked statements, marked unsupported by the
    /// core's rule (items no statement judge checked are absent).
    statements: BTreeMap<String, Vec<JudgedStatements>>,
    /// The primary metric, then the others by the report's groups, with readable names and
    /// descriptions: the page's layout comes from the core.
    guide: MetricGuide,
    /// By judge of the run: its outcomes (worst first) and what its score is, in words.
    judges: BTreeMap<String, JudgeReading>,
    /// Whether a process is executing the run now (it holds the run's lease): Resume is
    /// offered only when none does.
    held: bool,
}

/// How to read one judge's verdicts.
#[derive(Serialize)]
pub struct JudgeReading {
    outcomes: Vec<String>,
    /// "score = P(Abstained)", or the expected grade's scale.
    score_meaning: String,
}

#[tauri::command]
pub async fn run_view(run: String) -> Result<RunView, String> {
    let store = open_store()?;
    let report = load(&store, &run)?;
    // A judge no longer in the catalog (a folder since changed) is shown without descriptions.
    let catalog = judge_catalog(None).unwrap_or_default();
    let descriptions = catalog.iter().map(|(name, spec)| (name.clone(), spec.description.clone())).collect();
    let judges = report
        .run
        .config
        .judges
        .iter()
        .filter_map(|name| catalog.get(name))
        .map(|spec| {
            let reading = JudgeReading { outcomes: spec.outcomes.clone(), score_meaning: score_meaning(&spec.outcomes) };
            (spec.name.clone(), reading)
        })
        .collect();
    let held = store.is_held(&report.run.id).map_err(|e| e.to_string())?;
    let reports = std::slice::from_ref(&report);
    let export = serde_json::to_value(to_json(reports)).map_err(|e| e.to_string())?;
    Ok(RunView {
        run: export["runs"][0].clone(),
        means_chart: run_means_chart(&report),
        histograms: distribution_charts(reports),
        avg_prompt_tokens: report.summary.avg_prompt_tokens,
        avg_completion_tokens: report.summary.avg_completion_tokens,
        statements: report
            .items
            .iter()
            .map(|item| (item.question.id.clone(), judged_statements(item)))
            .filter(|(_, judged)| !judged.is_empty())
            .collect(),
        guide: metric_guide(&report, &descriptions),
        judges,
        held,
    })
}

/// Whether a process is executing `run` now (the library's lease), for the pages that offer
/// Resume.
#[tauri::command]
pub async fn run_held(run: String) -> Result<bool, String> {
    open_store()?.is_held(&run).map_err(|e| e.to_string())
}

#[derive(Serialize)]
pub struct CompareView {
    runs: Vec<RunRecord>,
    /// Every other run against the first (the baseline).
    comparisons: Vec<Comparison>,
    /// Per metric: each run's mean with its interval (the HTML report's chart).
    charts: Vec<String>,
    /// Per comparison: the most-disagreeing questions with both answers.
    side_by_side: Vec<Vec<SideBySide>>,
    /// The runs ranked on the primary metric (ties where intervals overlap).
    leaderboard: Option<Leaderboard>,
    /// Per comparison: the primary metric's difference per question tag (exploratory; empty
    /// when the questions have no tags).
    breakdowns: Vec<Vec<GroupDiff>>,
    /// One row per question with every metric of every run and each run's failures on the
    /// primary metric.
    grid: QuestionGrid,
}

#[derive(Serialize)]
pub struct Leaderboard {
    metric: String,
    rows: Vec<LeaderboardRow>,
    /// Where the ranks and a paired test disagree, the core's sentence on it.
    notes: Vec<String>,
}

/// The runs compared as the core assembles it for every face (`compare::experiment`).
#[tauri::command]
pub async fn compare_runs(runs: Vec<String>, seed: Option<u64>) -> Result<CompareView, String> {
    if runs.len() < 2 {
        return Err("pick at least two runs to compare".into());
    }
    let store = open_store()?;
    let reports = runs.iter().map(|r| load(&store, r)).collect::<Result<Vec<_>, _>>()?;
    let options = ExperimentOptions { seed: seed.unwrap_or(0), ..ExperimentOptions::default() };
    let compared = experiment(&reports, &options).map_err(|e| e.to_string())?;
    Ok(CompareView {
        charts: mean_charts(&reports),
        grid: question_grid(&reports, &compared.primary),
        runs: reports.into_iter().map(|r| r.run).collect(),
        comparisons: compared.comparisons,
        side_by_side: compared.side_by_side,
        leaderboard: Some(Leaderboard {
            metric: compared.primary,
            rows: compared.leaderboard,
            notes: compared.leaderboard_notes,
        }),
        breakdowns: compared.breakdowns,
    })
}

/// The sample dataset a new user's first run starts from (New run's default).
const FIRST_SAMPLE: &str = "trailgear";

/// The datasets the app knows without being given a path: the sample datasets (`$ASSAY_SAMPLES`,
/// else the source tree's `datasets/` when it is there), the user's datasets folder
/// (`<data dir>/assay/datasets`, beside the database) and every dataset a stored run used.
#[tauri::command]
pub async fn list_datasets() -> Result<Vec<KnownDataset>, String> {
    let mut places: Vec<(PathBuf, String)> = Vec::new();
    let samples = match std::env::var_os("ASSAY_SAMPLES") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(|tree| tree.join("datasets")),
    };
    if let Some(samples) = samples {
        // The sample the README and a first run start from leads; the other samples follow.
        places.push((samples.join(FIRST_SAMPLE), "sample".into()));
        places.push((samples, "sample".into()));
    }
    if let Some(folder) = default_db()?.parent() {
        places.push((folder.join("datasets"), "your datasets folder".into()));
    }
    for run in open_store()?.runs().map_err(|e| e.to_string())? {
        places.push((PathBuf::from(run.dataset_root), "used by a run".into()));
    }
    Ok(known_datasets(&places))
}

/// A dataset as the Datasets screen browses it.
#[derive(Serialize)]
pub struct DatasetView {
    root: String,
    name: String,
    description: String,
    fingerprint: String,
    questions: Vec<Question>,
    documents: Vec<String>,
}

#[tauri::command]
pub async fn open_dataset(dir: String) -> Result<DatasetView, String> {
    let dataset = load_dataset(Path::new(&dir)).map_err(|e| e.to_string())?;
    Ok(DatasetView {
        root: dataset.root.display().to_string(),
        name: dataset.manifest.name.clone(),
        description: dataset.manifest.description.clone(),
        fingerprint: dataset.fingerprint.clone(),
        documents: dataset.documents.iter().map(|d| d.id.clone()).collect(),
        questions: dataset.questions,
    })
}

/// A manual of a dataset as plain text. Only documents the dataset lists can be read.
#[tauri::command]
pub async fn read_manual(dir: String, doc: String) -> Result<String, String> {
    let dataset = load_dataset(Path::new(&dir)).map_err(|e| e.to_string())?;
    let file = dataset
        .documents
        .iter()
        .find(|d| d.id == doc)
        .ok_or_else(|| format!("{doc}: not a document of this dataset"))?;
    let is_text = matches!(file.path.extension().and_then(|e| e.to_str()), Some("md" | "txt"));
    if !is_text {
        return Err(format!("{}: only .md and .txt manuals can be shown as text here", file.path.display()));
    }
    let bytes = std::fs::read(&file.path).map_err(|e| format!("{}: {e}", file.path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Generated pairs waiting for review in the dataset folder (`questions.generated.jsonl`),
/// checked like the questions file; none when nothing was generated. A separate command from
/// `open_dataset` so a bad pending file shows in the review section without hiding the dataset.
#[tauri::command]
pub async fn pending_pairs(dir: String) -> Result<Vec<Question>, String> {
    let dataset = load_dataset(Path::new(&dir)).map_err(|e| e.to_string())?;
    assay::generate::pending_pairs(&dataset).map_err(|e| e.to_string())
}

/// A reviewer's decisions: accepted pairs join the questions file, rejected ones are dropped,
/// the rest stay pending. The core checks every decision before either file changes.
#[tauri::command]
pub async fn apply_review(grants: State<'_, WriteGrants>, dir: String, decisions: Vec<ReviewDecision>) -> Result<ReviewOutcome, String> {
    grants.check(Path::new(&dir))?;
    assay::generate::apply_review(Path::new(&dir), &decisions).map_err(|e| e.to_string())
}

#[derive(Serialize)]
pub struct ImportResult {
    output: String,
    questions: usize,
    documents: usize,
}

#[tauri::command]
pub async fn import_dataset(
    grants: State<'_, WriteGrants>,
    kind: String,
    file: String,
    corpus: String,
    output: String,
) -> Result<ImportResult, String> {
    let (file, corpus, output) = (PathBuf::from(file), PathBuf::from(corpus), PathBuf::from(output));
    grants.check(&output)?;
    let summary = match kind.as_str() {
        "eshop" => import_eshop(&file, &corpus, &output),
        "csv" => import_csv(&file, &corpus, &output, &CsvColumns::default()),
        other => return Err(format!("unknown import kind {other:?}; use eshop or csv")),
    }
    .map_err(|e| e.to_string())?;
    Ok(ImportResult {
        output: summary.output.display().to_string(),
        questions: summary.questions,
        documents: summary.documents,
    })
}

/// Write a report to `path` (chosen in a save dialog) or, without one, to the `reports` folder
/// next to the database (the app's own data).
#[tauri::command]
pub async fn export_report(
    grants: State<'_, WriteGrants>,
    runs: Vec<String>,
    format: String,
    path: Option<String>,
) -> Result<String, String> {
    if let Some(path) = &path {
        grants.check(Path::new(path))?;
    }
    let format: ReportFormat = format.parse()?;
    let store = open_store()?;
    let reports = runs.iter().map(|r| load(&store, r)).collect::<Result<Vec<_>, _>>()?;
    let first = reports.first().ok_or("pick at least one run to export")?;
    let path = match path {
        Some(path) => PathBuf::from(path),
        None => {
            let dir = default_db()?.parent().map(|p| p.join("reports")).ok_or("the database has no folder")?;
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let extension = match format {
                ReportFormat::Html => "html",
                ReportFormat::Markdown => "md",
                ReportFormat::Csv => "csv",
                ReportFormat::Json => "json",
                ReportFormat::Junit => "xml",
            };
            let stem = if reports.len() == 1 { first.run.id.clone() } else { format!("compare-{}", first.run.id) };
            dir.join(format!("{stem}.{extension}"))
        }
    };
    let mut options = ReportOptions::for_runs(&reports, &[]).map_err(|e| e.to_string())?;
    options.pairwise = assay::run::stored_pairwise_for_report(store.path(), &reports).map_err(|e| e.to_string())?;
    write_report(&reports, format, &options, &path).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// A judge as the New run screen offers it.
#[derive(Serialize)]
pub struct JudgeChoice {
    name: String,
    description: String,
    outcomes: Vec<String>,
    /// `choice` or `claims`.
    mode: String,
    /// `built-in` or the spec file it came from.
    source: String,
}

#[derive(Serialize)]
pub struct JudgesView {
    judges: Vec<JudgeChoice>,
    /// The model the core uses when a run names judges but no judge model.
    default_model: &'static str,
}

/// The judges the core knows: built-ins plus the user's judges folder (as `assay judges list`).
#[tauri::command]
pub async fn list_judges() -> Result<JudgesView, String> {
    let specs = judge_catalog(None).map_err(|e| e.to_string())?;
    let judges = specs
        .into_values()
        .map(|spec| JudgeChoice {
            name: spec.name,
            description: spec.description,
            outcomes: spec.outcomes,
            // The spec's own serialised name (`choice`, `claims`, `jury`, `statements`).
            mode: serde_json::to_value(spec.mode).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
            source: spec.source,
        })
        .collect();
    Ok(JudgesView { judges, default_model: assay::run::DEFAULT_JUDGE_MODEL })
}

/// The judges of `runs` against human labels (one JSONL labels file per run, in order), and
/// with `calibrate` thresholds fitted on them, the agreement before and after, and calibrated
/// copies of the specs written into the judges folder (the app's own data), where later runs
/// load them: the same library entry as `assay agree --calibrate`.
#[tauri::command]
pub async fn calibrate_judges(
    runs: Vec<String>,
    labels: Vec<String>,
    labels_as: Option<String>,
    calibrate: bool,
) -> Result<JudgeAgreement, String> {
    let request = AgreementRequest {
        runs,
        labels: labels.into_iter().map(PathBuf::from).collect(),
        labels_as: labels_as.filter(|l| !l.trim().is_empty()),
        calibrate,
        judges_dir: None,
    };
    judge_agreement(&default_db()?, &request).map_err(|e| e.to_string())
}
