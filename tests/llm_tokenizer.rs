//! Tokenizers built from GGUF metadata against llama.cpp's tokenization of the same files
//! (reference ids made by scripts/llm_tokenizer_reference.py).

use assay::llm::gguf_tokenizer::tokenizer_for_file;
use assay::models::error::ModelsError;
use assay::models::registry::Registry;
use assay::models::registry::sha256_file;

#[derive(serde::Deserialize)]
struct Reference {
    models: std::collections::BTreeMap<String, ModelCases>,
}

#[derive(serde::Deserialize)]
struct ModelCases {
    sha256: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
}

#[test]
fn gguf_tokenizers_match_llama_cpp_exactly() {
    let reference: Reference = serde_json::from_str(include_str!("fixtures/llm/tokenizer_reference.json"))
        .expect("reference fixture parses");
    assert!(reference.models.contains_key("smollm2-135m-instruct"));
    let registry = Registry::load().unwrap();
    let mut checked = 0;
    for (id, model) in &reference.models {
        let path = match registry.model_path(id) {
            Ok(p) => p,
            Err(ModelsError::NotInstalled { .. }) => {
                eprintln!("\n*** SKIPPED tokenizer of {id}: not installed (`assay models pull {id}`)\n");
                continue;
            }
            Err(e) => panic!("{id}: {e}"),
        };
        assert_eq!(sha256_file(&path).unwrap().0, model.sha256, "{id}: reference made from another file");
        let tok = tokenizer_for_file(&path).unwrap();
        let mut mismatches = Vec::new();
        for case in &model.cases {
            let ids = tok.encode(&case.text, false).unwrap();
            if ids != case.ids {
                mismatches.push(format!("{:?}\n   ours: {ids:?}\n   ref:  {:?}", case.text, case.ids));
                continue;
            }
            // Decoding gives the text back (special tokens included).
            let back = tok.decode(&ids, false).unwrap();
            assert_eq!(back, case.text, "{id}: round trip");
        }
        assert!(mismatches.is_empty(), "{id}: {} of {} differ:\n{}", mismatches.len(), model.cases.len(), mismatches.join("\n"));
        checked += 1;
    }
    if checked == 0 {
        eprintln!("\n*** SKIPPED: no reference model installed (`assay models pull smollm2-135m-instruct`)\n");
    }
}
