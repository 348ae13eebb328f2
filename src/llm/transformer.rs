//! The decoder-only transformer of the llama family, Qwen2 and Gemma 3, on quantized GGUF
//! weights. Gemma 3 adds norms around attention and feed-forward, per-head q/k norms, GELU,
//! scaled embeddings and sliding-window layers with their own RoPE base.
//!
//! Our own model file rather than candle-transformers' `quantized_llama`/`quantized_qwen2`:
//! those return only the last position's logits (option scoring needs every position), keep
//! the KV cache inside the weights (prefix reuse needs caches apart from shared weights) and
//! copy K/V for grouped-query attention. Here weights are immutable and shared; a [`KvCache`]
//! is a cheap value that can be cloned after a prefix and continued in several directions.

use std::sync::Arc;

use candle_core::quantized::{gguf_file, GgmlDType, QMatMul, QStorage, QTensor};
use candle_core::{DType, Device, Module, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

use super::error::{LlmError, Result};

/// How query/key pairs are rotated: adjacent pairs (llama as converted to GGUF) or the two
/// halves of each head (NeoX style: Qwen2, Gemma).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeStyle {
    Interleaved,
    Halves,
}

#[derive(Debug, Clone)]
pub struct TransformerConfig {
    pub architecture: String,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub hidden: usize,
    pub vocab: usize,
    pub context_length: usize,
    pub rms_eps: f64,
    pub rope_base: f32,
    pub rope_style: RopeStyle,
    pub activation: Activation,
    /// Embeddings are multiplied by this (Gemma: sqrt(hidden)).
    pub embedding_scale: Option<f64>,
    /// Local layers attend to at most this many previous positions (Gemma 3).
    pub sliding_window: Option<usize>,
    /// RoPE base of the local (sliding-window) layers.
    pub rope_base_local: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    Silu,
    GeluTanh,
}

/// Matrices that read the same input (q/k/v; gate/up). When they share a weight type they are
/// stored as one matrix of stacked rows: one activation quantization and one kernel instead of
/// three, which is much of a decode step's cost on a GPU. The output is cut back into parts.
#[derive(Debug, Clone)]
enum Projections {
    Fused {
        w: QMatMul,
        bias: Option<Tensor>,
        widths: Vec<usize>,
    },
    Separate(Vec<(QMatMul, Option<Tensor>)>),
}

impl Projections {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Vec<Tensor>> {
        let with_bias = |t: Tensor, bias: &Option<Tensor>| match bias {
            Some(b) => t.broadcast_add(b),
            None => Ok(t),
        };
        match self {
            Projections::Fused { w, bias, widths } => {
                let y = with_bias(w.forward(x)?, bias)?;
                let last = y.rank() - 1;
                let mut start = 0;
                let mut parts = Vec::with_capacity(widths.len());
                for &n in widths {
                    parts.push(y.narrow(last, start, n)?);
                    start += n;
                }
                Ok(parts)
            }
            Projections::Separate(ws) => ws
                .iter()
                .map(|(w, bias)| with_bias(w.forward(x)?, bias))
                .collect(),
        }
    }
}

#[derive(Debug, Clone)]
struct Layer {
    attn_norm: RmsNorm,
    /// q, k, v.
    qkv: Projections,
    wo: QMatMul,
    ffn_norm: RmsNorm,
    /// gate, up.
    gate_up: Projections,
    w_down: QMatMul,
    q_norm: Option<RmsNorm>,
    k_norm: Option<RmsNorm>,
    post_attn_norm: Option<RmsNorm>,
    post_ffn_norm: Option<RmsNorm>,
    /// A sliding-window layer (Gemma 3's local layers).
    local: bool,
}

/// Token embeddings: looked up in the quantized table where candle can (saves the f32 copy
/// of a 150k-token vocabulary), else from a dequantized table.
#[derive(Debug, Clone)]
enum Embeddings {
    Quantized(Arc<QTensor>),
    Dense(Tensor),
}

