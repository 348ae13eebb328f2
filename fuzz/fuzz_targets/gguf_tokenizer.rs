//! The tokenizer builder: a tokenizer made from GGUF `tokenizer.ggml.*` metadata that the
//! fuzzer chooses (vocabulary kind, pre-tokenizer, tokens, merges, token types, scores, special
//! ids), then used to encode and decode text. Building may fail with an error; nothing may panic.
#![no_main]

use candle_core::quantized::gguf_file::{Content, Value, VersionedMagic};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Arbitrary)]
struct Metadata {
    sentencepiece: bool,
    pre: Option<u8>,
    tokens: Vec<String>,
    merges: Vec<String>,
    types: Option<Vec<i32>>,
    scores: Option<Vec<f32>>,
    bos: Option<u32>,
    eos: Option<u32>,
    unknown: Option<u32>,
    add_bos: Option<bool>,
    add_space_prefix: Option<bool>,
    text: String,
}

const PRE: &[&str] = &["default", "gpt2", "qwen2", "llama3", "smollm", "deepseek-r1-qwen", "unknown-kind"];

fuzz_target!(|m: Metadata| {
    let strings = |v: &[String]| Value::Array(v.iter().cloned().map(Value::String).collect());
    let mut metadata = HashMap::new();
    let kind = if m.sentencepiece { "llama" } else { "gpt2" };
    metadata.insert("tokenizer.ggml.model".to_string(), Value::String(kind.into()));
    if let Some(pre) = m.pre {
        metadata.insert("tokenizer.ggml.pre".into(), Value::String(PRE[pre as usize % PRE.len()].into()));
    }
    metadata.insert("tokenizer.ggml.tokens".into(), strings(&m.tokens));
    metadata.insert("tokenizer.ggml.merges".into(), strings(&m.merges));
    if let Some(types) = &m.types {
        metadata.insert("tokenizer.ggml.token_type".into(), Value::Array(types.iter().map(|t| Value::I32(*t)).collect()));
    }
    if let Some(scores) = &m.scores {
        metadata.insert("tokenizer.ggml.scores".into(), Value::Array(scores.iter().map(|s| Value::F32(*s)).collect()));
    }
    for (key, id) in [("bos_token_id", m.bos), ("eos_token_id", m.eos), ("unknown_token_id", m.unknown)] {
        if let Some(id) = id {
            metadata.insert(format!("tokenizer.ggml.{key}"), Value::U32(id));
        }
    }
    if let Some(add_bos) = m.add_bos {
        metadata.insert("tokenizer.ggml.add_bos_token".into(), Value::Bool(add_bos));
    }
    if let Some(prefix) = m.add_space_prefix {
        metadata.insert("tokenizer.ggml.add_space_prefix".into(), Value::Bool(prefix));
    }
    let content = Content {
        magic: VersionedMagic::GgufV3,
        metadata,
        tensor_infos: HashMap::new(),
        tensor_data_offset: 0,
    };
    let path = Path::new("fuzz.gguf");
    if let Ok(tokenizer) = assay::llm::gguf_tokenizer::tokenizer_from_gguf(&content, path) {
        if let Ok(ids) = tokenizer.encode(&m.text, true) {
            let _ = tokenizer.decode(&ids, true);
            let _ = tokenizer.decode(&ids, false);
        }
        for id in [0, 1, u32::MAX] {
            let _ = tokenizer.token_text(id);
        }
    }
});
