//! Does a GPU give the CPU's results? The same weights run on the CPU and on the device over
//! the same tokens: a prompt pass (logits at every position, the matrix-matrix kernels) and
//! greedy decode steps fed the CPU's tokens (the one-row kernels and the KV cache). Each
//! position's logits are compared after removing their mean (softmax ignores it), as the
//! relative error ‖Δ‖/‖cpu‖, with the argmax.
//!
//! Why relative error and not bitwise: the CPU and a GPU run different kernels (the CPU
//! quantizes activations to 8 bits, CUDA may run f16 weights), so results differ by rounding.
//! A wrong kernel differs by the size of the logits themselves (or is not finite).

use candle_core::Device;
use serde::Serialize;

use super::device::{open_device, DeviceChoice};
use super::error::{LlmError, Result};
use super::transformer::{logits_rows, KvCache, TransformerWeights};

/// Largest relative error (‖Δ‖/‖cpu‖ at one position) still called agreement. Measured on an
/// H100 (docs/gpu.md): correct kernels give at most 0.06 on synthetic weights and 0.24 on
/// SmolLM2's real file, whose outlier activations make the CPU's 8-bit activations the larger
/// error; logits of unrelated weights give about 1.4 (√2), a kernel reading garbage more.
pub const AGREEMENT_LIMIT: f64 = 0.5;

/// Greedy decode steps compared after the prompt.
pub const DECODE_STEPS: usize = 16;

/// One comparison of a device with the CPU.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceAgreement {
    pub device: String,
    pub prompt_tokens: usize,
    pub prompt: PositionsCompared,
    pub decode: PositionsCompared,
    /// Greedy tokens the CPU chose, and how many of the device's choices (fed the CPU's
    /// tokens) were the same.
    pub cpu_greedy: Vec<u32>,
    pub agrees: bool,
}

/// Logits compared at a set of positions.
#[derive(Debug, Clone, Serialize)]
pub struct PositionsCompared {
    pub positions: usize,
    /// Largest and median relative error over the positions.
    pub max_relative_error: f64,
    pub median_relative_error: f64,
    /// Positions where the device's top token is the CPU's.
    pub same_argmax: usize,
    /// Positions where the device gave a logit that is not finite.
    pub not_finite: usize,
}

impl PositionsCompared {
    fn agrees(&self) -> bool {
        self.not_finite == 0 && self.max_relative_error <= AGREEMENT_LIMIT
    }
}

/// Run `tokens` and [`DECODE_STEPS`] greedy steps on the CPU and on `device` with the weights
/// `load` makes for each, and compare.
pub fn compare_with_cpu(
    load: &dyn Fn(&Device) -> Result<TransformerWeights>,
    tokens: &[u32],
    device: DeviceChoice,
) -> Result<DeviceAgreement> {
    if tokens.is_empty() {
        return Err(LlmError::Invalid("no tokens to compare on".into()));
    }
    let cpu = run(&load(&open_device(DeviceChoice::Cpu)?)?, tokens, None)?;
    let other = run(&load(&open_device(device)?)?, tokens, Some(&cpu.greedy))?;
    let prompt = compare_positions(&cpu.prompt, &other.prompt);
    let decode = compare_positions(&cpu.decode, &other.decode);
    Ok(DeviceAgreement {
        device: device.to_string(),
        prompt_tokens: tokens.len(),
        agrees: prompt.agrees() && decode.agrees(),
        prompt,
        decode,
        cpu_greedy: cpu.greedy,
    })
}

struct Logits {
    prompt: Vec<Vec<f32>>,
    decode: Vec<Vec<f32>>,
    greedy: Vec<u32>,
}

/// The prompt's logits at every position, then greedy steps: each step's token is `follow`'s
/// where given (so both devices see the same sequence), else this run's own argmax.
fn run(weights: &TransformerWeights, tokens: &[u32], follow: Option<&[u32]>) -> Result<Logits> {
    if weights.config.context_length < tokens.len() + DECODE_STEPS {
        return Err(LlmError::Invalid(format!(
            "{} tokens and {DECODE_STEPS} steps exceed the context length {}",
            tokens.len(),
            weights.config.context_length
        )));
    }
    let mut cache: KvCache = weights.new_cache();
    let prompt = logits_rows(&weights.forward(tokens, &mut cache, true)?)?;
    let mut last = prompt.last().cloned().unwrap_or_default();
    let mut decode = Vec::with_capacity(DECODE_STEPS);
    let mut greedy = Vec::with_capacity(DECODE_STEPS);
    for step in 0..DECODE_STEPS {
        let next = match follow {
            Some(tokens) => tokens.get(step).copied().unwrap_or(0),
            None => argmax(&last) as u32,
        };
        greedy.push(next);
        let rows = logits_rows(&weights.forward(&[next], &mut cache, false)?)?;
        last = rows.into_iter().next().unwrap_or_default();
        decode.push(last.clone());
    }
    Ok(Logits { prompt, decode, greedy })
}

