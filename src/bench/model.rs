//! Speed and memory figures of the model runtime on one model: prompt processing, decoding,
//! option scoring with and without prefix reuse, peak memory. `assay bench` prints them.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use assay_kernels::isa::Isa;

use crate::llm::device::{cpu_kernels, CpuKernels};
use crate::llm::error::{LlmError, Result};
use crate::llm::model::LanguageModel;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelBench {
    pub model: String,
    pub threads: usize,
    pub prompt_tokens: usize,
    /// Tokens per second reading a prompt of `prompt_tokens` tokens (the median round).
    pub prompt_tok_per_s: f64,
    pub decode_tokens: usize,
    /// Tokens per second generating `decode_tokens` tokens one by one after a short prompt
    /// (the median round).
    pub decode_tok_per_s: f64,
    /// Each round's figures, ours and llama.cpp's measured one after the other, in turn.
    #[serde(default)]
    pub rounds: Vec<BenchRound>,
    pub scoring_prompt_tokens: usize,
    pub scoring_options: usize,
    /// Seconds to score the options after the prompt, reading the prompt once.
    pub scoring_with_prefix_reuse_s: f64,
    /// Seconds to score the options reading prompt + option from scratch for each.
    pub scoring_without_prefix_reuse_s: f64,
    /// Peak resident memory of the process so far (VmHWM), in MiB.
    pub peak_rss_mib: Option<f64>,
    /// The path of our CPU kernels the matrices ran on (`avx512`, `avx2`, …; docs/runtime.md).
    #[serde(default)]
    pub cpu_path: String,
    /// Whether `ASSAY_CPU` forced that path (else it is the fastest this CPU runs).
    #[serde(default)]
    pub cpu_path_forced: bool,
    /// The llama-bench program compared with: `llama-bench` on the default path,
    /// `llama-bench-avx2` (llama.cpp built for AVX2 alone) on a forced AVX2 path.
    #[serde(default)]
    pub llama_bench_program: String,
    /// llama.cpp on the same file and thread count, when that program is on the PATH.
    pub llama_cpp: Option<LlamaCppBench>,
}

/// One round of the speed figures: ours, then llama.cpp's straight after on the same file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRound {
    pub prompt_tok_per_s: f64,
    pub decode_tok_per_s: f64,
    /// llama-bench's figures in this round, when it ran.
    pub llama_cpp_prompt_tok_per_s: Option<f64>,
    pub llama_cpp_decode_tok_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LlamaCppBench {
    /// llama-bench's median round.
    pub prompt_tok_per_s: f64,
    pub decode_tok_per_s: f64,
    /// Ours divided by llama.cpp's (1.0 = as fast): the median of the rounds' ratios, each
    /// taken between two runs minutes apart at most, so a slow spell of a shared machine
    /// lands on both sides of one ratio rather than on one side of the whole comparison.
    pub prompt_ratio: f64,
    pub decode_ratio: f64,
    /// The lowest and highest of the rounds' ratios: the noise the median sits in.
    #[serde(default)]
    pub prompt_ratio_range: Option<(f64, f64)>,
    #[serde(default)]
    pub decode_ratio_range: Option<(f64, f64)>,
    /// llama-bench's peak resident memory (its weights, KV cache and compute buffers), MiB.
    pub peak_rss_mib: Option<f64>,
    /// Our peak RSS divided by llama-bench's (1.0 = as much memory).
    pub rss_ratio: Option<f64>,
}

/// The kernel paths `assay bench` measures besides the default one, by `ASSAY_CPU` name: AVX2
/// where the CPU has a wider path (AVX-512, AVX-VNNI), so one machine shows what a laptop
/// without AVX-512 gets, against llama.cpp built for the same instructions.
pub fn narrower_paths_to_compare() -> Vec<&'static str> {
    let best = Isa::best();
    if Isa::Avx2.supported() && best != Isa::Avx2 {
        vec![Isa::Avx2.name()]
    } else {
        Vec::new()
    }
}

