//! Markdown export (for pull requests): a summary table across runs, each later run compared
//! with the first (headline, table, disagreements), and a per-question table per run, rendered
//! from `templates/report.md.j2`.
//!
//! Markdown renderers pass HTML through, so every text cell is HTML-escaped as well as having
//! its pipes and newlines neutralised: a model's answer cannot inject markup or break the table.

use super::comparison_view::experiment_views;
use super::pairwise_view::pairwise_view;
use crate::compare::PairwiseOutcome;
use super::findings::{flagged_lines, judged_statements, JudgedStatements, SUPPORTED_AT_LEAST};
use super::{ordered_metric_names, ReportError, RunReport};
use crate::stats::item_flags;
use serde::Serialize;

const TEMPLATE: &str = include_str!("templates/report.md.j2");

#[derive(Serialize)]
struct MarkdownRun {
    id: String,
    name: String,
    dataset: String,
    target: String,
    status: &'static str,
    created_at: String,
    done: usize,
    total: usize,
    errors: usize,
    latency: String,
    metric_columns: Vec<String>,
    questions: Vec<MarkdownQuestion>,
    /// "2 of 30 answers flagged: possible injection", one per flag.
    flagged: Vec<String>,
    /// Whether any question has statements to list under the table.
    any_statements: bool,
}

#[derive(Serialize)]
struct MarkdownQuestion {
    id: String,
    question: String,
    reference: String,
    answer: String,
    citations: String,
    values: Vec<String>,
    flags: String,
    statements: Vec<JudgedStatements>,
}

#[derive(Serialize)]
struct SummaryRow {
    metric: String,
    group: &'static str,
    values: Vec<String>,
}

pub fn render(reports: &[RunReport], seed: u64, pairwise: &[PairwiseOutcome]) -> Result<String, ReportError> {
    let all_names = ordered_metric_names(
        reports
            .iter()
            .flat_map(|r| r.summary.metrics.keys()),
    );
    let summary: Vec<SummaryRow> = all_names
        .iter()
        .map(|name| SummaryRow {
            metric: name.clone(),
            group: crate::metrics::metric_group(name),
            values: reports
                .iter()
                .map(|r| match r.summary.metrics.get(name) {
                    Some(m) => {
                        let unscored = if m.unscored > 0 { format!(" ({} unscored)", m.unscored) } else { String::new() };
                        let passed = m.pass_rate.map(|p| format!(", passed {:.0}%", p * 100.0)).unwrap_or_default();
                        let length = m.length_spearman.map(|rho| format!(", length ρ {rho:.2}")).unwrap_or_default();
                        format!("{:.3} [{:.3}, {:.3}] n={}{unscored}{passed}{length}", m.mean, m.ci95[0], m.ci95[1], m.n)
                    }
                    None => "—".into(),
                })
                .collect(),
        })
        .collect();
    let runs: Vec<MarkdownRun> = reports.iter().map(markdown_run).collect();
    let (comparisons, leaderboard) = experiment_views(reports, seed, false);
    let pairwise: Vec<_> = pairwise.iter().map(pairwise_view).collect();

    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.add_filter("cell", |text: String| table_cell(&text));
    env.add_template("report.md", TEMPLATE)
        .map_err(|e| ReportError::Render(e.to_string()))?;
    let template = env
        .get_template("report.md")
        .map_err(|e| ReportError::Render(e.to_string()))?;
    template
        .render(minijinja::context! { runs => runs, supported_at_least => SUPPORTED_AT_LEAST, summary => summary, comparisons => comparisons, leaderboard => leaderboard, pairwise => pairwise })
        .map_err(|e| ReportError::Render(e.to_string()))
}

fn markdown_run(report: &RunReport) -> MarkdownRun {
    let metric_columns =
        ordered_metric_names(report.items.iter().flat_map(|i| i.metrics.keys()));
    let questions: Vec<MarkdownQuestion> = report
        .items
        .iter()
        .map(|item| {
            let answer = item.answer.as_ref();
            let answer_text = match (answer, &item.error) {
                (Some(a), _) => a.text.clone(),
                (None, Some(e)) => format!("(error: {e})"),
                (None, None) => String::new(),
            };
            let reference = match (&item.question.answer, item.question.refuse) {
                (Some(a), _) => a.clone(),
                (None, true) => "(should decline)".into(),
                (None, false) => String::new(),
            };
            MarkdownQuestion {
                id: item.question.id.clone(),
                question: item.question.question.clone(),
                reference,
                answer: answer_text,
                citations: answer.map(|a| a.citations.join(", ")).unwrap_or_default(),
                flags: item_flags(item).join(", "),
                statements: judged_statements(item)
                    .into_iter()
                    .filter(|j| j.unsupported + j.missed > 0)
                    .collect(),
                values: metric_columns
                    .iter()
                    .map(|m| {
                        item.metrics
                            .get(m)
                            .map(|v| format!("{v:.2}"))
                            .unwrap_or_else(|| "—".into())
                    })
                    .collect(),
            }
        })
        .collect();
    MarkdownRun {
        id: report.run.id.clone(),
        name: report.run.name.clone(),
        dataset: report.run.dataset.clone(),
        target: report.run.config.target.clone(),
        status: report.run.status.as_str(),
        created_at: report.run.created_at.clone(),
        done: report.items.len(),
        total: report.run.total_items,
        errors: report.summary.errors,
        latency: report
            .summary
            .avg_latency_ms
            .map(|l| format!("{l:.1} ms"))
            .unwrap_or_else(|| "—".into()),
        metric_columns,
        any_statements: questions.iter().any(|q| !q.statements.is_empty()),
        questions,
        flagged: flagged_lines(report),
    }
}

/// Escape text for one Markdown table cell.
pub(crate) fn table_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            // An entity, not `\``: a backslash does not escape inside a code span (some cells are
            // in one), so a backtick there would close it; an entity can never close one.
            '`' => out.push_str("&#96;"),
            // Model text must not become a link or an image (a tracking pixel loads when the
            // report is viewed).
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            '\t' => out.push(' '),
            // A control character (ESC starts a terminal escape sequence) shown as its Unicode
            // picture: the report is often read with `cat` or in a terminal pager.
            c if (c as u32) < 0x20 => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::table_cell;

    #[test]
    fn cells_cannot_break_the_table_or_inject_html() {
        let cell = table_cell("a | b\n<script>alert(1)</script> `x`");
        assert_eq!(
            cell,
            "a \\| b<br>&lt;script&gt;alert(1)&lt;/script&gt; &#96;x&#96;"
        );
        assert_eq!(table_cell("red \u{1b}[31m\u{7}\u{9b}"), "red \u{241b}\\[31m\u{2407}\u{fffd}");
    }
}