/// The weights of one model: immutable, shared by every cache and thread.
#[derive(Debug)]
pub struct TransformerWeights {
    pub config: TransformerConfig,
    embeddings: Embeddings,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: QMatMul,
    cos: Tensor,
    sin: Tensor,
    cos_local: Tensor,
    sin_local: Tensor,
    device: Device,
}

/// Keys and values of every position seen so far, per layer, in buffers with room to grow
/// (appending a token writes in place instead of copying the whole cache). Cloning is cheap:
/// clones share buffers until one of them appends, which first copies its positions into a
/// buffer of its own (copy on write), so a prefix's cache can be continued with many suffixes.
#[derive(Debug, Clone, Default)]
pub struct KvCache {
    layers: Vec<Option<Arc<LayerKv>>>,
    len: usize,
    /// Number of sequences held side by side.
    batch: usize,
}

#[derive(Debug)]
struct LayerKv {
    /// `[batch, kv_heads, capacity, head_dim]`; positions past the cache's length are unused.
    k: Tensor,
    v: Tensor,
    capacity: usize,
}

/// Write `k`/`v` (`[b, kv_heads, seq, head_dim]`) at position `past`; returns views of all
/// positions so far.
fn append_kv(
    slot: &mut Option<Arc<LayerKv>>,
    past: usize,
    k: &Tensor,
    v: &Tensor,
    max_len: usize,
) -> candle_core::Result<(Tensor, Tensor)> {
    let needed = past + k.dim(2)?;
    let writable = match slot.as_mut() {
        Some(layer) => layer.capacity >= needed && Arc::get_mut(layer).is_some(),
        None => false,
    };
    if !writable {
        let old_capacity = slot.as_ref().map(|l| l.capacity).unwrap_or(0);
        let capacity = needed
            .max(old_capacity * 2)
            .max(256)
            .next_multiple_of(128)
            .min(max_len.max(needed));
        let (b, h, _, d) = k.dims4()?;
        let new_k = Tensor::zeros((b, h, capacity, d), k.dtype(), k.device())?;
        let new_v = Tensor::zeros((b, h, capacity, v.dim(3)?), v.dtype(), v.device())?;
        if let (Some(old), true) = (slot.as_ref(), past > 0) {
            new_k.slice_set(&old.k.narrow(2, 0, past)?.contiguous()?, 2, 0)?;
            new_v.slice_set(&old.v.narrow(2, 0, past)?.contiguous()?, 2, 0)?;
        }
        *slot = Some(Arc::new(LayerKv {
            k: new_k,
            v: new_v,
            capacity,
        }));
    }
    let layer = slot
        .as_mut()
        .and_then(Arc::get_mut)
        .ok_or_else(|| candle_core::Error::Msg("KV cache buffer still shared".into()))?;
    layer.k.slice_set(k, 2, past)?;
    layer.v.slice_set(v, 2, past)?;
    Ok((layer.k.narrow(2, 0, needed)?, layer.v.narrow(2, 0, needed)?))
}

impl KvCache {
    /// Number of positions held.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

struct Gguf<'a, R> {
    content: &'a gguf_file::Content,
    reader: &'a mut R,
    device: &'a Device,
    arch: String,
}

