//! Runs named on the command line (ids, prefixes, names, experiment ids), read back from the
//! store with the `--fail-under` gates that apply to them: what compare and export start from.

use crate::DbArg;
use assay::report::{load_report, RunReport};
use assay::stats::{parse_gate, Gate};
use assay::store::Store;

/// Load the named runs and parse `--fail-under` gates against the metrics they have.
pub fn reports_with_gates(
    references: &[String],
    fail_under: &[String],
    db: &DbArg,
) -> anyhow::Result<(Vec<RunReport>, Vec<Gate>)> {
    let store = Store::open_existing(&db.path()?)?;
    let mut reports = Vec::new();
    for reference in references {
        for run in store.find_runs(reference)? {
            reports.push(load_report(&store, run)?);
        }
    }
    let known: Vec<&str> = reports
        .iter()
        .flat_map(|r| r.summary.metrics.keys().map(String::as_str))
        .collect();
    let gates = fail_under
        .iter()
        .map(|g| parse_gate(g, &known))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    Ok((reports, gates))
}
