//! The one sentence a comparison leads with, in every face (CLI, reports, desktop): the primary
//! metric for A and B with their intervals, the difference with its interval and p, and the
//! verdict in words; for a difference that is not significant, the smallest one these questions
//! could have detected; on runs that differ in more than one setting, the confound warning.

use super::paired::Comparison;

pub fn headline(c: &Comparison) -> String {
    let confound = c.settings.warning.as_deref().map(|w| format!(" {w}")).unwrap_or_default();
    let Some(d) = c.primary_diff().filter(|d| d.pairs > 0) else {
        return format!(
            "The primary metric ({}) was not scored in both runs: secondary metrics only.{confound}",
            c.primary.as_deref().unwrap_or("none")
        );
    };
    let power = d
        .min_detectable_diff
        .map(|m| format!(" These {} questions could detect a difference of about ±{m:.3} (80% power); add questions to see smaller ones.", d.pairs))
        .unwrap_or_default();
    format!(
        "{} (primary metric), {} questions: A {:.3} [{:.3}, {:.3}], B {:.3} [{:.3}, {:.3}]; B − A {:+.3} [{:+.3}, {:+.3}], p = {}: {}.{power}{confound}",
        d.metric,
        d.pairs,
        d.mean_a,
        d.ci95_a[0],
        d.ci95_a[1],
        d.mean_b,
        d.ci95_b[0],
        d.ci95_b[1],
        d.mean_diff,
        d.ci95_diff[0],
        d.ci95_diff[1],
        format_p(d.permutation_p),
        d.verdict_text
    )
}

/// Small p-values in scientific notation, so "0.0000" never hides how small.
pub fn format_p(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}
