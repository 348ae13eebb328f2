//! The template engine as Assay runs untrusted templates (a dataset's prompt.md, a judge
//! prompt, a GGUF chat template): any bytes as template source, rendered through
//! `bounded_template` with values like a prompt's. It must only ever return errors — never
//! panic, abort on an allocation, or return text over the output cap.
#![no_main]

use assay::bounded_template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let mut env = bounded_template::environment();
    if env.add_template("fuzz.md", &source).is_err() {
        return;
    }
    let Ok(template) = env.get_template("fuzz.md") else { return };
    let context = serde_json::json!({
        "question": "How much does the stove weigh?",
        "doc": "summit-stove-2",
        "chunks": [
            { "n": 1, "id": "summit-stove-2#0", "text": "It weighs 240 g." },
            { "n": 2, "id": "summit-stove-2#1", "text": "Use isobutane canisters." }
        ],
        "messages": [{ "role": "user", "content": "Hello" }]
    });
    if let Ok(text) = bounded_template::render(&template, context) {
        assert!(text.len() <= bounded_template::MAX_RENDERED_BYTES);
    }
});
