//! Times every kernel path this CPU runs on matrices of the default models' shapes, so the
//! paths can be compared on one machine: `cargo run --release -p assay-kernels --example
//! kernel_paths [threads] [type]` (2 threads unless given; only products of `type`, e.g. Q8_0,
//! when given: Q4K, Q6K, Q8_0, Q4_1, `step` for a 1.5B decode step's products, or `attention` for one layer's
//! attention over a prompt). Weights and activations are
//! pseudo-random. The paths take turns, round after round for 0.3 s per path, and each
//! path's fastest run is kept: on a shared machine, load then falls on all paths alike.

use assay_kernels::causal_attention::{self, AttentionShape, HeadRows};
use assay_kernels::isa::Isa;
use assay_kernels::k_quants::{self, InterleavedKQuant, Q8KRows, WeightType, QK_K};
use assay_kernels::q4_1::{self, Q4Rows};
use assay_kernels::q8_0::{self, Q8Rows};
use std::ops::Range;
use std::time::{Duration, Instant};

/// Splits `0..n` into one contiguous part per thread.
fn run_parallel(threads: usize, n: usize, f: &(dyn Fn(Range<usize>) + Sync)) {
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let part = (t * per).min(n)..((t + 1) * per).min(n);
            s.spawn(move || f(part));
        }
    });
}

fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// Random bytes for K-quant blocks, with small positive f16 scales where the type keeps them.
fn k_quant_weights(ty: WeightType, rows: usize, width: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = pseudo_random(rows * width / QK_K * ty.block_bytes(), 9).iter().map(|v| (v * 127.0 + 128.0) as u8).collect();
    let d = half::f16::from_f32(0.002).to_le_bytes();
    for block in bytes.chunks_exact_mut(ty.block_bytes()) {
        match ty {
            WeightType::Q4K => {
                block[0..2].copy_from_slice(&d);
                block[2..4].copy_from_slice(&d);
            }
            WeightType::Q6K => block[208..210].copy_from_slice(&d),
        }
    }
    bytes
}

/// The fastest run of each of `paths` (None where `skip` says so), in milliseconds, the
/// paths taking turns.
fn fastest_by_turns(paths: &[Isa], skip: impl Fn(Isa) -> bool, mut run: impl FnMut(Isa)) -> Vec<Option<f64>> {
    let mut best = vec![Duration::MAX; paths.len()];
    let start = Instant::now();
    let budget = Duration::from_millis(300) * paths.len() as u32;
    while start.elapsed() < budget {
        for (isa, best) in paths.iter().zip(&mut best) {
            if !skip(*isa) {
                let t = Instant::now();
                run(*isa);
                *best = (*best).min(t.elapsed());
            }
        }
    }
    paths.iter().zip(best).map(|(isa, d)| (!skip(*isa)).then_some(d.as_secs_f64() * 1e3)).collect()
}

