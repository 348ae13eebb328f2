//! Judge throughput: choice mode (option scoring after the prompt, with and without reusing the
//! rubric prefix) against the way other tools judge — ask for the label in free text, then
//! parse it — on the same items and model. `assay bench` prints the figures.
//!
//! The free-text variant counts its parse failures; choice mode cannot fail to parse, because
//! it never reads text: it compares the probabilities of the allowed outcomes.
//!
//! `bench_reading` measures how much a judge set reads: prompt tokens read per answer divided
//! by the item's own tokens, and seconds per answer, with the old layout (each judge and each
//! claim re-reads the item) and the new (the item read once) side by side, item by item.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::judge::prompt::{item_variables, marked};
use crate::judge::JudgeError;
use crate::judge::choice::JudgePanel;
use crate::judge::spec::JudgeSpec;
use crate::judge::reading::Reading;
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::generate::GenerationParams;
use crate::llm::model::LanguageModel;
use crate::record::Answer;

#[derive(Debug, Clone, Serialize)]
pub struct JudgeBench {
    pub model: String,
    pub judge: String,
    pub items: usize,
    /// Items per second, choice mode reading each item after the shared rubric prefix.
    pub choice_items_per_s: f64,
    /// Items per second, choice mode reading every prompt whole.
    pub choice_without_prefix_reuse_items_per_s: f64,
    /// Items per second, generating the label as text (greedy, up to 16 tokens) and parsing it.
    pub free_text_items_per_s: f64,
    /// Free-text replies that named no allowed outcome.
    pub free_text_parse_failures: usize,
    /// Items where the parsed free-text label equals choice mode's label.
    pub free_text_same_label: usize,
    /// choice_items_per_s / free_text_items_per_s.
    pub choice_speedup: f64,
}

/// Measure `spec` (a choice-mode judge) on `items` with `model`.
pub fn bench_judge(model: Arc<LanguageModel>, spec: &JudgeSpec, items: &[(Question, Answer)]) -> Result<JudgeBench, JudgeError> {
    let mut panel = JudgePanel::new(vec![spec.clone()], model.clone())?;
    // Warm-up outside the clock: the rubric prefix is computed once per run either way.
    if let Some((question, answer)) = items.first() {
        panel.judge(question, answer);
    }
    let started = Instant::now();
    let choice_labels: Vec<Option<String>> = items
        .iter()
        .map(|(q, a)| panel.judge(q, a).remove(&spec.name).and_then(|v| v.label))
        .collect();
    let choice_s = started.elapsed().as_secs_f64();

    panel.reading = Reading::Whole;
    let started = Instant::now();
    for (question, answer) in items {
        panel.judge(question, answer);
    }
    let no_reuse_s = started.elapsed().as_secs_f64();

    let params = GenerationParams { max_tokens: 16, stop: vec!["\n".into()], ..GenerationParams::default() };
    let model_err = |source| JudgeError::Model { judge: spec.name.clone(), source };
    let mut failures = 0;
    let mut same = 0;
    let started = Instant::now();
    for ((question, answer), choice) in items.iter().zip(&choice_labels) {
        let rendered = spec.render(&marked(&model, &item_variables(question, answer)))?;
        let prompt = model.chat_prompt(&[ChatMessage::user(rendered)]).map_err(model_err)?;
        let reply = model.generate(&prompt, &params, &mut |_| {}, None).map_err(model_err)?;
        match parse_free_text_label(&reply.text, &spec.outcomes) {
            None => failures += 1,
            Some(label) => same += usize::from(choice.as_deref() == Some(label)),
        }
    }
    let free_s = started.elapsed().as_secs_f64();
    let per_s = |seconds: f64| if seconds > 0.0 { items.len() as f64 / seconds } else { f64::NAN };
    Ok(JudgeBench {
        model: model.name.clone(),
        judge: spec.name.clone(),
        items: items.len(),
        choice_items_per_s: per_s(choice_s),
        choice_without_prefix_reuse_items_per_s: per_s(no_reuse_s),
        free_text_items_per_s: per_s(free_s),
        free_text_parse_failures: failures,
        free_text_same_label: same,
        choice_speedup: per_s(choice_s) / per_s(free_s),
    })
}

