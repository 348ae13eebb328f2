//! `assay delete RUN…`: says what goes with each run (answers, verdicts, people's labels,
//! pairwise judgments), asks on a terminal unless `--yes`, then deletes them all or none.

use crate::{terminal, DbArg};
use anyhow::bail;
use assay::run::{RunDeletion, StoredRuns};
use std::io::{BufRead, IsTerminal, Write};

pub fn delete(references: &[String], yes: bool, json: bool, db: &DbArg) -> anyhow::Result<i32> {
    let mut store = StoredRuns::open_existing(&db.path()?)?;
    let plan = store.plan_deletion(references)?;
    if !json {
        for run in &plan {
            eprintln!("{}", describe(run));
        }
    }
    if !yes {
        // Without a terminal to ask on (a script, a pipe), deleting needs the word said.
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            bail!("not deleting without --yes: {} run(s) named, nothing changed", plan.len());
        }
        eprint!("Delete {} run(s)? [y/N] ", plan.len());
        std::io::stderr().flush()?;
        let mut reply = String::new();
        std::io::stdin().lock().read_line(&mut reply)?;
        if !matches!(reply.trim(), "y" | "Y" | "yes") {
            eprintln!("nothing deleted");
            return Ok(0);
        }
    }
    let deleted = store.delete(&plan)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "deleted": deleted, "runs": plan }))?);
    } else {
        eprintln!("deleted {deleted} run(s) from {}", store.path().display());
    }
    Ok(0)
}

/// One line per run: its id and name, and what goes with it.
fn describe(run: &RunDeletion) -> String {
    let c = &run.contents;
    let name = run.name.as_deref().map(|n| format!(" ({})", terminal::line(n, 60))).unwrap_or_default();
    let labels = if c.labels > 0 { format!(", {} people's labels (export them first: `assay labels export`)", c.labels) } else { String::new() };
    format!(
        "{}{name}: {} answers, {} verdicts, {} pairwise judgments{labels}",
        terminal::line(&run.id, 40),
        c.items,
        c.verdicts,
        c.pairwise_judgments
    )
}
