//! The dataset line parser: any bytes as a questions.jsonl file, every line through
//! `parse_question_line` (JSON, field types, ids, cross-references). It must only ever return
//! errors, never panic; a question that validates must survive the JSON the store keeps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeSet;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("questions.jsonl");
    let docs: BTreeSet<String> = ["aquapure-500", "summit-stove-2"].iter().map(|s| s.to_string()).collect();
    for (line, text) in assay::dataset::jsonl_lines(path, data).flatten() {
        if let Ok(question) = assay::dataset::parse_question_line(path, line, text, &docs) {
            let stored = serde_json::to_string(&question).expect("a question serializes");
            let back: assay::dataset::Question = serde_json::from_str(&stored).expect("and reads back");
            assert_eq!(back, question);
        }
    }
});
