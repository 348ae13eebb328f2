//! Models of a real architecture with random weights, for speed measurements on machines that
//! do not have the model file (a GPU box reached without network, a user's first check):
//! speed depends on shapes and weight types, not on the values.
//!
//! The weights are made in process, quantized like the published file, written as a GGUF in
//! memory and read back through the same loader as any model file, so the measured code path
//! is the real one.

use std::io::Cursor;
use std::path::Path;
use std::str::FromStr;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use serde::Serialize;

use super::error::{LlmError, Result};
use super::transformer::TransformerWeights;

/// The shapes of one published model.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticArch {
    pub id: &'static str,
    pub architecture: &'static str,
    pub layers: usize,
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub context_length: usize,
    pub rope_base: f32,
    pub rms_eps: f32,
    /// Biases on the q/k/v projections (Qwen2).
    pub qkv_bias: bool,
    /// The output projection is the embedding table.
    pub tied_embeddings: bool,
    /// Quantization of the matrices (norms and biases stay f32, as in GGUF files).
    #[serde(serialize_with = "dtype_name")]
    pub matrix_dtype: GgmlDType,
}

fn dtype_name<S: serde::Serializer>(d: &GgmlDType, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{d:?}"))
}

/// Qwen2.5-1.5B (the default judge, qwen2.5-coder-1.5b-instruct): 28 layers, hidden 1536,
/// 12 query heads over 2 KV heads, feed-forward 8960, 151,936 tokens, tied embeddings; Q4_K
/// as in the Q4_K_M file (which keeps a few matrices in Q6_K).
pub const QWEN2_1_5B: SyntheticArch = SyntheticArch {
    id: "qwen2-1.5b",
    architecture: "qwen2",
    layers: 28,
    hidden: 1536,
    heads: 12,
    kv_heads: 2,
    ffn: 8960,
    vocab: 151_936,
    context_length: 32_768,
    rope_base: 1_000_000.0,
    rms_eps: 1e-6,
    qkv_bias: true,
    tied_embeddings: true,
    matrix_dtype: GgmlDType::Q4K,
};

/// Qwen2.5-0.5B (qwen2.5-coder-0.5b-instruct): 24 layers, hidden 896, 14 heads over 2.
pub const QWEN2_0_5B: SyntheticArch = SyntheticArch {
    id: "qwen2-0.5b",
    architecture: "qwen2",
    layers: 24,
    hidden: 896,
    heads: 14,
    kv_heads: 2,
    ffn: 4864,
    vocab: 151_936,
    context_length: 32_768,
    rope_base: 1_000_000.0,
    rms_eps: 1e-6,
    qkv_bias: true,
    tied_embeddings: true,
    // 896 is not a multiple of 256 (the k-quant block): the published file uses Q5_0/Q8_0
    // there; Q8_0 is what our loader turns those into.
    matrix_dtype: GgmlDType::Q8_0,
};

/// SmolLM2-135M-Instruct (the smallest default model): 30 layers, hidden 576, 9 heads over 3,
/// no biases, tied embeddings; the published file is Q4_1 (which the CPU runs as Q8_0).
pub const SMOLLM2_135M: SyntheticArch = SyntheticArch {
    id: "smollm2-135m",
    architecture: "llama",
    layers: 30,
    hidden: 576,
    heads: 9,
    kv_heads: 3,
    ffn: 1536,
    vocab: 49_152,
    context_length: 8_192,
    rope_base: 100_000.0,
    rms_eps: 1e-5,
    qkv_bias: false,
    tied_embeddings: true,
    matrix_dtype: GgmlDType::Q4_1,
};

pub const ARCHS: &[SyntheticArch] = &[QWEN2_1_5B, QWEN2_0_5B, SMOLLM2_135M];