/// The llama-bench program for a kernel path: llama.cpp's build for this CPU (`llama-bench`)
/// unless `ASSAY_CPU` forced a narrower path, then the build for that path alone
/// (`llama-bench-avx2`; scripts/llm_build_llama_cpp.sh DIR avx2 builds it), so both sides of
/// a ratio use the same instruction set.
pub fn llama_bench_program(kernels: CpuKernels) -> String {
    if kernels.forced && kernels.isa != Isa::best() {
        format!("llama-bench-{}", kernels.isa.name())
    } else {
        "llama-bench".to_string()
    }
}

/// Run `program` (llama.cpp's llama-bench; see scripts/llm_build_llama_cpp.sh) on the same
/// file. None when it is not on the PATH or fails: the comparison is optional. Returns prompt
/// and decode tokens per second and llama-bench's peak RSS in MiB where the OS reports it.
pub fn llama_cpp_bench(program: &str, path: &std::path::Path, threads: usize, prompt: usize, decode: usize) -> Option<(f64, f64, Option<f64>)> {
    let mut child = std::process::Command::new(program)
        .arg("-m")
        .arg(path)
        .args(["-t", &threads.to_string(), "-p", &prompt.to_string(), "-n", &decode.to_string()])
        .args(["-r", "1", "-o", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).map(|_| bytes)
    });
    // The peak is sampled while it runs: VmHWM only grows, so the last reading before it
    // exits misses at most the last 20 ms. (getrusage's figure for children is no use here:
    // it counts the memory of this process that the child was forked from.)
    let mut peak_kib = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {
                peak_kib = vm_hwm_kib(&format!("/proc/{}/status", child.id())).or(peak_kib);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(_) => return None,
        }
    };
    let out = reader.join().ok()?.ok()?;
    if !status.success() {
        return None;
    }
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out).ok()?;
    let mut prompt_ts = None;
    let mut decode_ts = None;
    for row in rows {
        let ts = row.get("avg_ts")?.as_f64()?;
        if row.get("n_gen").and_then(|v| v.as_u64()) == Some(0) {
            prompt_ts = Some(ts);
        } else if row.get("n_prompt").and_then(|v| v.as_u64()) == Some(0) {
            decode_ts = Some(ts);
        }
    }
    Some((prompt_ts?, decode_ts?, peak_kib.map(|k| k / 1024.0)))
}

/// Token ids of a synthetic prompt of exactly `n` tokens (prose repeated, then cut).
fn prompt_tokens(model: &LanguageModel, n: usize) -> Result<Vec<u32>> {
    let paragraph = "The water filter must be replaced every six months. To reset the indicator, \
        hold the RESET button for five seconds until the LED blinks twice. If the LED stays red, \
        check that the cartridge is seated and the valve below the sink is open. ";
    let mut text = String::new();
    let mut ids = Vec::new();
    while ids.len() < n {
        text.push_str(paragraph);
        ids = model.encode_prompt(&text)?;
    }
    ids.truncate(n);
    Ok(ids)
}

/// Rounds of the speed figures: enough for a median to stand against one slow spell.
pub const ROUNDS: usize = 3;

/// Measure `model` (prompt 512 tokens, decode 128, scoring 4 options after 600 tokens).
pub fn bench_model(model: &LanguageModel) -> Result<ModelBench> {
    bench_model_with(model, 512, 128, 600, ROUNDS)
}

