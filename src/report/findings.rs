//! What to show beside an item's scores so a reader knows which to distrust and why: the flags
//! deterministic checks set (`possible injection`), counted per run, and the statements a
//! statement judge found unsupported (answer side) or missing from the answer (reference side),
//! with the numbers the reference contradicts. The CLI, the Markdown and HTML reports and the
//! desktop app all show the same selection, made here.

use super::RunReport;
use crate::record::{flag_meaning, ItemRecord, StatementCheck, StatementSide};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A statement whose probability of being supported is below this is shown as unsupported
/// (answer side) or missed (reference side): the more likely outcome is "not supported".
pub const SUPPORTED_AT_LEAST: f64 = 0.5;

/// Whether a checked statement is one the reader should see: unsupported, or vetoed by a number.
pub fn is_unsupported(check: &StatementCheck) -> bool {
    check.supported < SUPPORTED_AT_LEAST || check.number_conflict.is_some()
}

/// A checked statement as shown: the check and whether it counts as unsupported here.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ShownStatement {
    #[serde(flatten)]
    pub check: StatementCheck,
    /// Below `SUPPORTED_AT_LEAST`, or a number the other side contradicts.
    pub unsupported: bool,
}

/// One statement judge's checked statements on one item, each side in its text's order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgedStatements {
    /// The judge's name (`supported`), its sub-scores (`supported.precision`) folded into it.
    pub judge: String,
    /// Statements of the answer, checked against the reference (precision).
    pub answer: Vec<ShownStatement>,
    /// Statements of the reference, checked against the answer (recall).
    pub reference: Vec<ShownStatement>,
    /// How many answer statements are unsupported, and how many reference statements missed.
    pub unsupported: usize,
    pub missed: usize,
}

impl JudgedStatements {
    /// Answer statements the reference does not support.
    pub fn unsupported(&self) -> impl Iterator<Item = &StatementCheck> {
        self.answer.iter().filter(|s| s.unsupported).map(|s| &s.check)
    }

    /// Reference statements the answer does not contain.
    pub fn missed(&self) -> impl Iterator<Item = &StatementCheck> {
        self.reference.iter().filter(|s| s.unsupported).map(|s| &s.check)
    }
}

/// The statement judges' checks on `item`, one entry per judge that checked statements. A
/// judge's sub-score verdicts may repeat its statements; each statement is kept once.
pub fn judged_statements(item: &ItemRecord) -> Vec<JudgedStatements> {
    let mut out: Vec<JudgedStatements> = Vec::new();
    let mut seen: BTreeSet<(String, bool, String)> = BTreeSet::new();
    for (name, verdict) in &item.verdicts {
        if verdict.statements.is_empty() {
            continue;
        }
        let judge = name.split('.').next().unwrap_or(name).to_string();
        let index = match out.iter().position(|j| j.judge == judge) {
            Some(i) => i,
            None => {
                out.push(JudgedStatements {
                    judge: judge.clone(),
                    answer: Vec::new(),
                    reference: Vec::new(),
                    unsupported: 0,
                    missed: 0,
                });
                out.len() - 1
            }
        };
        let entry = &mut out[index];
        for check in &verdict.statements {
            let answer_side = check.side == StatementSide::Answer;
            if !seen.insert((judge.clone(), answer_side, check.text.clone())) {
                continue;
            }
            let shown = ShownStatement { check: check.clone(), unsupported: is_unsupported(check) };
            match (answer_side, shown.unsupported) {
                (true, true) => entry.unsupported += 1,
                (false, true) => entry.missed += 1,
                _ => {}
            }
            if answer_side { &mut entry.answer } else { &mut entry.reference }.push(shown);
        }
    }
    out
}

/// One line per flag a run's items carry, with what the flag means: "2 of 30 answers flagged:
/// possible injection (the answer, the question or a retrieved chunk looks like …)".
pub fn flagged_lines(report: &RunReport) -> Vec<String> {
    report
        .summary
        .flagged
        .iter()
        .map(|(flag, n)| {
            let noun = if report.summary.items == 1 { "answer" } else { "answers" };
            format!("{n} of {} {noun} flagged: {flag} ({})", report.summary.items, flag_meaning(flag))
        })
        .collect()
}

/// What each flag a run's items carry means, by flag.
pub fn flag_meanings(report: &RunReport) -> BTreeMap<String, String> {
    report.summary.flagged.keys().map(|flag| (flag.clone(), flag_meaning(flag).to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Question;
    use crate::record::Verdict;

    fn check(side: StatementSide, text: &str, supported: f64, conflict: Option<&str>) -> StatementCheck {
        StatementCheck { side, text: text.into(), supported, number_conflict: conflict.map(String::from) }
    }

    #[test]
    fn unsupported_and_missed_statements_once_per_judge() {
        let statements = vec![
            check(StatementSide::Answer, "The tent weighs 2 kg.", 0.9, None),
            check(StatementSide::Answer, "It has three doors.", 0.2, None),
            check(StatementSide::Answer, "It costs $40.", 0.8, Some("$40 against $400 in the reference")),
            check(StatementSide::Reference, "It packs into its own pocket.", 0.1, None),
            check(StatementSide::Reference, "It weighs 2 kg.", 0.5, None),
        ];
        let verdict = Verdict { score: Some(0.5), statements: statements.clone(), ..Verdict::default() };
        let item = ItemRecord {
            question: Question { id: "q1".into(), question: "q".into(), ..Question::default() },
            verdicts: [
                ("correct".to_string(), Verdict::default()),
                ("supported".to_string(), verdict.clone()),
                ("supported.precision".to_string(), verdict),
            ]
            .into(),
            ..ItemRecord::default()
        };
        let found = judged_statements(&item);
        assert_eq!(found.len(), 1, "sub-scores fold into their judge: {found:?}");
        let judged = &found[0];
        assert_eq!(judged.judge, "supported");
        assert_eq!((judged.answer.len(), judged.reference.len()), (3, 2));
        assert_eq!((judged.unsupported, judged.missed), (2, 1));
        assert_eq!(judged.unsupported().collect::<Vec<_>>(), vec![&statements[1], &statements[2]]);
        assert_eq!(judged.missed().collect::<Vec<_>>(), vec![&statements[3]], "exactly 0.5 counts as supported");
    }
}