impl<R: std::io::Read + std::io::Seek> Gguf<'_, R> {
    fn md_u32(&self, key: &str) -> std::result::Result<usize, String> {
        let full = format!("{}.{key}", self.arch);
        self.content
            .metadata
            .get(&full)
            .ok_or_else(|| format!("metadata has no {full}"))?
            .to_u32()
            .map(|v| v as usize)
            .map_err(|e| format!("{full}: {e}"))
    }
    fn md_f32(&self, key: &str) -> Option<f32> {
        self.content
            .metadata
            .get(&format!("{}.{key}", self.arch))
            .and_then(|v| v.to_f32().ok())
    }
    fn tensor(&mut self, name: &str) -> std::result::Result<QTensor, String> {
        self.content
            .tensor(self.reader, name, self.device)
            .map_err(|e| format!("tensor {name}: {e}"))
    }
    fn has(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }
    fn matmul(&mut self, name: &str) -> std::result::Result<QMatMul, String> {
        let t = self.tensor(name)?;
        let t = requantize_slow_type(t).map_err(|e| format!("tensor {name}: {e}"))?;
        QMatMul::from_qtensor(t).map_err(|e| format!("tensor {name}: {e}"))
    }
    /// Matrices `names` (with their biases, where present) that read the same input; see
    /// [`Projections`]. Loaded through host memory, where stacking their rows is a byte copy.
    fn projections(&mut self, names: &[String]) -> std::result::Result<Projections, String> {
        let mut parts = Vec::with_capacity(names.len());
        for name in names {
            let full = format!("{name}.weight");
            let t = self
                .content
                .tensor(self.reader, &full, &Device::Cpu)
                .map_err(|e| format!("tensor {full}: {e}"))?;
            let t = requantize_slow_type(t).map_err(|e| format!("tensor {full}: {e}"))?;
            let bias_name = format!("{name}.bias");
            let bias = if self.has(&bias_name) {
                Some(self.dense(&bias_name)?)
            } else {
                None
            };
            parts.push((full, t, bias));
        }
        let dtype = parts[0].1.dtype();
        let k = parts[0].1.shape().dims2().map_err(|e| format!("tensor {}: {e}", parts[0].0))?.1;
        let same_shape_and_type = parts
            .iter()
            .all(|(_, t, _)| t.dtype() == dtype && t.shape().dims2().ok().map(|d| d.1) == Some(k));
        let all_or_no_bias = parts.iter().all(|p| p.2.is_some()) || parts.iter().all(|p| p.2.is_none());
        if !(same_shape_and_type && all_or_no_bias) {
            return parts
                .into_iter()
                .map(|(full, t, bias)| {
                    let t = move_qtensor(t, self.device).map_err(|e| format!("tensor {full}: {e}"))?;
                    let w = QMatMul::from_qtensor(t).map_err(|e| format!("tensor {full}: {e}"))?;
                    Ok((w, bias))
                })
                .collect::<std::result::Result<_, String>>()
                .map(Projections::Separate);
        }
        let fused_name = names.join("+");
        let fail = |e: candle_core::Error| format!("tensors {fused_name}: {e}");
        let mut bytes = Vec::new();
        let mut widths = Vec::with_capacity(parts.len());
        for (_, t, _) in &parts {
            bytes.extend_from_slice(&t.data().map_err(fail)?);
            widths.push(t.shape().dims2().map_err(fail)?.0);
        }
        let rows: usize = widths.iter().sum();
        let storage = QStorage::from_data(std::borrow::Cow::Owned(bytes), self.device, dtype).map_err(fail)?;
        let w = QMatMul::from_qtensor(QTensor::new(storage, (rows, k)).map_err(fail)?).map_err(fail)?;
        let bias = if parts[0].2.is_some() {
            let biases: Vec<Tensor> = parts.iter().filter_map(|p| p.2.clone()).collect();
            Some(Tensor::cat(&biases, 0).map_err(fail)?)
        } else {
            None
        };
        Ok(Projections::Fused { w, bias, widths })
    }
    fn dense(&mut self, name: &str) -> std::result::Result<Tensor, String> {
        let device = self.device.clone();
        self.tensor(name)?
            .dequantize(&device)
            .map_err(|e| format!("tensor {name}: {e}"))
    }
    fn optional_norm(&mut self, name: &str, eps: f64) -> std::result::Result<Option<RmsNorm>, String> {
        if self.has(name) {
            self.norm(name, eps).map(Some)
        } else {
            Ok(None)
        }
    }
    fn norm(&mut self, name: &str, eps: f64) -> std::result::Result<RmsNorm, String> {
        let t = self.tensor(name)?;
        RmsNorm::from_qtensor(t, eps).map_err(|e| format!("tensor {name}: {e}"))
    }
}