pub fn bench_model_with(
    model: &LanguageModel,
    prompt_len: usize,
    decode_len: usize,
    scoring_len: usize,
    rounds: usize,
) -> Result<ModelBench> {
    if prompt_len.max(scoring_len + 16) > model.context_length() {
        return Err(LlmError::Invalid(format!(
            "benchmark prompts do not fit {}'s context of {}",
            model.name,
            model.context_length()
        )));
    }
    // Warm-up, as llama-bench does: the first calls allocate, fault pages in, and candle packs
    // each quantized matrix for the kernels of the row counts it sees (one set of tiles for
    // a few rows, another, for AMX, from 32 rows on). A short prompt and a full one take both.
    let prompt = prompt_tokens(model, prompt_len)?;
    model.prefill(&prompt_tokens(model, 16)?)?;
    model.prefill(&prompt)?;

    let threads = candle_core::utils::get_num_threads();
    let kernels = cpu_kernels()?;
    let program = llama_bench_program(kernels);
    // Ours and llama.cpp's in turn, round after round: on a shared machine the speed of memory
    // drifts by 10-20% over minutes, and one measurement of each side, minutes apart, puts
    // that drift into the ratio.
    let mut measured = Vec::with_capacity(rounds.max(1));
    let mut llama_peak_mib: Option<f64> = None;
    let mut llama_runs = true;
    for _ in 0..rounds.max(1) {
        let (prompt_tok_per_s, decode_tok_per_s) = our_speed(model, &prompt, decode_len)?;
        let theirs = if llama_runs { llama_cpp_bench(&program, &model.path, threads, prompt_len, decode_len) } else { None };
        // Not on the PATH (or failing) once is enough to know.
        llama_runs = theirs.is_some();
        if let Some((_, _, Some(peak))) = theirs {
            llama_peak_mib = Some(llama_peak_mib.map_or(peak, |p: f64| p.max(peak)));
        }
        measured.push(BenchRound {
            prompt_tok_per_s,
            decode_tok_per_s,
            llama_cpp_prompt_tok_per_s: theirs.map(|t| t.0),
            llama_cpp_decode_tok_per_s: theirs.map(|t| t.1),
        });
    }

    let options = [" Awful", " Poor", " Good", " Perfect"];
    let scoring_prompt = prompt_tokens(model, scoring_len)?;
    let start = Instant::now();
    let prefix = model.prefill(&scoring_prompt)?;
    model.score_options(&prefix, &options)?;
    let with_reuse = start.elapsed().as_secs_f64();

    let start = Instant::now();
    for option in options {
        let mut ids = scoring_prompt.clone();
        let option_ids = model.encode_continuation(option)?;
        ids.extend_from_slice(&option_ids[..option_ids.len().saturating_sub(1)]);
        let state = model.prefill(&ids)?;
        // The last option token is scored from the final logits, as in `score_options`.
        std::hint::black_box(&state.next_logits);
    }
    let without_reuse = start.elapsed().as_secs_f64();

    let peak_rss = peak_rss_mib();
    let prompt_tok_per_s = median(measured.iter().map(|r| r.prompt_tok_per_s));
    let decode_tok_per_s = median(measured.iter().map(|r| r.decode_tok_per_s));
    let llama_cpp = llama_cpp_figures(&measured, peak_rss, llama_peak_mib);
    Ok(ModelBench {
        model: model.name.clone(),
        threads,
        prompt_tokens: prompt_len,
        prompt_tok_per_s,
        decode_tokens: decode_len,
        decode_tok_per_s,
        rounds: measured,
        scoring_prompt_tokens: scoring_len,
        scoring_options: options.len(),
        scoring_with_prefix_reuse_s: with_reuse,
        scoring_without_prefix_reuse_s: without_reuse,
        peak_rss_mib: peak_rss,
        cpu_path: kernels.isa.name().to_string(),
        cpu_path_forced: kernels.forced,
        llama_bench_program: program,
        llama_cpp,
    })
}

/// One round of ours: a prompt of `prompt` read whole, then `decode_len` tokens one at a
/// time after a short prompt; tokens per second of each.
fn our_speed(model: &LanguageModel, prompt: &[u32], decode_len: usize) -> Result<(f64, f64)> {
    let start = Instant::now();
    model.prefill(prompt)?;
    let prompt_s = start.elapsed().as_secs_f64();

    let short = prompt_tokens(model, 16)?;
    let mut state = model.prefill(&short)?;
    let start = Instant::now();
    for i in 0..decode_len {
        // A fixed token stream: speed does not depend on which tokens are fed.
        let next = short[i % short.len()];
        model.extend_in_place(&mut state, &[next])?;
    }
    let decode_s = start.elapsed().as_secs_f64();
    Ok((prompt.len() as f64 / prompt_s, decode_len as f64 / decode_s))
}

