//! JUnit XML: one test suite per run, one test case per question, so CI systems show which
//! questions regressed. A case fails when one of the gated metrics (`--fail-under`) is under
//! its threshold for that question, and is an error when the target failed on it.
//!
//! Written by hand: the format is a handful of elements, and `svg_chart::escape` already does
//! XML escaping (control characters included, which XML 1.0 forbids).

use super::svg_chart::escape;
use super::RunReport;
use crate::stats::Gate;
use std::fmt::Write;

pub fn render(reports: &[RunReport], gates: &[Gate], timestamp: &str) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total_tests: usize = reports.iter().map(|r| r.items.len()).sum();
    let mut total_failures = 0;
    let mut total_errors = 0;
    let mut suites = String::new();
    for (index, report) in reports.iter().enumerate() {
        let mut cases = String::new();
        let mut failures = 0;
        let mut errors = 0;
        let mut seconds = 0.0;
        for item in &report.items {
            let time = item.answer.as_ref().map(|a| a.latency_ms as f64 / 1000.0).unwrap_or(0.0);
            seconds += time;
            let _ = writeln!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{time:.3}\">",
                escape(&format!("{}.{}", report.run.dataset, report.run.name)),
                escape(&format!("{} {}", item.question.id, short(&item.question.question)))
            );
            if let Some(error) = &item.error {
                errors += 1;
                let _ = writeln!(cases, "      <error message=\"{}\" type=\"TargetError\"/>", escape(error));
            } else {
                let under: Vec<String> = gates
                    .iter()
                    .filter_map(|g| {
                        let value = item
                            .metrics
                            .get(&g.metric)
                            .copied()
                            .or_else(|| item.verdicts.get(&g.metric).and_then(|v| v.score))?;
                        (value < g.threshold).then(|| format!("{} = {value:.3} < {}", g.metric, g.threshold))
                    })
                    .collect();
                if !under.is_empty() {
                    failures += 1;
                    let _ = writeln!(
                        cases,
                        "      <failure message=\"{}\" type=\"BelowThreshold\">{}</failure>",
                        escape(&under.join("; ")),
                        escape(&format!(
                            "question: {}\nreference: {}\nanswer: {}",
                            item.question.question,
                            item.question.answer.as_deref().unwrap_or("(should decline)"),
                            item.answer.as_ref().map(|a| a.text.as_str()).unwrap_or("")
                        ))
                    );
                }
            }
            cases.push_str("    </testcase>\n");
        }
        total_failures += failures;
        total_errors += errors;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" id=\"{index}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{seconds:.3}\" timestamp=\"{}\" hostname=\"localhost\">\n{cases}  </testsuite>\n",
            escape(&report.run.name),
            report.items.len(),
            escape(timestamp_without_offset(&report.run.created_at)),
        );
    }
    let _ = write!(
        xml,
        "<testsuites name=\"assay\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"{total_errors}\" timestamp=\"{}\">\n{suites}</testsuites>\n",
        escape(timestamp_without_offset(timestamp))
    );
    xml
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// The common JUnit schema types `timestamp` as xs:dateTime without a zone designator.
fn timestamp_without_offset(rfc3339: &str) -> &str {
    let cut = rfc3339.find(['.', 'Z', '+']).unwrap_or(rfc3339.len());
    &rfc3339[..cut]
}