impl TransformerWeights {
    /// Load the weights a GGUF file holds; `path` is only for error messages.
    pub fn from_gguf<R: std::io::Read + std::io::Seek>(
        content: &gguf_file::Content,
        reader: &mut R,
        device: &Device,
        path: &std::path::Path,
    ) -> Result<Self> {
        let arch = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        let rope_style = match arch.as_str() {
            "llama" => RopeStyle::Interleaved,
            "qwen2" | "gemma3" => RopeStyle::Halves,
            other => {
                return Err(LlmError::Gguf {
                    path: path.to_path_buf(),
                    message: format!(
                        "architecture `{other}` is not supported (supported: llama, qwen2, gemma3)"
                    ),
                })
            }
        };
        let mut g = Gguf {
            content,
            reader,
            device,
            arch: arch.clone(),
        };
        Self::load(&mut g, rope_style).map_err(|message| LlmError::Gguf {
            path: path.to_path_buf(),
            message,
        })
    }

    fn load<R: std::io::Read + std::io::Seek>(
        g: &mut Gguf<'_, R>,
        rope_style: RopeStyle,
    ) -> std::result::Result<Self, String> {
        let heads = g.md_u32("attention.head_count")?;
        let kv_heads = g.md_u32("attention.head_count_kv").unwrap_or(heads);
        let hidden = g.md_u32("embedding_length")?;
        let layers_n = g.md_u32("block_count")?;
        let context_length = g.md_u32("context_length")?;
        let rms_eps = g
            .md_f32("attention.layer_norm_rms_epsilon")
            .ok_or("metadata has no attention.layer_norm_rms_epsilon")? as f64;
        let rope_base = g.md_f32("rope.freq_base").unwrap_or(10_000.0);
        if heads == 0 || kv_heads == 0 || hidden % heads != 0 || heads % kv_heads != 0 {
            return Err(format!(
                "inconsistent attention shape: {heads} heads, {kv_heads} kv heads, hidden {hidden}"
            ));
        }
        let gemma = g.arch == "gemma3";
        let head_dim = g
            .md_u32("attention.key_length")
            .or_else(|_| g.md_u32("rope.dimension_count"))
            .unwrap_or(hidden / heads);
        let sliding_window = if gemma {
            g.md_u32("attention.sliding_window").ok()
        } else {
            None
        };
        let embed = g.tensor("token_embd.weight")?;
        let (vocab, embed_hidden) = embed.shape().dims2().map_err(|e| e.to_string())?;
        if embed_hidden != hidden || head_dim % 2 != 0 {
            return Err(format!(
                "token_embd.weight has width {embed_hidden}, embedding_length is {hidden}"
            ));
        }
        let embed = Arc::new(embed);
        let output = if g.has("output.weight") {
            g.matmul("output.weight")?
        } else {
            // Tied embeddings: the output projection is the embedding table.
            QMatMul::from_arc(embed.clone()).map_err(|e| e.to_string())?
        };
        let embeddings = if embed.dtype() != GgmlDType::F32
            && hidden % embed.dtype().block_size() == 0
        {
            Embeddings::Quantized(embed)
        } else {
            Embeddings::Dense(embed.dequantize(g.device).map_err(|e| e.to_string())?)
        };
        let norm = g.norm("output_norm.weight", rms_eps)?;
        let mut layers = Vec::with_capacity(layers_n);
        for i in 0..layers_n {
            let p = format!("blk.{i}");
            let names = |parts: &[&str]| -> Vec<String> { parts.iter().map(|n| format!("{p}.{n}")).collect() };
            layers.push(Layer {
                attn_norm: g.norm(&format!("{p}.attn_norm.weight"), rms_eps)?,
                qkv: g.projections(&names(&["attn_q", "attn_k", "attn_v"]))?,
                wo: g.matmul(&format!("{p}.attn_output.weight"))?,
                ffn_norm: g.norm(&format!("{p}.ffn_norm.weight"), rms_eps)?,
                gate_up: g.projections(&names(&["ffn_gate", "ffn_up"]))?,
                w_down: g.matmul(&format!("{p}.ffn_down.weight"))?,
                q_norm: g.optional_norm(&format!("{p}.attn_q_norm.weight"), rms_eps)?,
                k_norm: g.optional_norm(&format!("{p}.attn_k_norm.weight"), rms_eps)?,
                post_attn_norm: g.optional_norm(&format!("{p}.post_attention_norm.weight"), rms_eps)?,
                post_ffn_norm: g.optional_norm(&format!("{p}.post_ffw_norm.weight"), rms_eps)?,
                // Gemma 3: five local layers, then one global.
                local: sliding_window.is_some() && i % 6 < 5,
            });
        }
        let (cos, sin) = rope_tables(head_dim, rope_base, context_length, g.device)
            .map_err(|e| e.to_string())?;
        // Gemma 3's local layers rotate with base 10,000 whatever the global base.
        let rope_base_local = if sliding_window.is_some() { 10_000.0 } else { rope_base };
        let (cos_local, sin_local) = if sliding_window.is_some() {
            rope_tables(head_dim, rope_base_local, context_length, g.device).map_err(|e| e.to_string())?
        } else {
            (cos.clone(), sin.clone())
        };
        Ok(TransformerWeights {
            config: TransformerConfig {
                architecture: g.arch.clone(),
                layers: layers_n,
                heads,
                kv_heads,
                head_dim,
                hidden,
                vocab,
                context_length,
                rms_eps,
                rope_base,
                rope_style,
                activation: if gemma { Activation::GeluTanh } else { Activation::Silu },
                embedding_scale: if gemma { Some((hidden as f64).sqrt()) } else { None },
                sliding_window,
                rope_base_local,
            },
            embeddings,
            layers,
            norm,
            output,
            cos,
            sin,
            cos_local,
            sin_local,
            device: g.device.clone(),
        })
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn new_cache(&self) -> KvCache {
        KvCache {
            layers: vec![None; self.layers.len()],
            len: 0,
            batch: 1,
        }
    }

    /// Run `tokens` after the positions already in `cache` (which grows by them). Returns f32
    /// logits `[tokens.len(), vocab]` when `all_positions`, else `[1, vocab]` for the last.
    /// The caller checks the context length (this only refuses to run past the RoPE tables).
    pub fn forward(
        &self,
        tokens: &[u32],
        cache: &mut KvCache,
        all_positions: bool,
    ) -> candle_core::Result<Tensor> {
        self.forward_batch(tokens, 1, cache, all_positions)?.squeeze(0)
    }

    /// Run `batch` sequences of equal length side by side: `tokens` holds them one after the
    /// other, `cache` holds the same number of sequences (an empty cache takes any number).
    /// Returns f32 logits `[batch, positions, vocab]`. One step for many sequences reads each
    /// weight once, which is where a GPU's throughput comes from.
    pub fn forward_batch(
        &self,
        tokens: &[u32],
        batch: usize,
        cache: &mut KvCache,
        all_positions: bool,
    ) -> candle_core::Result<Tensor> {
        if batch == 0 || tokens.is_empty() || tokens.len() % batch != 0 {
            candle_core::bail!("{} tokens do not split into {batch} equal sequences", tokens.len());
        }
        let seq = tokens.len() / batch;
        if cache.layers.len() != self.layers.len() {
            candle_core::bail!("KV cache belongs to another model");
        }
        if cache.len > 0 && cache.batch != batch {
            candle_core::bail!("KV cache holds {} sequences, not {batch}", cache.batch);
        }
        let past = cache.len;
        if past + seq > self.config.context_length {
            candle_core::bail!(
                "{} positions exceed the context length {}",
                past + seq,
                self.config.context_length
            );
        }
        let ids = Tensor::new(tokens, &self.device)?;
        let mut x = match &self.embeddings {
            Embeddings::Quantized(q) => q.embedding(&ids)?,
            Embeddings::Dense(t) => t.index_select(&ids, 0)?,
        }
        .reshape((batch, seq, self.config.hidden))?;
        if let Some(scale) = self.config.embedding_scale {
            x = (x * scale)?;
        }
        let global_rope = (self.cos.narrow(0, past, seq)?, self.sin.narrow(0, past, seq)?);
        let local_rope = (
            self.cos_local.narrow(0, past, seq)?,
            self.sin_local.narrow(0, past, seq)?,
        );
        let n_rep = self.config.heads / self.config.kv_heads;
        let global_mask = attention_mask(seq, past, n_rep, None, &self.device)?;
        let local_mask = match self.config.sliding_window {
            Some(w) => attention_mask(seq, past, n_rep, Some(w), &self.device)?,
            None => None,
        };
        for (layer, slot) in self.layers.iter().zip(cache.layers.iter_mut()) {
            let ((cos, sin), mask) = if layer.local {
                (&local_rope, local_mask.as_ref())
            } else {
                (&global_rope, global_mask.as_ref())
            };
            // candle's CUDA norm and softmax kernels take contiguous inputs only (no-op when so).
            let h = layer.attn_norm.forward(&x.contiguous()?)?;
            let mut attn = self.attention(layer, &h, cos, sin, mask, slot, past)?;
            if let Some(n) = &layer.post_attn_norm {
                attn = n.forward(&attn)?;
            }
            x = (x + attn)?;
            let h = layer.ffn_norm.forward(&x.contiguous()?)?;
            let [gate, up]: [Tensor; 2] = layer
                .gate_up
                .forward(&h)?
                .try_into()
                .map_err(|_| candle_core::Error::Msg("gate/up projections: expected two outputs".into()))?;
            let gate = match self.config.activation {
                Activation::Silu => candle_nn::ops::silu(&gate)?,
                Activation::GeluTanh => gate.gelu()?,
            };
            let mut ffn = layer.w_down.forward(&(gate * up)?)?;
            if let Some(n) = &layer.post_ffn_norm {
                ffn = n.forward(&ffn)?;
            }
            x = (x + ffn)?;
        }
        cache.len = past + seq;
        cache.batch = batch;
        let x = if all_positions {
            x
        } else {
            x.narrow(1, seq - 1, 1)?
        };
        let x = self.norm.forward(&x.contiguous()?)?;
        let logits = self.output.forward(&x)?;
        logits.to_dtype(DType::F32)
    }

    // The per-layer pieces of one forward step; bundling them would only rename the list.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        layer: &Layer,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        slot: &mut Option<Arc<LayerKv>>,
        past: usize,
    ) -> candle_core::Result<Tensor> {
        let c = &self.config;
        let (b, seq, _) = x.dims3()?;
        let [q, k, v]: [Tensor; 3] = layer
            .qkv
            .forward(x)?
            .try_into()
            .map_err(|_| candle_core::Error::Msg("q/k/v projections: expected three outputs".into()))?;
        let heads = |t: Tensor, norm: &Option<RmsNorm>, heads: usize| -> candle_core::Result<Tensor> {
            // A no-op for one token; for a prompt, the parts of a fused projection are strided.
            let mut t = t.contiguous()?.reshape((b, seq, heads, c.head_dim))?;
            if let Some(norm) = norm {
                t = norm.forward(&t)?;
            }
            t.transpose(1, 2)?.contiguous()
        };
        let q = heads(q, &layer.q_norm, c.heads)?;
        let k = heads(k, &layer.k_norm, c.kv_heads)?;
        let v = heads(v, &None, c.kv_heads)?;
        let (q, k) = match c.rope_style {
            RopeStyle::Interleaved => (
                candle_nn::rotary_emb::rope_i(&q, cos, sin)?,
                candle_nn::rotary_emb::rope_i(&k, cos, sin)?,
            ),
            RopeStyle::Halves => (
                candle_nn::rotary_emb::rope(&q, cos, sin)?,
                candle_nn::rotary_emb::rope(&k, cos, sin)?,
            ),
        };
        let (k, v) = append_kv(slot, past, &k, &v, c.context_length)?;
        // Grouped-query attention without copying K/V per query head: the query heads that
        // share a KV head are stacked as extra rows of that head.
        let n_rep = c.heads / c.kv_heads;
        let scale = 1.0 / (c.head_dim as f64).sqrt();
        let q = (q * scale)?.reshape((b, c.kv_heads, n_rep * seq, c.head_dim))?;
        let att = q.matmul(&k.t()?)?;
        let att = match mask {
            Some(m) => att.broadcast_add(m)?,
            None => att,
        };
        let att = candle_nn::ops::softmax_last_dim(&att.contiguous()?)?;
        let y = att.matmul(&v)?;
        let y = y
            .reshape((b, c.heads, seq, c.head_dim))?
            .transpose(1, 2)?
            .reshape((b, seq, c.heads * c.head_dim))?;
        layer.wo.forward(&y)
    }
}

