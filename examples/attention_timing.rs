//! Times attention over the KV cache on the CPU two ways on the default models' shapes: the
//! one-pass kernel the runtime uses (`llm::cached_attention`) and the tensor operations it
//! replaced (scaled queries, scores, an additive causal mask built beforehand and not timed,
//! softmax, values). Queries, keys
//! and values are pseudo-random; each shape is a prompt read from scratch and, for decode, one
//! token after it. The two ways take turns for 0.5 s each, round after round, and each keeps its
//! fastest run, so load on a shared machine falls on both alike.
//!
//! Usage: cargo run --example attention_timing   (threads: candle's, RAYON_NUM_THREADS)

use std::time::{Duration, Instant};

use assay::llm::cached_attention::causal_attention;
use candle_core::{Device, Tensor};

fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0
        })
        .collect()
}

/// The additive causal mask of the tensor operations, built once per forward step (not timed).
fn causal_mask(rep: usize, seq: usize, past: usize) -> candle_core::Result<Option<Tensor>> {
    let positions = past + seq;
    if seq == 1 {
        return Ok(None);
    }
    let mask: Vec<f32> = (0..rep * seq)
        .flat_map(|r| (0..positions).map(move |j| if j <= past + r % seq { 0.0 } else { f32::NEG_INFINITY }))
        .collect();
    Tensor::from_vec(mask, (rep * seq, positions), &Device::Cpu).map(Some)
}

/// The tensor operations the runtime ran before the kernel (src/llm/transformer.rs's fallback).
fn by_tensor_operations(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>, scale: f64) -> candle_core::Result<Tensor> {
    let (_, heads, seq, d) = q.dims4()?;
    let kv_heads = k.dim(1)?;
    let q = (q * scale)?.reshape((1, kv_heads, heads / kv_heads * seq, d))?;
    let mut att = q.matmul(&k.t()?)?;
    if let Some(mask) = mask {
        att = att.broadcast_add(mask)?;
    }
    let att = candle_nn::ops::softmax_last_dim(&att.contiguous()?)?;
    att.matmul(v)?.reshape((1, heads, seq, d))?.transpose(1, 2)?.reshape((1, seq, heads * d))
}

/// The fastest of the runs of `f` made in turns with the other way, in seconds.
fn fastest(ways: &mut [(&str, Box<dyn FnMut() + '_>)]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; ways.len()];
    for _ in 0..4 {
        for (i, (_, f)) in ways.iter_mut().enumerate() {
            let until = Instant::now() + Duration::from_millis(500);
            while Instant::now() < until {
                let start = Instant::now();
                f();
                best[i] = best[i].min(start.elapsed().as_secs_f64());
            }
        }
    }
    best
}

fn main() -> candle_core::Result<()> {
    // (model, query heads, KV heads, head width)
    let models = [("qwen2.5-coder-1.5b", 12, 2, 128), ("qwen2.5-coder-0.5b", 14, 2, 64), ("smollm2-135m", 9, 3, 64), ("gemma3-270m", 4, 1, 256)];
    println!("{:<20} {:>6} {:>6} {:>12} {:>12} {:>7}", "model", "past", "seq", "kernel ms", "tensor ms", "ratio");
    for (name, heads, kv_heads, d) in models {
        for (past, seq) in [(0, 512), (0, 860), (860, 1), (2048, 1)] {
            let positions = past + seq;
            let q = Tensor::from_vec(pseudo_random(heads * seq * d, 1), (1, heads, seq, d), &Device::Cpu)?;
            let k = Tensor::from_vec(pseudo_random(kv_heads * positions * d, 2), (1, kv_heads, positions, d), &Device::Cpu)?;
            let v = Tensor::from_vec(pseudo_random(kv_heads * positions * d, 3), (1, kv_heads, positions, d), &Device::Cpu)?;
            let scale = 1.0 / (d as f64).sqrt();
            let mask = causal_mask(heads / kv_heads, seq, past)?;
            let mut ways: Vec<(&str, Box<dyn FnMut()>)> = vec![
                ("kernel", Box::new(|| drop(causal_attention(&q, &k, &v, past, None, scale).expect("attention").expect("a layout the kernel reads")))),
                ("tensor", Box::new(|| drop(by_tensor_operations(&q, &k, &v, mask.as_ref(), scale).expect("tensor attention")))),
            ];
            let best = fastest(&mut ways);
            println!("{name:<20} {past:>6} {seq:>6} {:>12.3} {:>12.3} {:>7.2}", best[0] * 1e3, best[1] * 1e3, best[1] / best[0]);
        }
    }
    Ok(())
}
