//! The model runtime on the real SmolLM2-135M GGUF: generation, seeds, stop sequences,
//! context limits, option scoring and prefix reuse.

use crate::llm_common;

use std::sync::atomic::AtomicBool;

use assay::llm::chat_template::ChatMessage;
use assay::llm::error::LlmError;
use assay::llm::generate::{FinishReason, GenerationParams};
use assay::llm::scoring::option_distribution;

fn chat(model: &assay::llm::model::LanguageModel, question: &str) -> String {
    model
        .chat_prompt(&[ChatMessage::user(question)])
        .expect("chat template renders")
}

#[test]
fn chat_template_from_gguf_renders_chatml() {
    let Some(model) = llm_common::smollm2() else { return };
    let prompt = chat(&model, "Hi");
    assert_eq!(
        prompt,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    let ids = model.encode_prompt(&prompt).unwrap();
    let im_start = model.tokenizer.tokenizer.token_to_id("<|im_start|>").unwrap();
    assert_eq!(ids[0], im_start, "chat markers are single special tokens");
}

#[test]
fn greedy_answer_names_paris_and_streams_the_same_text() {
    let Some(model) = llm_common::smollm2() else { return };
    let prompt = chat(
        &model,
        "What is the capital of France? Answer in one short English sentence.",
    );
    let mut streamed = String::new();
    let params = GenerationParams {
        max_tokens: 40,
        ..GenerationParams::default()
    };
    let out = model
        .generate(&prompt, &params, &mut |t| streamed.push_str(t), None)
        .unwrap();
    assert!(out.text.contains("Paris"), "answer was {:?}", out.text);
    assert_eq!(streamed, out.text);
    assert_eq!(out.finish, FinishReason::EndOfText, "{:?}", out.text);
}

#[test]
fn same_seed_same_text_other_seed_other_text() {
    let Some(model) = llm_common::smollm2() else { return };
    let prompt = chat(&model, "Write a short poem about the sea.");
    let params = |seed| GenerationParams {
        max_tokens: 24,
        temperature: 1.0,
        top_p: Some(0.95),
        top_k: Some(50),
        repeat_penalty: 1.1,
        seed,
        ..GenerationParams::default()
    };
    let run = |seed| model.generate(&prompt, &params(seed), &mut |_| {}, None).unwrap().text;
    let a = run(7);
    assert_eq!(a, run(7));
    let others: Vec<String> = (8..11).map(run).collect();
    assert!(others.iter().any(|o| *o != a), "three other seeds all gave {a:?}");
}

#[test]
fn stop_sequences_max_tokens_and_cancellation() {
    let Some(model) = llm_common::smollm2() else { return };
    let prompt = chat(&model, "Count from 1 to 20, separated by commas.");
    let greedy = |max_tokens, stop: Vec<String>| GenerationParams {
        max_tokens,
        stop,
        ..GenerationParams::default()
    };
    let full = model.generate(&prompt, &greedy(60, vec![]), &mut |_| {}, None).unwrap();
    assert!(full.text.contains('5'), "{:?}", full.text);
    let cut = model
        .generate(&prompt, &greedy(60, vec!["5".into()]), &mut |_| {}, None)
        .unwrap();
    assert_eq!(cut.finish, FinishReason::Stop);
    assert_eq!(cut.text, full.text[..full.text.find('5').unwrap()]);

    let short = model.generate(&prompt, &greedy(3, vec![]), &mut |_| {}, None).unwrap();
    assert_eq!(short.finish, FinishReason::MaxTokens);
    assert_eq!(short.tokens.len(), 3);

    let cancel = AtomicBool::new(true);
    let cancelled = model
        .generate(&prompt, &greedy(60, vec![]), &mut |_| {}, Some(&cancel))
        .unwrap();
    assert_eq!(cancelled.finish, FinishReason::Cancelled);
    assert!(cancelled.tokens.is_empty());
}

#[test]
fn a_prompt_longer_than_the_context_window_is_a_clear_error() {
    let Some(model) = llm_common::smollm2() else { return };
    let long = "word ".repeat(model.context_length() + 10);
    let err = model
        .generate(&long, &GenerationParams::default(), &mut |_| {}, None)
        .unwrap_err();
    match &err {
        LlmError::ContextOverflow { tokens, context, .. } => {
            assert!(tokens > context);
            assert_eq!(*context, 8192);
        }
        other => panic!("expected a context error, got {other}"),
    }
    assert!(err.to_string().contains("context window"));
}

#[test]
fn prefix_then_suffix_gives_the_logits_of_the_whole_prompt() {
    let Some(model) = llm_common::smollm2() else { return };
    let prefix = model
        .encode_prompt(&chat(&model, "Is the answer consistent with the reference? Reference: Hold RESET for five seconds."))
        .unwrap();
    let suffixes = [
        model.encode_continuation("Answer: press it for 5 seconds.\nVerdict:").unwrap(),
        model.encode_continuation("Answer: unplug the unit.\nVerdict:").unwrap(),
    ];
    let shared = model.prefill(&prefix).unwrap();
    for suffix in &suffixes {
        let reused = model.extend(&shared, suffix).unwrap();
        let mut whole = prefix.clone();
        whole.extend_from_slice(suffix);
        let fresh = model.prefill(&whole).unwrap();
        let max_diff = reused
            .next_logits
            .iter()
            .zip(&fresh.next_logits)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max_diff < 1e-3, "logits differ by {max_diff}");
        assert_eq!(reused.tokens, whole);
    }
    // The shared state is unchanged by its continuations.
    assert_eq!(shared.tokens, prefix);
    assert_eq!(shared.cache.len(), prefix.len());
}

#[test]
fn option_scores_match_the_logits_of_each_full_sequence() {
    let Some(model) = llm_common::smollm2() else { return };
    let prompt = chat(&model, "What is the capital of France? Reply with one word.");
    let state = model.prefill_text(&prompt).unwrap();
    let options = ["Paris", "London", "Banana split"];
    let scores = model.score_options(&state, &options).unwrap();
    assert_eq!(scores.len(), 3);
    for s in &scores {
        assert_eq!(s.tokens.len(), s.token_logprobs.len());
        assert!(s.token_logprobs.iter().all(|l| *l <= 0.0 && l.is_finite()));
        let sum: f32 = s.token_logprobs.iter().sum();
        assert!((sum - s.logprob).abs() < 1e-4);
        // Recompute from scratch: each option token's log-probability after prompt + earlier tokens.
        let mut ids = state.tokens.clone();
        for (i, &t) in s.tokens.iter().enumerate() {
            let fresh = model.prefill(&ids).unwrap();
            let lp = assay::llm::transformer::log_softmax(&fresh.next_logits)[t as usize];
            assert!((lp - s.token_logprobs[i]).abs() < 1e-3, "{}: token {i}: {lp} vs {}", s.option, s.token_logprobs[i]);
            ids.push(t);
        }
    }
    assert!(scores[0].logprob > scores[1].logprob, "{scores:?}");
    assert!(scores[0].logprob > scores[2].logprob, "{scores:?}");
    let dist = option_distribution(&scores);
    assert!((dist.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(dist[0] > 0.5, "{dist:?}");
}