fn compare_positions(cpu: &[Vec<f32>], other: &[Vec<f32>]) -> PositionsCompared {
    let mut errors = Vec::with_capacity(cpu.len());
    let mut same_argmax = 0;
    let mut not_finite = 0;
    for (a, b) in cpu.iter().zip(other) {
        if b.iter().any(|x| !x.is_finite()) {
            not_finite += 1;
            errors.push(f64::INFINITY);
            continue;
        }
        errors.push(relative_error(a, b));
        if argmax(a) == argmax(b) {
            same_argmax += 1;
        }
    }
    let max = errors.iter().copied().fold(0.0, f64::max);
    errors.sort_by(f64::total_cmp);
    let median = errors.get(errors.len() / 2).copied().unwrap_or(0.0);
    PositionsCompared {
        positions: cpu.len(),
        max_relative_error: max,
        median_relative_error: median,
        same_argmax,
        not_finite,
    }
}

/// ‖(b − mean b) − (a − mean a)‖ / ‖a − mean a‖, in f64.
fn relative_error(reference: &[f32], other: &[f32]) -> f64 {
    let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    let (ma, mb) = (mean(reference), mean(other));
    let mut diff = 0.0;
    let mut norm = 0.0;
    for (&a, &b) in reference.iter().zip(other) {
        let (a, b) = (a as f64 - ma, b as f64 - mb);
        diff += (b - a) * (b - a);
        norm += a * a;
    }
    if norm == 0.0 {
        return if diff == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (diff / norm).sqrt()
}

fn argmax(row: &[f32]) -> usize {
    row.iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shift_of_all_logits_is_no_error_and_a_scrambled_row_is_a_large_one() {
        let a = [1.0f32, 2.0, 3.0, -1.0];
        let shifted: Vec<f32> = a.iter().map(|x| x + 5.0).collect();
        assert!(relative_error(&a, &shifted) < 1e-12);
        let scrambled = [3.0f32, -1.0, 1.0, 2.0];
        assert!(relative_error(&a, &scrambled) > 1.0);
        let close = [1.01f32, 2.0, 2.99, -1.0];
        let e = relative_error(&a, &close);
        assert!(e > 0.0 && e < 0.01, "{e}");
    }

    #[test]
    fn positions_with_non_finite_logits_never_agree() {
        let cpu = vec![vec![0.0f32, 1.0], vec![1.0, 0.0]];
        let gpu = vec![vec![0.0f32, 1.0], vec![f32::NAN, 0.0]];
        let c = compare_positions(&cpu, &gpu);
        assert_eq!((c.not_finite, c.same_argmax), (1, 1));
        assert!(!c.agrees());
        assert!(compare_positions(&cpu, &cpu).agrees());
    }

    /// On the CPU against itself, a synthetic model agrees exactly: the comparison runs the
    /// real loader and forward pass end to end.
    #[test]
    fn the_cpu_agrees_with_itself() {
        let arch = super::super::synthetic::SyntheticArch {
            layers: 2,
            vocab: 512,
            ..super::super::synthetic::SMOLLM2_135M
        };
        let load = |d: &Device| arch.weights(d, 7);
        let tokens: Vec<u32> = (0..24).map(|i| (i * 37 % 512) as u32).collect();
        let a = compare_with_cpu(&load, &tokens, DeviceChoice::Cpu).unwrap();
        assert!(a.agrees);
        assert_eq!(a.prompt.positions, 24);
        assert_eq!(a.decode.positions, DECODE_STEPS);
        assert_eq!(a.prompt.max_relative_error, 0.0);
        assert_eq!(a.decode.same_argmax, DECODE_STEPS);
    }
}
