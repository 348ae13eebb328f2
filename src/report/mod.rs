//! Reports: runs read back from the store and written as JSON, CSV, Markdown, HTML or JUnit.
//!
//! Every figure comes from `stats::summarize` over stored items; reports compute nothing of
//! their own. Model output is untrusted: each format escapes it for where it will be shown.

pub mod charts;
mod comparison_view;
mod csv_report;
mod findings;
mod html_report;
mod json_report;
mod junit_report;
mod markdown_report;
mod metric_guide;
mod pairwise_view;
mod svg_chart;

pub use findings::{flag_meanings, flagged_lines, is_unsupported, judged_statements, JudgedStatements, ShownStatement, SUPPORTED_AT_LEAST};
pub use json_report::{to_json, JsonExport};
pub use metric_guide::{metric_guide, score_meaning, MetricEntry, MetricGuide, MetricSection};
pub use svg_chart::IntervalRow;

use crate::stats::RunReport;
use crate::stats::Gate;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Json,
    Csv,
    Markdown,
    Html,
    Junit,
}

impl std::str::FromStr for ReportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(ReportFormat::Json),
            "csv" => Ok(ReportFormat::Csv),
            "md" | "markdown" => Ok(ReportFormat::Markdown),
            "html" => Ok(ReportFormat::Html),
            "junit" => Ok(ReportFormat::Junit),
            other => Err(format!(
                "unknown report format {other:?}; use html, md, csv, json or junit"
            )),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: cannot write: {source}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot render the report: {0}")]
    Render(String),
    #[error("{0}")]
    Gate(String),
}

/// Settings some formats use.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// JUnit: a question fails when a gated metric is under its threshold.
    pub gates: Vec<Gate>,
    /// Seed of the comparison statistics (HTML and Markdown).
    pub seed: u64,
    /// Pairwise comparisons of these runs (stored judgments read back by
    /// `run::stored_pairwise`): shown in the HTML, Markdown and JSON exports when present.
    pub pairwise: Vec<crate::compare::PairwiseOutcome>,
}

impl ReportOptions {
    /// The options an export of `reports` uses in both faces: the first run's seed, and the
    /// `METRIC=VALUE` gates (JUnit) checked against the metrics the runs have.
    pub fn for_runs(reports: &[RunReport], fail_under: &[String]) -> Result<Self, ReportError> {
        let known: Vec<&str> = reports.iter().flat_map(|r| r.summary.metrics.keys().map(String::as_str)).collect();
        let gates = fail_under
            .iter()
            .map(|g| crate::stats::parse_gate(g, &known))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ReportError::Gate)?;
        Ok(ReportOptions { gates, seed: reports.first().map_or(0, |r| r.run.config.seed), pairwise: Vec::new() })
    }
}

/// Render `reports` in `format`.
pub fn render(
    reports: &[RunReport],
    format: ReportFormat,
    options: &ReportOptions,
) -> Result<String, ReportError> {
    let now = crate::record::now_rfc3339();
    match format {
        ReportFormat::Json => {
            let mut export = to_json(reports);
            export.pairwise = options.pairwise.clone();
            serde_json::to_string_pretty(&export).map_err(|e| ReportError::Render(e.to_string()))
        }
        ReportFormat::Csv => csv_report::render(reports),
        ReportFormat::Markdown => markdown_report::render(reports, options.seed, &options.pairwise),
        ReportFormat::Html => html_report::render(reports, options.seed, &now, &options.pairwise),
        ReportFormat::Junit => Ok(junit_report::render(reports, &options.gates, &now)),
    }
}

/// Render and write atomically (a temporary file renamed into place), so a failed export never
/// leaves a half-written report behind.
pub fn write_report(
    reports: &[RunReport],
    format: ReportFormat,
    options: &ReportOptions,
    path: &Path,
) -> Result<(), ReportError> {
    let text = render(reports, format, options)?;
    let write_err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    // A fresh file with an unpredictable name (created exclusively, never through a link):
    // a predictable name in a shared folder could be planted as a symlink to another file.
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = format!(".{file_name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The mode a plain write gives (0666 less the umask), not the temporary file's 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut staging = builder.tempfile_in(folder).map_err(write_err)?;
    std::io::Write::write_all(&mut staging, text.as_bytes()).map_err(write_err)?;
    staging.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

/// Metric names in a stable, meaningful order: the canonical list first, then the rest.
pub(crate) fn ordered_metric_names<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    crate::metrics::in_report_order(names)
}
