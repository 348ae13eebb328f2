//! Generation constrained to a JSON schema (llguidance) on SmolLM2-135M: the output always
//! parses and has the schema's shape, arrays, enums and nested objects included.

use assay::llm::chat_template::ChatMessage;
use assay::llm::generate::{FinishReason, GenerationParams};
use crate::llm_common;
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

/// The default judge model (qwen2.5-coder-1.5b-instruct) under the same constraints: the
/// schemas a judge and the question generator use (enums, arrays of nested objects, integer
/// ranges). Skipped, loudly, where that model is not installed (CI has only SmolLM2).
#[test]
fn json_schema_output_of_the_1_5b_judge_model_parses() {
    let Some(model) = llm_common::installed("qwen2.5-coder-1.5b-instruct") else { return };
    let qa_schema = json!({
        "type": "object",
        "properties": {
            "question": { "type": "string", "maxLength": 120 },
            "answer": { "type": "string", "maxLength": 80 },
            "quote": {
                "type": "object",
                "properties": {
                    "doc": { "type": "string", "enum": ["geography.md", "history.md"] },
                    "text": { "type": "string", "maxLength": 120 }
                },
                "required": ["doc", "text"],
                "additionalProperties": false
            },
            "difficulty": { "type": "string", "enum": ["easy", "medium", "hard"] }
        },
        "required": ["question", "answer", "quote", "difficulty"],
        "additionalProperties": false
    });
    let claims_schema = json!({
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "claim": { "type": "string", "maxLength": 80 },
                        "label": { "type": "string", "enum": ["supported", "contradicted", "not_in_context"] },
                        "confidence": { "type": "integer", "minimum": 1, "maximum": 5 }
                    },
                    "required": ["claim", "label", "confidence"],
                    "additionalProperties": false
                },
                "minItems": 1,
                "maxItems": 3
            }
        },
        "required": ["claims"],
        "additionalProperties": false
    });
    let qa_prompt = model
        .chat_prompt(&[ChatMessage::user(
            "Document geography.md says: \"Paris is the capital of France.\" Write one question a \
             reader could ask about it, its short answer, and the quote that supports it, as JSON.",
        )])
        .unwrap();
    let claims_prompt = model
        .chat_prompt(&[ChatMessage::user(
            "Context: the AquaPure 500 filter must be replaced every six months. Answer to check: \
             \"Replace the filter every six months; it is made of copper.\" Split the answer into \
             claims and label each against the context, as JSON.",
        )])
        .unwrap();
    let params = GenerationParams {
        max_tokens: 200,
        temperature: 0.0,
        ..GenerationParams::default()
    };

    let out = model.generate_json(&qa_prompt, &qa_schema, &params, &mut |_| {}, None).unwrap();
    assert_eq!(out.finish, FinishReason::EndOfText, "did not finish: {:?}", out.text);
    let v: Value = serde_json::from_str(&out.text).unwrap_or_else(|e| panic!("{e}: {:?}", out.text));
    assert_eq!(v.as_object().unwrap().len(), 4, "{v}");
    assert!(["easy", "medium", "hard"].contains(&v["difficulty"].as_str().unwrap()), "{v}");
    assert!(["geography.md", "history.md"].contains(&v["quote"]["doc"].as_str().unwrap()), "{v}");
    assert!(v["quote"]["text"].as_str().unwrap().chars().count() <= 120, "{v}");
    // A 1.5B model that reads the document answers from it (greedy, so this is stable).
    assert!(v["answer"].as_str().unwrap().contains("Paris"), "{v}");

    let out = model
        .generate_json(&claims_prompt, &claims_schema, &params, &mut |_| {}, None)
        .unwrap();
    assert_eq!(out.finish, FinishReason::EndOfText, "did not finish: {:?}", out.text);
    let v: Value = serde_json::from_str(&out.text).unwrap_or_else(|e| panic!("{e}: {:?}", out.text));
    let claims = v["claims"].as_array().unwrap();
    assert!((1..=3).contains(&claims.len()), "{v}");
    for c in claims {
        assert_eq!(c.as_object().unwrap().len(), 3, "{v}");
        let label = c["label"].as_str().unwrap();
        assert!(["supported", "contradicted", "not_in_context"].contains(&label), "{v}");
        let confidence = c["confidence"].as_i64().unwrap();
        assert!((1..=5).contains(&confidence), "{v}");
    }
}