/// candle has no SIMD kernels for Q4_1, Q5_0 and Q5_1 (8–25 GFLOP/s against 170+ for the
/// types that have them), and small models whose width is not a multiple of 256 use exactly
/// these. Re-quantizing them to Q8_0 at load (AVX2 kernel; 8.5 bits per weight, so the values
/// of the 4/5-bit originals are kept almost exactly) costs memory but makes them fast.
fn requantize_slow_type(t: QTensor) -> candle_core::Result<QTensor> {
    match t.dtype() {
        GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 => {
            let dense = t.dequantize(&t.device())?;
            QTensor::quantize(&dense, GgmlDType::Q8_0)
        }
        _ => Ok(t),
    }
}

/// `t` (on the CPU) on `device`.
fn move_qtensor(t: QTensor, device: &Device) -> candle_core::Result<QTensor> {
    if device.is_cpu() {
        return Ok(t);
    }
    QTensor::new(QStorage::from_data(t.data()?, device, t.dtype())?, t.shape().clone())
}

/// Additive mask `[n_rep * seq, past + seq]` (row r is query position `past + r % seq`):
/// causal, and within `window` positions when given. None when nothing is masked.
fn attention_mask(
    seq: usize,
    past: usize,
    n_rep: usize,
    window: Option<usize>,
    device: &Device,
) -> candle_core::Result<Option<Tensor>> {
    let kv = past + seq;
    let window = window.unwrap_or(usize::MAX);
    if seq == 1 && kv <= window {
        return Ok(None);
    }
    let mut data = Vec::with_capacity(n_rep * seq * kv);
    for _ in 0..n_rep {
        for i in 0..seq {
            let pos = past + i;
            for j in 0..kv {
                let visible = j <= pos && pos - j < window;
                data.push(if visible { 0f32 } else { f32::NEG_INFINITY });
            }
        }
    }
    Tensor::from_vec(data, (n_rep * seq, kv), device).map(Some)
}

fn rope_tables(
    head_dim: usize,
    base: f32,
    positions: usize,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let inv_freq: Vec<f32> = (0..head_dim / 2)
        .map(|i| 1.0 / base.powf(2.0 * i as f32 / head_dim as f32))
        .collect();
    let inv_freq = Tensor::from_vec(inv_freq, (1, head_dim / 2), device)?;
    let pos = Tensor::arange(0u32, positions as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((positions, 1))?;
    let angles = pos.broadcast_mul(&inv_freq)?;
    Ok((angles.cos()?, angles.sin()?))
}

/// Log-softmax of one row of logits, in f64 for a stable sum.
pub fn log_softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| ((l - max) as f64).exp()).sum();
    let log_z = max as f64 + sum.ln();
    logits.iter().map(|&l| (l as f64 - log_z) as f32).collect()
}

/// Logits tensor `[n, vocab]` as rows.
pub fn logits_rows(logits: &Tensor) -> candle_core::Result<Vec<Vec<f32>>> {
    logits.to_dtype(DType::F32)?.to_vec2::<f32>()
}
