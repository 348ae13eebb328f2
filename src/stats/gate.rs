//! CI gates: `--fail-under METRIC=VALUE` fails a run whose mean is below the value.

use super::RunSummary;

#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub metric: String,
    pub threshold: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GateFailure {
    pub gate: Gate,
    /// None when the run has no score for the metric at all.
    pub actual: Option<f64>,
}

impl std::fmt::Display for GateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.actual {
            Some(actual) => write!(
                f,
                "{} = {actual:.4} is under {}",
                self.gate.metric, self.gate.threshold
            ),
            None => write!(
                f,
                "{} has no scored items (gate {})",
                self.gate.metric, self.gate.threshold
            ),
        }
    }
}

/// Parse `METRIC=VALUE`; `known` lists the metric names the run can produce.
pub fn parse_gate(text: &str, known: &[&str]) -> Result<Gate, String> {
    let Some((metric, value)) = text.split_once('=') else {
        return Err(format!("--fail-under {text:?}: expected METRIC=VALUE, e.g. token_f1=0.7"));
    };
    let metric = metric.trim();
    if !known.contains(&metric) {
        return Err(format!(
            "--fail-under {text:?}: unknown metric {metric:?}; known: {}",
            known.join(", ")
        ));
    }
    let threshold: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("--fail-under {text:?}: {value:?} is not a number"))?;
    Ok(Gate {
        metric: metric.to_string(),
        threshold,
    })
}

pub fn check_gates(gates: &[Gate], summary: &RunSummary) -> Vec<GateFailure> {
    gates
        .iter()
        .filter_map(|gate| {
            let actual = summary.metrics.get(&gate.metric).map(|m| m.mean);
            match actual {
                Some(a) if a >= gate.threshold => None,
                _ => Some(GateFailure {
                    gate: gate.clone(),
                    actual,
                }),
            }
        })
        .collect()
}
