//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, no network; a CSP
//! forbids anything else) rendered from `templates/report.html.j2`.
//!
//! minijinja's HTML auto-escaping is on for every value; only the charts are inserted raw, and
//! `svg_chart` escapes their labels itself. Answers, questions and manuals are untrusted.

use super::charts;
use super::findings::{flagged_lines, judged_statements, JudgedStatements};
use crate::record::flag_meaning;
use crate::stats::item_flags;
use super::svg_chart::color;
use super::{ordered_metric_names, ReportError, RunReport};
use super::comparison_view::experiment_views;
use super::pairwise_view::pairwise_view;
use crate::compare::PairwiseOutcome;
use serde::Serialize;
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("templates/report.html.j2");

#[derive(Serialize)]
struct HtmlRun {
    id: String,
    name: String,
    dataset: String,
    target: String,
    model: String,
    status: &'static str,
    created_at: String,
    done: usize,
    total: usize,
    errors: usize,
    latency: String,
    color: &'static str,
    /// "2 of 30 answers flagged: possible injection", one per flag.
    flagged: Vec<String>,
    /// Items carrying each flag (the runs table's short form).
    flag_counts: BTreeMap<String, usize>,
}

#[derive(Serialize)]
struct SummaryRow {
    metric: String,
    group: &'static str,
    description: &'static str,
    cells: Vec<String>,
}

#[derive(Serialize)]
struct QuestionView {
    id: String,
    question: String,
    reference: String,
    refuse: bool,
    doc: Option<String>,
    answers: Vec<AnswerView>,
}

#[derive(Serialize)]
struct FlagView {
    name: String,
    meaning: &'static str,
}

#[derive(Serialize, Default)]
struct AnswerView {
    missing: bool,
    text: String,
    citations: String,
    error: Option<String>,
    metrics: String,
    verdicts: Vec<VerdictView>,
    /// Flags on any of the item's verdicts (`possible injection`), each with what it means.
    flags: Vec<FlagView>,
    /// Statement judges' unsupported and missed statements (judges with none left out).
    statements: Vec<JudgedStatements>,
}

#[derive(Serialize)]
struct VerdictView {
    judge: String,
    label: String,
    /// The label's probability; None for a score-only verdict.
    confidence: Option<String>,
    distribution: String,
    explanation: Option<String>,
}

pub fn render(reports: &[RunReport], seed: u64, generated_at: &str, pairwise: &[PairwiseOutcome]) -> Result<String, ReportError> {
    let runs: Vec<HtmlRun> = reports.iter().enumerate().map(|(i, r)| html_run(i, r)).collect();
    let metric_names = ordered_metric_names(reports.iter().flat_map(|r| r.summary.metrics.keys()));

    let summary: Vec<SummaryRow> = metric_names
        .iter()
        .map(|name| SummaryRow {
            metric: name.clone(),
            group: crate::metrics::metric_group(name),
            description: crate::metrics::describe(name).unwrap_or(""),
            cells: reports
                .iter()
                .map(|r| match r.summary.metrics.get(name) {
                    Some(m) => {
                        let unscored = if m.unscored > 0 { format!(", {} unscored", m.unscored) } else { String::new() };
                        let passed = m.pass_rate.map(|p| format!(", passed {:.0}%", p * 100.0)).unwrap_or_default();
                        let length = m.length_spearman.map(|rho| format!(", length ρ {rho:.2}")).unwrap_or_default();
                        format!("{:.3} [{:.3}, {:.3}] n={}{unscored}{passed}{length}", m.mean, m.ci95[0], m.ci95[1], m.n)
                    }
                    None => "—".into(),
                })
                .collect(),
        })
        .collect();

    let mean_charts = charts::mean_charts(reports);
    let distribution_charts = charts::distribution_charts(reports);

    let (comparisons, leaderboard) = experiment_views(reports, seed, true);
    let pairwise: Vec<_> = pairwise.iter().map(pairwise_view).collect();
    let questions = question_views(reports);
    let title = reports
        .iter()
        .map(|r| r.run.name.as_str())
        .collect::<Vec<_>>()
        .join(" vs ");

    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| ReportError::Render(e.to_string()))?;
    let template = env
        .get_template("report.html")
        .map_err(|e| ReportError::Render(e.to_string()))?;
    template
        .render(minijinja::context! {
            title, generated_at, runs, summary, mean_charts, distribution_charts, comparisons, leaderboard, questions, pairwise
        })
        .map_err(|e| ReportError::Render(e.to_string()))
}

