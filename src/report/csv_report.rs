//! CSV export: one row per question × run, one column per metric and judge.
//!
//! Spreadsheets execute cells that start with `=`, `+`, `-` or `@`; model text is prefixed with
//! a quote in that case so opening the file never runs a formula a model wrote.

use super::{ordered_metric_names, ReportError, RunReport};

pub fn render(reports: &[RunReport]) -> Result<String, ReportError> {
    let metric_names = ordered_metric_names(
        reports
            .iter()
            .flat_map(|r| r.items.iter())
            .flat_map(|i| i.metrics.keys()),
    );
    let judge_names = ordered_metric_names(
        reports
            .iter()
            .flat_map(|r| r.items.iter())
            .flat_map(|i| i.verdicts.keys()),
    );
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "run_id",
        "run_name",
        "question_id",
        "question",
        "reference",
        "answer",
        "citations",
        "latency_ms",
        "error",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(metric_names.iter().cloned());
    for judge in &judge_names {
        header.push(format!("{judge}_label"));
        header.push(format!("{judge}_score"));
    }
    let csv_err = |e: csv::Error| ReportError::Render(e.to_string());
    writer.write_record(&header).map_err(csv_err)?;
    for report in reports {
        for item in &report.items {
            let answer = item.answer.as_ref();
            let mut row = vec![
                report.run.id.clone(),
                safe_cell(&report.run.name),
                item.question.id.clone(),
                safe_cell(&item.question.question),
                safe_cell(item.question.answer.as_deref().unwrap_or("")),
                safe_cell(answer.map(|a| a.text.as_str()).unwrap_or("")),
                safe_cell(&answer.map(|a| a.citations.join(" ")).unwrap_or_default()),
                answer.map(|a| a.latency_ms.to_string()).unwrap_or_default(),
                safe_cell(item.error.as_deref().unwrap_or("")),
            ];
            for name in &metric_names {
                row.push(item.metrics.get(name).map(|v| format!("{v:.6}")).unwrap_or_default());
            }
            for judge in &judge_names {
                let verdict = item.verdicts.get(judge);
                row.push(safe_cell(
                    verdict.and_then(|v| v.label.as_deref()).unwrap_or(""),
                ));
                row.push(
                    verdict
                        .and_then(|v| v.score)
                        .map(|s| format!("{s:.6}"))
                        .unwrap_or_default(),
                );
            }
            writer.write_record(&row).map_err(csv_err)?;
        }
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| ReportError::Render(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| ReportError::Render(e.to_string()))
}

fn safe_cell(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}
