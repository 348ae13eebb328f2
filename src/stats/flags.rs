//! Flags: what deterministic checks found on an item (`possible injection`: its text looks like
//! it addresses the grader), and how many items of a run carry each. A flagged item keeps its
//! scores, so the count is what tells a reader which scores to distrust before reading them.

use crate::record::ItemRecord;
use std::collections::{BTreeMap, BTreeSet};

/// Every flag on any verdict of `item`, each once, in name order. The detector sets the same
/// flag on every verdict of an item, but a sub-score or a judge that failed may lack it, so the
/// item is flagged when any of its verdicts is.
pub fn item_flags(item: &ItemRecord) -> Vec<String> {
    let flags: BTreeSet<&String> = item.verdicts.values().flat_map(|v| &v.flags).collect();
    flags.into_iter().cloned().collect()
}

/// For each flag, how many items carry it (an item counts once per flag, whatever the number of
/// its verdicts); flags no item carries are absent.
pub fn flagged_counts(items: &[ItemRecord]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for item in items {
        for flag in item_flags(item) {
            *counts.entry(flag).or_default() += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Question;
    use crate::record::{Verdict, FLAG_POSSIBLE_INJECTION};

    fn item(id: &str, verdicts: &[(&str, &[&str])]) -> ItemRecord {
        ItemRecord {
            question: Question { id: id.into(), question: "q".into(), ..Question::default() },
            verdicts: verdicts
                .iter()
                .map(|(judge, flags)| {
                    let verdict = Verdict { flags: flags.iter().map(|f| f.to_string()).collect(), ..Verdict::default() };
                    (judge.to_string(), verdict)
                })
                .collect(),
            ..ItemRecord::default()
        }
    }

    #[test]
    fn an_item_counts_once_however_many_verdicts_carry_the_flag() {
        let items = [
            item("a", &[("correct", &[FLAG_POSSIBLE_INJECTION]), ("supported", &[FLAG_POSSIBLE_INJECTION])]),
            item("b", &[("correct", &[]), ("supported.precision", &[FLAG_POSSIBLE_INJECTION])]),
            item("c", &[("correct", &[])]),
        ];
        assert_eq!(item_flags(&items[0]), vec![FLAG_POSSIBLE_INJECTION.to_string()]);
        assert_eq!(item_flags(&items[2]), Vec::<String>::new());
        assert_eq!(flagged_counts(&items), BTreeMap::from([(FLAG_POSSIBLE_INJECTION.to_string(), 2)]));
    }
}