/// A matrix type by its GGUF name (`q4_0`, `q4_k`, `q8_0`, `f16` …, any case).
pub fn parse_matrix_type(name: &str) -> Result<GgmlDType> {
    let known = [
        ("f32", GgmlDType::F32),
        ("f16", GgmlDType::F16),
        ("bf16", GgmlDType::BF16),
        ("q4_0", GgmlDType::Q4_0),
        ("q4_1", GgmlDType::Q4_1),
        ("q5_0", GgmlDType::Q5_0),
        ("q5_1", GgmlDType::Q5_1),
        ("q8_0", GgmlDType::Q8_0),
        ("q2_k", GgmlDType::Q2K),
        ("q3_k", GgmlDType::Q3K),
        ("q4_k", GgmlDType::Q4K),
        ("q5_k", GgmlDType::Q5K),
        ("q6_k", GgmlDType::Q6K),
    ];
    let wanted = name.to_ascii_lowercase();
    known.iter().find(|(n, _)| *n == wanted).map(|(_, d)| *d).ok_or_else(|| {
        let names: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
        LlmError::Invalid(format!("unknown matrix type `{name}` (known: {})", names.join(", ")))
    })
}

impl FromStr for SyntheticArch {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self> {
        ARCHS.iter().find(|a| a.id == s).cloned().ok_or_else(|| {
            let known: Vec<&str> = ARCHS.iter().map(|a| a.id).collect();
            LlmError::Invalid(format!(
                "unknown synthetic architecture `{s}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

impl SyntheticArch {
    fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }

    /// These shapes with another matrix type, refused where a row does not split into the
    /// type's blocks (k-quants need widths that are multiples of 256).
    pub fn with_matrix_type(&self, dtype: GgmlDType) -> Result<Self> {
        let block = dtype.block_size();
        for width in [self.hidden, self.ffn] {
            if width % block != 0 {
                return Err(LlmError::Invalid(format!(
                    "{}: width {width} is not a multiple of {dtype:?}'s block of {block}",
                    self.id
                )));
            }
        }
        Ok(Self { matrix_dtype: dtype, ..self.clone() })
    }

    /// Name, shape and type of every tensor, in the GGUF naming of llama.cpp.
    fn tensor_specs(&self) -> Vec<(String, Vec<usize>, GgmlDType)> {
        let (h, f, kv) = (self.hidden, self.ffn, self.kv_heads * self.head_dim());
        let m = self.matrix_dtype;
        let mut specs = vec![
            ("token_embd.weight".to_string(), vec![self.vocab, h], m),
            ("output_norm.weight".to_string(), vec![h], GgmlDType::F32),
        ];
        if !self.tied_embeddings {
            specs.push(("output.weight".to_string(), vec![self.vocab, h], m));
        }
        for i in 0..self.layers {
            let p = |name: &str| format!("blk.{i}.{name}");
            specs.push((p("attn_norm.weight"), vec![h], GgmlDType::F32));
            specs.push((p("attn_q.weight"), vec![h, h], m));
            specs.push((p("attn_k.weight"), vec![kv, h], m));
            specs.push((p("attn_v.weight"), vec![kv, h], m));
            if self.qkv_bias {
                specs.push((p("attn_q.bias"), vec![h], GgmlDType::F32));
                specs.push((p("attn_k.bias"), vec![kv], GgmlDType::F32));
                specs.push((p("attn_v.bias"), vec![kv], GgmlDType::F32));
            }
            specs.push((p("attn_output.weight"), vec![h, h], m));
            specs.push((p("ffn_norm.weight"), vec![h], GgmlDType::F32));
            specs.push((p("ffn_gate.weight"), vec![f, h], m));
            specs.push((p("ffn_up.weight"), vec![f, h], m));
            specs.push((p("ffn_down.weight"), vec![h, f], m));
        }
        specs
    }

    /// Number of weights.
    pub fn parameters(&self) -> usize {
        self.tensor_specs()
            .iter()
            .map(|(_, shape, _)| shape.iter().product::<usize>())
            .sum()
    }

    fn metadata(&self) -> Vec<(String, gguf_file::Value)> {
        use gguf_file::Value;
        let a = self.architecture;
        vec![
            ("general.architecture".into(), Value::String(a.into())),
            ("general.name".into(), Value::String(format!("synthetic {}", self.id))),
            (format!("{a}.block_count"), Value::U32(self.layers as u32)),
            (format!("{a}.context_length"), Value::U32(self.context_length as u32)),
            (format!("{a}.embedding_length"), Value::U32(self.hidden as u32)),
            (format!("{a}.feed_forward_length"), Value::U32(self.ffn as u32)),
            (format!("{a}.attention.head_count"), Value::U32(self.heads as u32)),
            (format!("{a}.attention.head_count_kv"), Value::U32(self.kv_heads as u32)),
            (format!("{a}.attention.layer_norm_rms_epsilon"), Value::F32(self.rms_eps)),
            (format!("{a}.rope.freq_base"), Value::F32(self.rope_base)),
        ]
    }

    /// A GGUF file's bytes with random weights (same `seed`, same bytes). Tensors are made and
    /// quantized on all cores: quantizing 1.5B weights is most of the time this takes.
    pub fn gguf_bytes(&self, seed: u64) -> Result<Vec<u8>> {
        let specs = self.tensor_specs();
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut tensors: Vec<Option<QTensor>> = Vec::new();
        tensors.resize_with(specs.len(), || None);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let made: Vec<Result<Vec<(usize, QTensor)>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| -> Result<Vec<(usize, QTensor)>> {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((name, shape, dtype)) = specs.get(i) else {
                                return Ok(out);
                            };
                            let norm = name.ends_with("norm.weight");
                            out.push((i, random_tensor(shape, *dtype, norm, seed ^ (i as u64 + 1))?));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err(LlmError::Invalid("weight maker thread panicked".into())))
                })
                .collect()
        });
        for batch in made {
            for (i, t) in batch? {
                tensors[i] = Some(t);
            }
        }
        let tensors: Vec<QTensor> = tensors
            .into_iter()
            .map(|t| t.ok_or_else(|| LlmError::Invalid("a synthetic tensor was not made".into())))
            .collect::<Result<_>>()?;
        let metadata = self.metadata();
        let md: Vec<(&str, &gguf_file::Value)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let named: Vec<(&str, &QTensor)> = specs
            .iter()
            .zip(&tensors)
            .map(|((name, _, _), t)| (name.as_str(), t))
            .collect();
        let mut out = Cursor::new(Vec::new());
        gguf_file::write(&mut out, &md, &named)?;
        Ok(out.into_inner())
    }