fn html_run(index: usize, report: &RunReport) -> HtmlRun {
    let run = &report.run;
    HtmlRun {
        id: run.id.clone(),
        name: run.name.clone(),
        dataset: run.dataset.clone(),
        target: run.config.target.clone(),
        model: run.config.model.clone().unwrap_or_else(|| "—".into()),
        status: run.status.as_str(),
        created_at: run.created_at.clone(),
        done: report.items.len(),
        total: run.total_items,
        errors: report.summary.errors,
        latency: report
            .summary
            .avg_latency_ms
            .map(|l| format!("{l:.0} ms"))
            .unwrap_or_else(|| "—".into()),
        color: color(index),
        flagged: flagged_lines(report),
        flag_counts: report.summary.flagged.clone(),
    }
}


/// One row per question (in the first run's order, then any others), one cell per run.
fn question_views(reports: &[RunReport]) -> Vec<QuestionView> {
    let mut order: Vec<&crate::record::ItemRecord> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for report in reports {
        for item in &report.items {
            if seen.insert(item.question.id.clone()) {
                order.push(item);
            }
        }
    }
    let by_run: Vec<BTreeMap<&str, &crate::record::ItemRecord>> = reports
        .iter()
        .map(|r| r.items.iter().map(|i| (i.question.id.as_str(), i)).collect())
        .collect();
    order
        .into_iter()
        .map(|item| QuestionView {
            id: item.question.id.clone(),
            question: item.question.question.clone(),
            reference: item.question.answer.clone().unwrap_or_default(),
            refuse: item.question.refuse,
            doc: item.question.doc.clone(),
            answers: by_run
                .iter()
                .map(|items| match items.get(item.question.id.as_str()) {
                    None => AnswerView { missing: true, ..AnswerView::default() },
                    Some(i) => answer_view(i),
                })
                .collect(),
        })
        .collect()
}

fn answer_view(item: &crate::record::ItemRecord) -> AnswerView {
    let names = ordered_metric_names(item.metrics.keys());
    AnswerView {
        missing: false,
        text: item.answer.as_ref().map(|a| a.text.clone()).unwrap_or_default(),
        citations: item.answer.as_ref().map(|a| a.citations.join(", ")).unwrap_or_default(),
        error: item.error.clone(),
        flags: item_flags(item).into_iter().map(|flag| FlagView { meaning: flag_meaning(&flag), name: flag }).collect(),
        statements: judged_statements(item)
            .into_iter()
            .filter(|j| j.unsupported + j.missed > 0)
            .collect(),
        metrics: names
            .iter()
            .filter_map(|n| item.metrics.get(n).map(|v| format!("{n} {v:.2}")))
            .collect::<Vec<_>>()
            .join(" · "),
        verdicts: item
            .verdicts
            .iter()
            .map(|(judge, v)| VerdictView {
                judge: judge.clone(),
                // A score-only judge (statements, claims) has no label: its score stands for one.
                label: match (&v.label, v.score, &v.error) {
                    (Some(label), _, _) => label.clone(),
                    (None, Some(score), _) => format!("{score:.2}"),
                    (None, None, Some(e)) => format!("unscored: {e}"),
                    (None, None, None) => String::new(),
                },
                confidence: v
                    .label
                    .as_ref()
                    .and_then(|l| v.distribution.get(l))
                    .map(|p| format!("{:.0}%", p * 100.0)),
                distribution: v
                    .distribution
                    .iter()
                    .map(|(k, p)| format!("{k} {:.0}%", p * 100.0))
                    .collect::<Vec<_>>()
                    .join(", "),
                explanation: v.explanation.clone(),
            })
            .collect(),
    }
}
