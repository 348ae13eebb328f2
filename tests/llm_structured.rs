//! Generation constrained to a JSON schema (llguidance) on SmolLM2-135M: the output always
//! parses and has the schema's shape, arrays, enums and nested objects included.

mod llm_common;

use assay::llm::{ChatMessage, FinishReason, GenerationParams};
use serde_json::{json, Value};

#[test]
fn json_schema_output_parses_with_arrays_enums_and_nested_objects() {
    let Some(model) = llm_common::smollm2() else { return };
    let schema = json!({
        "type": "object",
        "properties": {
            "verdict": { "type": "string", "enum": ["supported", "unsupported", "unclear"] },
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": { "type": "string", "maxLength": 60 },
                        "source": { "type": "object",
                                    "properties": { "doc": { "type": "string", "maxLength": 20 },
                                                    "page": { "type": "integer" } },
                                    "required": ["doc", "page"], "additionalProperties": false }
                    },
                    "required": ["text", "source"],
                    "additionalProperties": false
                },
                "minItems": 1,
                "maxItems": 2
            }
        },
        "required": ["verdict", "claims"],
        "additionalProperties": false
    });
    let prompt = model
        .chat_prompt(&[ChatMessage::user(
            "The manual (aquapure-500, page 12) says: hold RESET for 5 seconds until the LED blinks. \
             List the claims as JSON.",
        )])
        .unwrap();
    let mut streamed = String::new();
    for seed in [0u64, 1] {
        streamed.clear();
        let params = GenerationParams {
            max_tokens: 160,
            temperature: if seed == 0 { 0.0 } else { 0.8 },
            seed,
            ..GenerationParams::default()
        };
        let out = model
            .generate_json(&prompt, &schema, &params, &mut |t| streamed.push_str(t), None)
            .unwrap();
        assert_eq!(out.finish, FinishReason::EndOfText, "did not finish: {:?}", out.text);
        assert_eq!(streamed, out.text);
        let v: Value = serde_json::from_str(&out.text).unwrap_or_else(|e| panic!("{e}: {:?}", out.text));
        let verdict = v["verdict"].as_str().unwrap();
        assert!(["supported", "unsupported", "unclear"].contains(&verdict), "{v}");
        let claims = v["claims"].as_array().unwrap();
        assert!((1..=2).contains(&claims.len()), "{v}");
        for c in claims {
            assert!(c["text"].as_str().unwrap().chars().count() <= 60, "{v}");
            assert!(c["source"]["doc"].is_string() && c["source"]["page"].is_i64(), "{v}");
            assert_eq!(c.as_object().unwrap().len(), 2, "{v}");
        }
    }
}

#[test]
fn an_invalid_schema_is_a_clear_error() {
    let Some(model) = llm_common::smollm2() else { return };
    let err = model
        .generate_json("x", &json!({"type": "no-such-type"}), &GenerationParams::default(), &mut |_| {}, None)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("structured output:"), "{err}");
}