    /// Random weights of this shape on `device`, loaded as a model file would be.
    pub fn weights(&self, device: &Device, seed: u64) -> Result<TransformerWeights> {
        let bytes = self.gguf_bytes(seed)?;
        let mut reader = Cursor::new(bytes);
        let name = format!("<synthetic {}>", self.id);
        let content = gguf_file::Content::read(&mut reader).map_err(|e| LlmError::Gguf {
            path: name.clone().into(),
            message: e.to_string(),
        })?;
        TransformerWeights::from_gguf(&content, &mut reader, device, Path::new(&name))
    }
}

/// Values spread like trained weights (small, centred; norms near 1), from a fast
/// deterministic generator: the values only have to be finite and varied.
fn random_tensor(shape: &[usize], dtype: GgmlDType, norm: bool, seed: u64) -> Result<QTensor> {
    let n: usize = shape.iter().product();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut values = Vec::with_capacity(n);
    let (centre, spread) = if norm { (1.0f32, 0.2f32) } else { (0.0, 0.04) };
    for _ in 0..n {
        // xorshift64*: plenty for filler values, and far faster than a cryptographic stream.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let unit = (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        values.push(centre + spread * unit);
    }
    let t = Tensor::from_vec(values, shape.to_vec(), &Device::Cpu)?;
    Ok(QTensor::quantize(&t, dtype)?)
}