fn cells(times: &[Option<f64>]) -> String {
    times.iter().map(|t| t.map_or("–".to_string(), |ms| format!("{ms:.2}"))).collect::<Vec<_>>().join(" | ")
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|t| t.parse().ok()).unwrap_or(2);
    let only = std::env::args().nth(2);
    let wanted = |name: &str| only.as_deref().is_none_or(|only| only == name);
    let parallel = |n: usize, f: &(dyn Fn(Range<usize>) + Sync)| run_parallel(threads, n, f);
    let paths = Isa::all_supported();
    let names: Vec<&str> = paths.iter().map(|isa| isa.name()).collect();
    println!("{threads} threads; ms per product (activation quantization included)");
    println!("| product | rows | {} |", names.join(" | "));
    println!("|---|---:|{}", "---:|".repeat(paths.len()));
    let k_shapes = [(WeightType::Q4K, 17920, 1536), (WeightType::Q4K, 1536, 8960), (WeightType::Q6K, 1536, 8960)];
    for (ty, n, width) in k_shapes.into_iter().filter(|(ty, _, _)| wanted(&format!("{ty:?}"))) {
        let w = k_quant_weights(ty, n, width);
        for m in [1, 7, 8, 64, 512] {
            let x = pseudo_random(m * width, 3);
            let mut dst = vec![0f32; m * n];
            // The scalar path is for correctness: timed on one row only.
            let times = fastest_by_turns(&paths, |isa| isa == Isa::Scalar && m > 1, |isa| {
                let a = Q8KRows::quantize(&x, m, width, &parallel).expect("sizes agree");
                k_quants::matmul(isa, ty, &w, n, &a, &mut dst, &parallel).expect("sizes agree");
            });
            println!("| {ty:?} {n}×{width} | {m} | {} |", cells(&times));
        }
        // The same weights stored 16 rows interleaved, as the x86 paths hold them.
        let interleaved = InterleavedKQuant::from_file_bytes(ty, &w, n, width / QK_K, &parallel).expect("sizes agree");
        for m in [1, 7, 8, 64, 512] {
            let x = pseudo_random(m * width, 3);
            let mut dst = vec![0f32; m * n];
            let times = fastest_by_turns(&paths, |isa| !InterleavedKQuant::runs_on(isa), |isa| {
                let a = Q8KRows::quantize(&x, m, width, &parallel).expect("sizes agree");
                interleaved.matmul(isa, &a, &mut dst, &parallel).expect("sizes agree");
            });
            println!("| {ty:?} {n}×{width} interleaved | {m} | {} |", cells(&times));
        }
    }
    // A decode step of the 1.5B model's K-quant products: 28 layers of one-row products over
    // 0.8 GB of weights (q, k, o and gate+up Q4_K; v and down Q6_K), streamed from memory as
    // the model streams them, in the file's layout and interleaved.
    if wanted("step") {
        let layer_shapes = [(WeightType::Q4K, 1536, 1536), (WeightType::Q4K, 256, 1536), (WeightType::Q6K, 256, 1536), (WeightType::Q4K, 1536, 1536), (WeightType::Q4K, 17920, 1536), (WeightType::Q6K, 1536, 8960)];
        let layers: Vec<(WeightType, usize, usize, Vec<u8>)> = (0..28).flat_map(|_| layer_shapes).map(|(ty, n, width)| (ty, n, width, k_quant_weights(ty, n, width))).collect();
        let interleaved: Vec<InterleavedKQuant> = layers.iter().map(|(ty, n, width, w)| InterleavedKQuant::from_file_bytes(*ty, w, *n, width / QK_K, &parallel).expect("sizes agree")).collect();
        let inputs: Vec<Q8KRows> = [1536, 8960].iter().map(|&width| Q8KRows::quantize(&pseudo_random(width, 4), 1, width, &parallel).expect("sizes agree")).collect();
        let input = |width: usize| &inputs[usize::from(width != 1536)];
        let mut dst = vec![0f32; 17920];
        let file = fastest_by_turns(&paths, |isa| isa == Isa::Scalar, |isa| {
            for (ty, n, width, w) in &layers {
                k_quants::matmul(isa, *ty, w, *n, input(*width), &mut dst[..*n], &parallel).expect("sizes agree");
            }
        });
        println!("| 1.5B decode step, 168 K-quant products | 1 | {} |", cells(&file));
        let stored = fastest_by_turns(&paths, |isa| !InterleavedKQuant::runs_on(isa), |isa| {
            for w in &interleaved {
                w.matmul(isa, input(w.blocks_per_row * QK_K), &mut dst[..w.rows], &parallel).expect("sizes agree");
            }
        });
        println!("| same, interleaved | 1 | {} |", cells(&stored));
    }
    let q8_shapes = if wanted("Q8_0") { &[(1152, 576), (9728, 896), (896, 4864)][..] } else { &[] };
    for &(n, width) in q8_shapes {
        let w = Q8Rows::quantize(&pseudo_random(n * width, 5), n, width, &parallel).expect("sizes agree");
        for m in [1, 7, 8, 64, 512] {
            let x = pseudo_random(m * width, 3);
            let mut dst = vec![0f32; m * n];
            let times = fastest_by_turns(&paths, |isa| isa == Isa::Scalar && m > 1, |isa| {
                let a = Q8Rows::quantize(&x, m, width, &parallel).expect("sizes agree");
                q8_0::matmul(isa, &w, &a, &mut dst, &parallel).expect("sizes agree");
            });
            println!("| Q8_0 {n}×{width} | {m} | {} |", cells(&times));
        }
    }
    // A SmolLM2 decode step's products: 30 layers of one-row products over weights that do not
    // stay in cache (80 MiB as Q4_1, 119 MiB as Q8_0), as the model streams them.
    if wanted("Q4_1") {
        let layer_shapes = [(960, 576), (576, 576), (3072, 576), (576, 1536)];
        let q4_weights: Vec<Q4Rows> = (0..30)
            .flat_map(|layer| layer_shapes.iter().map(move |&(n, width)| (layer, n, width)))
            .map(|(layer, n, width)| {
                let mut bytes: Vec<u8> = pseudo_random(n * width / 32 * q4_1::BLOCK_BYTES, 20 + layer).iter().map(|v| (v * 127.0 + 128.0) as u8).collect();
                for block in bytes.chunks_exact_mut(q4_1::BLOCK_BYTES) {
                    block[0..2].copy_from_slice(&half::f16::from_f32(0.002).to_le_bytes());
                    block[2..4].copy_from_slice(&half::f16::from_f32(-0.015).to_le_bytes());
                }
                Q4Rows::from_ggml_bytes(&bytes, n, width).expect("sizes agree")
            })
            .collect();
        let q8_weights: Vec<Q8Rows> = q4_weights
            .iter()
            .map(|w| {
                let width = w.blocks_per_row * 32;
                let dense: Vec<f32> = (0..w.rows * width).map(|k| w.value(k / 32, k % 32)).collect();
                Q8Rows::quantize(&dense, w.rows, width, &parallel).expect("sizes agree")
            })
            .collect();
        let inputs: Vec<Q8Rows> = [576, 1536].iter().map(|&width| Q8Rows::quantize(&pseudo_random(width, 4), 1, width, &parallel).expect("sizes agree")).collect();
        let input = |width: usize| &inputs[usize::from(width != 576)];
        let mut dst = vec![0f32; 3072];
        let q4 = fastest_by_turns(&paths, |_| false, |isa| {
            for w in &q4_weights {
                q4_1::matmul(isa, w, input(w.blocks_per_row * 32), &mut dst[..w.rows], &parallel).expect("sizes agree");
            }
        });
        println!("| SmolLM2 decode step, 120 products as Q4_1 | 1 | {} |", cells(&q4));
        let q8 = fastest_by_turns(&paths, |_| false, |isa| {
            for w in &q8_weights {
                q8_0::matmul(isa, w, input(w.blocks_per_row * 32), &mut dst[..w.rows], &parallel).expect("sizes agree");
            }
        });
        println!("| same, held as Q8_0 | 1 | {} |", cells(&q8));
    }
    // SmolLM2's Q4_1 matrices: q/k/v fused, gate+up fused, `ffn_down`.
    let q4_shapes = if wanted("Q4_1") { &[(960, 576), (3072, 576), (576, 1536)][..] } else { &[] };
    for &(n, width) in q4_shapes {
        let blocks = n * width / 32;
        let mut bytes: Vec<u8> = pseudo_random(blocks * q4_1::BLOCK_BYTES, 7).iter().map(|v| (v * 127.0 + 128.0) as u8).collect();
        for block in bytes.chunks_exact_mut(q4_1::BLOCK_BYTES) {
            block[0..2].copy_from_slice(&half::f16::from_f32(0.002).to_le_bytes());
            block[2..4].copy_from_slice(&half::f16::from_f32(-0.015).to_le_bytes());
        }
        let w = Q4Rows::from_ggml_bytes(&bytes, n, width).expect("sizes agree");
        for m in [1, 7, 8, 64, 512] {
            let x = pseudo_random(m * width, 3);
            let mut dst = vec![0f32; m * n];
            let times = fastest_by_turns(&paths, |isa| isa == Isa::Scalar && m > 1, |isa| {
                let a = Q8Rows::quantize(&x, m, width, &parallel).expect("sizes agree");
                q4_1::matmul(isa, &w, &a, &mut dst, &parallel).expect("sizes agree");
            });
            println!("| Q4_1 {n}×{width} | {m} | {} |", cells(&times));
        }
        // The same weights re-quantized to Q8_0, as they were held before the Q4_1 kernel.
        let dense: Vec<f32> = (0..n * width).map(|k| w.value(k / 32, k % 32)).collect();
        let as_q8 = Q8Rows::quantize(&dense, n, width, &parallel).expect("sizes agree");
        for m in [1, 8, 64, 512] {
            let x = pseudo_random(m * width, 3);
            let mut dst = vec![0f32; m * n];
            let times = fastest_by_turns(&paths, |isa| isa == Isa::Scalar && m > 1, |isa| {
                let a = Q8Rows::quantize(&x, m, width, &parallel).expect("sizes agree");
                q8_0::matmul(isa, &as_q8, &a, &mut dst, &parallel).expect("sizes agree");
            });
            println!("| Q4_1 {n}×{width} held as Q8_0 | {m} | {} |", cells(&times));
        }
    }
    // One layer's causal attention over a whole prompt: SmolLM2's heads (9 query heads on 3 KV
    // heads, width 64) and the 1.5B's (12 on 2, width 128), at 1,024 tokens (about a long
    // answer's judge prompt) and 4,096 (a long retrieved context).
    if wanted("attention") {
        for (model, query_heads, kv_heads, head_dim) in [("SmolLM2", 9, 3, 64), ("1.5B", 12, 2, 128)] {
            for seq in [1024, 4096] {
                let shape = AttentionShape { query_heads, kv_heads, seq, past: 0, head_dim, window: None, scale: 1.0 / (head_dim as f32).sqrt() };
                // Contiguous [heads, seq, head_dim].
                fn rows(values: &[f32], seq: usize, head_dim: usize) -> HeadRows<'_> {
                    HeadRows { values, offset: 0, head_stride: seq * head_dim, row_stride: head_dim }
                }
                let (q, k, v) = (pseudo_random(query_heads * seq * head_dim, 11), pseudo_random(kv_heads * seq * head_dim, 12), pseudo_random(kv_heads * seq * head_dim, 13));
                let mut out = vec![0f32; seq * query_heads * head_dim];
                let times = fastest_by_turns(&paths, |isa| isa == Isa::Scalar && seq > 1024, |isa| {
                    causal_attention::attention(isa, rows(&q, seq, head_dim), rows(&k, seq, head_dim), rows(&v, seq, head_dim), shape, &mut out, &parallel).expect("sizes agree");
                });
                println!("| attention, {model} heads, one layer | {seq} | {} |", cells(&times));
            }
        }
    }
}