/// One layout's figures in the reading bench.
#[derive(Debug, Clone, Serialize)]
pub struct ReadingFigures {
    pub reading: Reading,
    /// Prompt tokens the model read per answer (shared stretches once; the chat template's
    /// text before the item is read once per run and counted in).
    pub tokens_read_per_answer: f64,
    /// tokens_read_per_answer / item_tokens_per_answer.
    pub read_ratio: f64,
    pub seconds_per_answer: f64,
    /// Processor time (user and system, all threads) per answer: on a machine others share,
    /// wall time measures the share this process got; this measures the work (it still
    /// counts threads spinning while they wait for each other). None where not measured.
    pub cpu_seconds_per_answer: Option<f64>,
    /// Verdicts that came out unscored.
    pub unscored: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReadingBench {
    pub model: String,
    pub judges: Vec<String>,
    pub answers: usize,
    /// The item's own tokens per answer: every input value the judges use, counted once.
    pub item_tokens_per_answer: f64,
    pub old: ReadingFigures,
    pub new: ReadingFigures,
    /// old seconds per answer / new seconds per answer.
    pub speedup: f64,
}

/// Judge `items` with `specs` in the old layout and the new, alternating item by item (so a
/// busy machine slows both alike).
pub fn bench_reading(model: Arc<LanguageModel>, specs: &[JudgeSpec], items: &[(Question, Answer)]) -> Result<ReadingBench, JudgeError> {
    let mut old = JudgePanel::new(specs.to_vec(), model.clone())?;
    old.reading = Reading::TemplateOnly;
    let mut new = JudgePanel::new(specs.to_vec(), model.clone())?;
    let (mut old_s, mut new_s, mut old_unscored, mut new_unscored, mut item_tokens) = (0.0, 0.0, 0, 0, 0usize);
    let (mut old_cpu, mut new_cpu) = (Some(0.0), Some(0.0));
    let timed = |panel: &mut JudgePanel, question, answer, seconds: &mut f64, cpu: &mut Option<f64>| {
        let (started, cpu_started) = (Instant::now(), process_cpu_seconds());
        let unscored = panel.judge(question, answer).values().filter(|v| v.error.is_some()).count();
        *seconds += started.elapsed().as_secs_f64();
        *cpu = match (*cpu, cpu_started, process_cpu_seconds()) {
            (Some(total), Some(from), Some(to)) => Some(total + to - from),
            _ => None,
        };
        unscored
    };
    for (question, answer) in items {
        item_tokens += new.item_tokens(question, answer);
        old_unscored += timed(&mut old, question, answer, &mut old_s, &mut old_cpu);
        new_unscored += timed(&mut new, question, answer, &mut new_s, &mut new_cpu);
    }
    let n = items.len().max(1) as f64;
    let figures = |panel: &JudgePanel, seconds: f64, cpu: Option<f64>, unscored: usize| ReadingFigures {
        reading: panel.reading,
        tokens_read_per_answer: panel.tokens_read as f64 / n,
        read_ratio: panel.tokens_read as f64 / item_tokens.max(1) as f64,
        seconds_per_answer: seconds / n,
        cpu_seconds_per_answer: cpu.map(|c| c / n),
        unscored,
    };
    Ok(ReadingBench {
        model: model.name.clone(),
        judges: new.names(),
        answers: items.len(),
        item_tokens_per_answer: item_tokens as f64 / n,
        old: figures(&old, old_s, old_cpu, old_unscored),
        new: figures(&new, new_s, new_cpu, new_unscored),
        speedup: old_s / new_s.max(1e-9),
    })
}

/// User and system time this process has used so far, over all its threads.
#[cfg(unix)]
fn process_cpu_seconds() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage struct through the pointer, which points at one.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

#[cfg(not(unix))]
fn process_cpu_seconds() -> Option<f64> {
    None
}

/// The allowed outcome a free-text reply names first (whole word, any case), as a lenient
/// parser of other tools would read it; None when it names none.
pub fn parse_free_text_label<'a>(reply: &str, outcomes: &'a [String]) -> Option<&'a str> {
    let lower = reply.to_lowercase();
    let is_word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    outcomes
        .iter()
        .filter_map(|outcome| {
            let needle = outcome.to_lowercase();
            lower.match_indices(&needle).find_map(|(at, _)| {
                let before = lower[..at].chars().next_back();
                let after = lower[at + needle.len()..].chars().next();
                (!is_word_char(before) && !is_word_char(after)).then_some((at, outcome.as_str()))
            })
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, outcome)| outcome)
}

#[cfg(test)]
mod tests {
    use super::parse_free_text_label;

    #[test]
    fn free_text_labels_are_read_as_whole_words() {
        let outcomes: Vec<String> = ["Awful", "Poor", "Good", "Perfect"].iter().map(|s| s.to_string()).collect();
        assert_eq!(parse_free_text_label("**Good** — mostly right", &outcomes), Some("Good"));
        assert_eq!(parse_free_text_label("perfect, not poor", &outcomes), Some("Perfect"));
        assert_eq!(parse_free_text_label("Goodness knows", &outcomes), None);
        assert_eq!(parse_free_text_label("I would rate it 3/4.", &outcomes), None);
        let yes_no: Vec<String> = vec!["No".into(), "Yes".into()];
        assert_eq!(parse_free_text_label("Yes.", &yes_no), Some("Yes"));
        assert_eq!(parse_free_text_label("Not sure", &yes_no), None);
    }
}
