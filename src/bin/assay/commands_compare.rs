//! `assay compare`: every run after the first against the first (the baseline), per metric,
//! as the library assembles it (`compare::experiment`), with its difference gates.

use assay::compare::{experiment, ExperimentOptions, GroupBy};
use assay::run::StoredRuns;
use crate::DbArg;
use crate::print::print_experiment;

pub fn compare(
    references: &[String],
    json: bool,
    fail_under: &[String],
    seed: u64,
    primary: Option<&str>,
    by: Option<GroupBy>,
    db: &DbArg,
) -> anyhow::Result<i32> {
    let reports = StoredRuns::open_existing(&db.path()?)?.reports(references)?;
    let options = ExperimentOptions { seed, primary: primary.map(str::to_string), by, fail_under: fail_under.to_vec() };
    let compared = experiment(&reports, &options)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&compared.comparisons)?);
    } else {
        print_experiment(&compared, by.is_some());
    }
    if !compared.gate_failures.is_empty() {
        eprintln!("gate failed: {}", compared.gate_failures.join("; "));
        return Ok(1);
    }
    Ok(0)
}