/// llama.cpp's medians and the ratios over the rounds in which llama-bench ran (None when it
/// ran in none), with the two sides' peak memory (MiB) when known.
pub fn llama_cpp_figures(rounds: &[BenchRound], our_peak_mib: Option<f64>, their_peak_mib: Option<f64>) -> Option<LlamaCppBench> {
    let paired: Vec<(&BenchRound, f64, f64)> = rounds
        .iter()
        .filter_map(|r| Some((r, r.llama_cpp_prompt_tok_per_s?, r.llama_cpp_decode_tok_per_s?)))
        .collect();
    if paired.is_empty() {
        return None;
    }
    let prompt_ratios: Vec<f64> = paired.iter().map(|(r, p, _)| r.prompt_tok_per_s / p).collect();
    let decode_ratios: Vec<f64> = paired.iter().map(|(r, _, d)| r.decode_tok_per_s / d).collect();
    Some(LlamaCppBench {
        prompt_tok_per_s: median(paired.iter().map(|t| t.1)),
        decode_tok_per_s: median(paired.iter().map(|t| t.2)),
        prompt_ratio: median(prompt_ratios.iter().copied()),
        decode_ratio: median(decode_ratios.iter().copied()),
        prompt_ratio_range: range(&prompt_ratios),
        decode_ratio_range: range(&decode_ratios),
        peak_rss_mib: their_peak_mib,
        rss_ratio: our_peak_mib.zip(their_peak_mib).map(|(ours, theirs)| ours / theirs),
    })
}

/// The middle value (the mean of the middle two for an even count); NaN when empty.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn range(values: &[f64]) -> Option<(f64, f64)> {
    let lowest = values.iter().copied().min_by(f64::total_cmp)?;
    let highest = values.iter().copied().max_by(f64::total_cmp)?;
    Some((lowest, highest))
}

/// VmHWM from /proc/self/status (Linux), in MiB.
pub fn peak_rss_mib() -> Option<f64> {
    vm_hwm_kib("/proc/self/status").map(|k| k / 1024.0)
}

fn vm_hwm_kib(status_file: &str) -> Option<f64> {
    let status = std::fs::read_to_string(status_file).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Speed of a synthetic model (random weights of a real architecture; see
/// [`crate::llm::synthetic`]) on one device.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticBench {
    pub arch: crate::llm::synthetic::SyntheticArch,
    pub parameters: usize,
    pub device: String,
    /// CPU threads candle uses (matters on the CPU only).
    pub threads: usize,
    /// Seconds to make, quantize and load the random weights.
    pub setup_s: f64,
    pub prompt_tokens: usize,
    /// Tokens per second reading a prompt of `prompt_tokens` tokens (one sequence).
    pub prompt_tok_per_s: f64,
    pub decode: Vec<DecodeBench>,
    pub peak_rss_mib: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DecodeBench {
    /// Sequences decoded side by side.
    pub batch: usize,
    /// Steps timed (each adds one token to every sequence).
    pub steps: usize,
    /// Tokens per second over all sequences (batch × steps / seconds).
    pub tok_per_s: f64,
    /// Milliseconds per step.
    pub step_ms: f64,
}

/// Measure prompt processing (`prompt_len` tokens) and decoding (`decode_len` steps after a
/// 32-token prompt, at each batch size) on random weights of `arch`. Every step brings the
/// logits back to the host, as generation does before choosing the next token.
pub fn bench_synthetic(
    arch: &crate::llm::synthetic::SyntheticArch,
    device: crate::llm::device::DeviceChoice,
    batches: &[usize],
    prompt_len: usize,
    decode_len: usize,
) -> Result<SyntheticBench> {
    let dev = crate::llm::device::open_device(device)?;
    let start = Instant::now();
    let weights = arch.weights(&dev, 42)?;
    let setup_s = start.elapsed().as_secs_f64();
    let vocab = arch.vocab as u32;
    // Token ids spread over the vocabulary; which ones does not change the speed.
    let ids = |n: usize, salt: usize| -> Vec<u32> {
        (0..n).map(|i| ((i * 7919 + salt * 104_729) as u32) % vocab).collect()
    };
    let sync = |logits: &candle_core::Tensor| -> Result<()> {
        std::hint::black_box(logits.flatten_all()?.to_vec1::<f32>()?);
        Ok(())
    };

    // Warm-up: module loading, kernel compilation, allocator pools, page faults.
    let mut cache = weights.new_cache();
    sync(&weights.forward(&ids(prompt_len.min(64), 1), &mut cache, false)?)?;
    for step in 0..4 {
        sync(&weights.forward(&ids(1, step), &mut cache, false)?)?;
    }

    let prompt = ids(prompt_len, 2);
    let mut cache = weights.new_cache();
    let start = Instant::now();
    sync(&weights.forward(&prompt, &mut cache, false)?)?;
    let prompt_tok_per_s = prompt_len as f64 / start.elapsed().as_secs_f64();

    let mut decode = Vec::new();
    for &batch in batches {
        if batch == 0 {
            return Err(LlmError::Invalid("batch size must be at least 1".into()));
        }
        let mut cache = weights.new_cache();
        sync(&weights.forward_batch(&ids(32 * batch, 3), batch, &mut cache, false)?)?;
        // One untimed step at this batch size: new shapes may load kernels or grow pools.
        sync(&weights.forward_batch(&ids(batch, 4), batch, &mut cache, false)?)?;
        let start = Instant::now();
        for step in 0..decode_len {
            sync(&weights.forward_batch(&ids(batch, step + 5), batch, &mut cache, false)?)?;
        }
        let seconds = start.elapsed().as_secs_f64();
        decode.push(DecodeBench {
            batch,
            steps: decode_len,
            tok_per_s: (batch * decode_len) as f64 / seconds,
            step_ms: seconds * 1000.0 / decode_len as f64,
        });
    }
    Ok(SyntheticBench {
        arch: arch.clone(),
        parameters: arch.parameters(),
        device: device.to_string(),
        threads: candle_core::utils::get_num_threads(),
        setup_s,
        prompt_tokens: prompt_len,
        prompt_tok_per_s,
        decode,
        peak_rss_mib: peak_rss_mib(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(ours: (f64, f64), theirs: Option<(f64, f64)>) -> BenchRound {
        BenchRound {
            prompt_tok_per_s: ours.0,
            decode_tok_per_s: ours.1,
            llama_cpp_prompt_tok_per_s: theirs.map(|t| t.0),
            llama_cpp_decode_tok_per_s: theirs.map(|t| t.1),
        }
    }

    #[test]
    fn the_ratio_is_the_median_of_each_rounds_own_ratio() {
        // A slow spell in round 2 slows both sides: its ratio is still 1.
        let rounds = [
            round((100.0, 30.0), Some((100.0, 30.0))),
            round((50.0, 15.0), Some((50.0, 15.0))),
            round((110.0, 33.0), Some((100.0, 30.0))),
        ];
        let l = llama_cpp_figures(&rounds, None, None).expect("llama.cpp ran in every round");
        assert_eq!(l.prompt_ratio, 1.0);
        assert_eq!(l.decode_ratio, 1.0);
        assert_eq!(l.prompt_ratio_range, Some((1.0, 1.1)));
        assert_eq!(l.prompt_tok_per_s, 100.0);
        // Medians of the sides alone would give 100/100 here too, but not in general:
        let skewed = [round((90.0, 1.0), Some((100.0, 1.0))), round((60.0, 1.0), Some((50.0, 1.0)))];
        let l = llama_cpp_figures(&skewed, None, None).expect("ran");
        assert!((l.prompt_ratio - (0.9 + 1.2) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn rounds_without_llama_cpp_give_no_comparison() {
        assert!(llama_cpp_figures(&[round((1.0, 1.0), None)], Some(100.0), Some(50.0)).is_none());
        assert!(llama_cpp_figures(&[], None, None).is_none());
        // A round where it failed is left out, not counted as zero.
        let l = llama_cpp_figures(&[round((80.0, 8.0), Some((100.0, 10.0))), round((1.0, 1.0), None)], Some(300.0), Some(200.0))
            .expect("one round ran");
        assert_eq!(l.prompt_ratio, 0.8);
        assert_eq!(l.decode_ratio_range, Some((0.8, 0.8)));
        assert_eq!(l.peak_rss_mib, Some(200.0));
        assert_eq!(l.rss_ratio, Some(1.5));
        // Memory unknown on one side: no memory ratio.
        let l = llama_cpp_figures(&[round((80.0, 8.0), Some((100.0, 10.0)))], Some(300.0), None).expect("ran");
        assert_eq!(l.rss_ratio, None);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), 2.0);
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), 2.5);
        assert!(median(std::iter::empty()).is_nan());
    }
}
