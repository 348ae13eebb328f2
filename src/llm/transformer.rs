//! The decoder-only transformer of the llama family, Qwen2/3, Phi-3 and Gemma 2/3, on
//! quantized GGUF weights. What each architecture changes (architecture.rs) is a switch
//! here: fused or separate projections, per-head q/k norms, norms after attention and
//! feed-forward, GELU, scaled embeddings, partial rotary, soft-capping, sliding-window layers
//! with their own RoPE base; RoPE scalings are in rope.rs.
//!
//! Our own model file rather than candle-transformers' `quantized_llama`/`quantized_qwen2`:
//! those return only the last position's logits (option scoring needs every position), keep
//! the KV cache inside the weights (prefix reuse needs caches apart from shared weights) and
//! copy K/V for grouped-query attention. Here weights are immutable and shared; a [`KvCache`]
//! is a cheap value that can be cloned after a prefix and continued in several directions.

use std::sync::Arc;

use candle_core::quantized::{gguf_file, GgmlDType, QStorage, QTensor};
use candle_core::{DType, Device, Module, Tensor};
use candle_transformers::quantized_nn::RmsNorm;

use super::architecture::{Activation, Architecture, RopeStyle};
use crate::models::gguf_info::RUNNABLE_ARCHITECTURES;
use super::error::{LlmError, Result};
use super::cached_attention;
use super::gated_product;
use super::rope::{rope_tables, RopeScaling, Yarn};
use super::weight_matrix::{embed_q8_0, requantize_slow_type, WeightMatrix};
use assay_kernels::q8_0::Q8Rows;

#[derive(Debug, Clone)]
pub struct TransformerConfig {
    pub architecture: Architecture,
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
    /// Leading dimensions of each head that are rotated (Phi-3/4: fewer than the head).
    pub rotary_dims: usize,
    pub rope_scaling: RopeScaling,
    pub activation: Activation,
    /// Embeddings are multiplied by this (Gemma: sqrt(hidden)).
    pub embedding_scale: Option<f64>,
    /// Queries are multiplied by this before q·k.
    pub attention_scale: f64,
    /// Attention scores become `cap * tanh(score / cap)` (Gemma 2).
    pub attention_softcap: Option<f64>,
    /// Output logits become `cap * tanh(logit / cap)` (Gemma 2).
    pub output_softcap: Option<f64>,
    /// Local layers attend to at most this many previous positions (Gemma 2/3).
    pub sliding_window: Option<usize>,
    /// RoPE base of the local (sliding-window) layers.
    pub rope_base_local: f32,
}

/// Matrices that read the same input (q/k/v; gate/up). When they share a weight type they are
/// stored as one matrix of stacked rows: one activation quantization and one kernel instead of
/// three, which is much of a decode step's cost on a GPU. The output is cut back into parts.
#[derive(Debug, Clone)]
enum Projections {
    Fused {
        w: WeightMatrix,
        bias: Option<Tensor>,
        widths: Vec<usize>,
    },
    Separate(Vec<(WeightMatrix, Option<Tensor>)>),
}

/// `t` plus the projection's bias, where it has one.
fn with_bias(t: Tensor, bias: &Option<Tensor>) -> candle_core::Result<Tensor> {
    match bias {
        Some(b) => t.broadcast_add(b),
        None => Ok(t),
    }
}

/// The fused output `y` cut back into parts of `widths` along its last dimension.
fn split(y: &Tensor, widths: &[usize]) -> candle_core::Result<Vec<Tensor>> {
    let last = y.rank() - 1;
    let mut start = 0;
    let mut parts = Vec::with_capacity(widths.len());
    for &n in widths {
        parts.push(y.narrow(last, start, n)?);
        start += n;
    }
    Ok(parts)
}

impl Projections {
    /// activation(gate) · up for the gate/up projections: in one pass where they are one
    /// fused matrix on the CPU (SiLU to the bit, GELU to rounding), else as tensor operations.
    fn gated_product(&self, x: &Tensor, activation: Activation) -> candle_core::Result<Tensor> {
        let parts = match self {
            Projections::Fused { w, bias, widths } if widths.len() == 2 && widths[0] == widths[1] => {
                let y = with_bias(w.forward(x)?, bias)?;
                if let Some(product) = gated_product::gate_times_up(&y, widths[0], activation)? {
                    return Ok(product);
                }
                split(&y, widths)?
            }
            _ => self.forward(x)?,
        };
        let [gate, up]: [Tensor; 2] =
            parts.try_into().map_err(|_| candle_core::Error::Msg("gate/up projections: expected two outputs".into()))?;
        let gate = match activation {
            Activation::Silu => candle_nn::ops::silu(&gate)?,
            Activation::GeluTanh => gate.gelu()?,
        };
        gate * up
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Vec<Tensor>> {
        match self {
            Projections::Fused { w, bias, widths } => split(&with_bias(w.forward(x)?, bias)?, widths),
            Projections::Separate(ws) => {
                // One copy and quantization of the input for all of them where our kernels run.
                let matrices: Vec<&WeightMatrix> = ws.iter().map(|(w, _)| w).collect();
                WeightMatrix::forward_each(&matrices, x)?
                    .into_iter()
                    .zip(ws)
                    .map(|(y, (_, bias))| with_bias(y, bias))
                    .collect()
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Layer {
    attn_norm: RmsNorm,
    /// q, k, v.
    qkv: Projections,
    wo: WeightMatrix,
    ffn_norm: RmsNorm,
    /// gate, up.
    gate_up: Projections,
    w_down: WeightMatrix,
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
    /// A tied Q8_0 table held once as our kernel's rows, which the output projection shares.
    OwnQ8_0(Arc<Q8Rows>),
}

/// The weights of one model: immutable, shared by every cache and thread.
#[derive(Debug)]
pub struct TransformerWeights {
    pub config: TransformerConfig,
    embeddings: Embeddings,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: WeightMatrix,
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

/// A matrix as the file's index describes it: enough to check it and to read it in place.
#[derive(Clone, Copy)]
struct MatrixInfo<'n> {
    name: &'n str,
    dtype: GgmlDType,
    rows: usize,
    width: usize,
    /// Where its data starts, from the start of the file's tensor data.
    offset: u64,
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
    /// Matrix `name` as the file's index describes it (nothing read).
    fn matrix_info<'n>(&self, name: &'n str) -> std::result::Result<MatrixInfo<'n>, String> {
        let info = self.content.tensor_infos.get(name).ok_or_else(|| format!("no tensor {name}"))?;
        let (rows, width) = info.shape.dims2().map_err(|e| format!("tensor {name}: {e}"))?;
        Ok(MatrixInfo { name, dtype: info.ggml_dtype, rows, width, offset: info.offset })
    }
    /// The Q8_0 matrix `matrix` read from the file straight into our kernel's rows, a piece at a
    /// time. Through candle's tensor the table would be in memory three times while it loads
    /// (the bytes read, candle's blocks, our rows): Gemma 3's 170 MiB embedding table set the
    /// model's peak memory that way.
    fn q8_0_rows(&mut self, matrix: &MatrixInfo) -> std::result::Result<Q8Rows, String> {
        use std::io::SeekFrom;
        let MatrixInfo { name, rows, width, offset, .. } = *matrix;
        let bytes = (rows as u64)
            .checked_mul(width as u64 / assay_kernels::q8_0::BLOCK as u64)
            .and_then(|blocks| blocks.checked_mul(assay_kernels::q8_0::GGML_BLOCK_BYTES as u64));
        let start = self.content.tensor_data_offset.checked_add(offset);
        let io = |e: std::io::Error| format!("tensor {name}: {e}");
        let file_len = self.reader.seek(SeekFrom::End(0)).map_err(io)?;
        // The table is allocated before it is read: its size must be bytes the file has.
        let Some(start) = start.filter(|s| bytes.and_then(|b| s.checked_add(b)).is_some_and(|end| end <= file_len)) else {
            return Err(format!("tensor {name}: {rows} × {width} Q8_0 weights run past the end of the file ({file_len} bytes)"));
        };
        self.reader.seek(SeekFrom::Start(start)).map_err(io)?;
        let reader = &mut *self.reader;
        Q8Rows::read_ggml(rows, width, |piece| reader.read_exact(piece))
            .map_err(io)?
            .ok_or_else(|| format!("tensor {name}: width {width} is not whole Q8_0 blocks of 32"))
    }
    fn matmul(&mut self, name: &str) -> std::result::Result<WeightMatrix, String> {
        let t = self.tensor(name)?;
        WeightMatrix::new(t).map_err(|e| format!("tensor {name}: {e}"))
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
            // Q4_1/Q5_0/Q5_1 bound for the CPU become Q8_0 before stacking, so parts of mixed
            // origin can fuse.
            let t = requantize_slow_type(t, self.device).map_err(|e| format!("tensor {full}: {e}"))?;
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
                    let w = WeightMatrix::new(t).map_err(|e| format!("tensor {full}: {e}"))?;
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
        let w = WeightMatrix::new(QTensor::new(storage, (rows, k)).map_err(fail)?).map_err(fail)?;
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
    fn md_string(&self, key: &str) -> Option<String> {
        self.content
            .metadata
            .get(&format!("{}.{key}", self.arch))
            .and_then(|v| v.to_string().ok())
            .cloned()
    }
    fn rows(&self, name: &str) -> std::result::Result<usize, String> {
        let info = self
            .content
            .tensor_infos
            .get(name)
            .ok_or_else(|| format!("tensor {name} is missing"))?;
        info.shape.dims2().map(|d| d.0).map_err(|e| format!("tensor {name}: {e}"))
    }
    /// One stored matrix whose rows are several projections one after the other (Phi-3's
    /// `attn_qkv` and `ffn_up`), cut into `widths`.
    fn stacked(&mut self, name: &str, widths: Vec<usize>) -> std::result::Result<Projections, String> {
        let full = format!("{name}.weight");
        let rows = self.rows(&full)?;
        if rows != widths.iter().sum::<usize>() || widths.contains(&0) {
            return Err(format!("tensor {full} has {rows} rows, expected parts of {widths:?}"));
        }
        let w = self.matmul(&full)?;
        let bias_name = format!("{name}.bias");
        let bias = if self.has(&bias_name) {
            Some(self.dense(&bias_name)?)
        } else {
            None
        };
        Ok(Projections::Fused { w, bias, widths })
    }
    /// Per-frequency RoPE divisors, when the file has them.
    fn freq_factors(&mut self, name: &str) -> std::result::Result<Option<Vec<f32>>, String> {
        if !self.has(name) {
            return Ok(None);
        }
        let t = self.dense(name)?;
        t.flatten_all()
            .and_then(|t| t.to_dtype(DType::F32))
            .and_then(|t| t.to_vec1::<f32>())
            .map(Some)
            .map_err(|e| format!("tensor {name}: {e}"))
    }
    /// The RoPE scaling the file asks for, and the context length it is valid for. Phi-3's
    /// LongRoPE has short factors up to the original context and long ones past it; only the
    /// short ones are used (as llama.cpp does for a context that short), so the context is
    /// limited to the original one.
    fn rope_scaling(
        &mut self,
        rotary_dims: usize,
        context_length: usize,
    ) -> std::result::Result<(RopeScaling, usize), String> {
        let kind = self.md_string("rope.scaling.type").unwrap_or_else(|| "linear".into());
        let factor = self
            .md_f32("rope.scaling.factor")
            .or_else(|| self.md_f32("rope.scale_linear"))
            .filter(|&f| f != 0.0);
        let freq_scale = match (kind.as_str(), factor) {
            ("none", _) | (_, None) => 1.0,
            ("linear" | "yarn" | "longrope", Some(f)) => 1.0 / f,
            (other, _) => {
                return Err(format!(
                    "rope.scaling.type `{other}` is not supported (supported: none, linear, yarn, longrope)"
                ))
            }
        };
        let original_context = self.md_u32("rope.scaling.original_context_length").unwrap_or(context_length);
        let yarn = if kind == "yarn" {
            if self.md_f32("rope.scaling.yarn_log_multiplier").is_some_and(|m| m != 0.0) {
                return Err("rope.scaling.yarn_log_multiplier (DeepSeek's YaRN) is not supported".into());
            }
            Some(Yarn {
                original_context,
                beta_fast: self.md_f32("rope.scaling.yarn_beta_fast").unwrap_or(32.0),
                beta_slow: self.md_f32("rope.scaling.yarn_beta_slow").unwrap_or(1.0),
                ext_factor: self.md_f32("rope.scaling.yarn_ext_factor").filter(|&e| e >= 0.0).unwrap_or(1.0),
            })
        } else {
            None
        };
        let mut context = context_length;
        let freq_factors = match self.freq_factors("rope_freqs.weight")? {
            Some(f) => Some(f),
            None => {
                let short = self.freq_factors("rope_factors_short.weight")?;
                if short.is_some() && self.has("rope_factors_long.weight") {
                    context = context.min(original_context);
                }
                short
            }
        };
        if let Some(f) = &freq_factors {
            if f.len() != rotary_dims / 2 {
                return Err(format!(
                    "{} RoPE frequency factors for {} rotary dimension pairs",
                    f.len(),
                    rotary_dims / 2
                ));
            }
        }
        let scaling = RopeScaling {
            freq_scale,
            yarn,
            freq_factors,
            attn_factor: self.md_f32("rope.scaling.attn_factor").unwrap_or(1.0),
        };
        Ok((scaling, context))
    }
    /// Which layers attend through the sliding window: the file's pattern (a period, or one
    /// flag per layer) or the architecture's.
    fn local_layers(
        &self,
        architecture: Architecture,
        layers: usize,
        windowed: bool,
    ) -> std::result::Result<Vec<bool>, String> {
        let Some(default_period) = architecture.sliding_window_pattern().filter(|_| windowed) else {
            return Ok(vec![false; layers]);
        };
        let key = format!("{}.attention.sliding_window_pattern", self.arch);
        let period = match self.content.metadata.get(&key) {
            None => default_period,
            Some(gguf_file::Value::Array(flags)) => {
                let flags: Vec<bool> = flags
                    .iter()
                    .map(|f| f.to_bool().map_err(|e| format!("{key}: {e}")))
                    .collect::<std::result::Result<_, _>>()?;
                if flags.len() < layers {
                    return Err(format!("{key} has {} flags for {layers} layers", flags.len()));
                }
                return Ok(flags[..layers].to_vec());
            }
            Some(v) => v.to_u32().map_err(|e| format!("{key}: {e}"))? as usize,
        };
        // Of every `period` layers the last is global; a period of 0 makes all local.
        Ok((0..layers).map(|i| period == 0 || i % period < period - 1).collect())
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
        let name = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        let Some(architecture) = Architecture::from_gguf_name(&name) else {
            return Err(LlmError::Gguf {
                path: path.to_path_buf(),
                message: format!(
                    "architecture `{name}` is not supported (supported: {})",
                    RUNNABLE_ARCHITECTURES.join(", ")
                ),
            });
        };
        let mut g = Gguf {
            content,
            reader,
            device,
            arch: name,
        };
        Self::load(&mut g, architecture).map_err(|message| LlmError::Gguf {
            path: path.to_path_buf(),
            message,
        })
    }

    fn load<R: std::io::Read + std::io::Seek>(
        g: &mut Gguf<'_, R>,
        architecture: Architecture,
    ) -> std::result::Result<Self, String> {
        let heads = g.md_u32("attention.head_count")?;
        let kv_heads = g.md_u32("attention.head_count_kv").unwrap_or(heads);
        let hidden = g.md_u32("embedding_length")?;
        let layers_n = g.md_u32("block_count")?;
        let mut context_length = g.md_u32("context_length")?;
        let rms_eps = g
            .md_f32("attention.layer_norm_rms_epsilon")
            .ok_or("metadata has no attention.layer_norm_rms_epsilon")? as f64;
        let rope_base = g.md_f32("rope.freq_base").unwrap_or(10_000.0);
        if heads == 0 || kv_heads == 0 || hidden % heads != 0 || heads % kv_heads != 0 {
            return Err(format!(
                "inconsistent attention shape: {heads} heads, {kv_heads} kv heads, hidden {hidden}"
            ));
        }
        let head_dim = g.md_u32("attention.key_length").unwrap_or(hidden / heads);
        let rotary_dims = g.md_u32("rope.dimension_count").unwrap_or(head_dim);
        if head_dim % 2 != 0 || rotary_dims % 2 != 0 || rotary_dims > head_dim {
            return Err(format!(
                "inconsistent rotary shape: head width {head_dim}, rope.dimension_count {rotary_dims}"
            ));
        }
        let (rope_scaling, scaled_context) = g.rope_scaling(rotary_dims, context_length)?;
        context_length = scaled_context;
        let embed_info = g.matrix_info("token_embd.weight")?;
        let (embed_type, vocab) = (embed_info.dtype, embed_info.rows);
        if embed_info.width != hidden {
            return Err(format!(
                "token_embd.weight has width {}, embedding_length is {hidden}",
                embed_info.width
            ));
        }
        let tied = !g.has("output.weight");
        // Tied Q8_0 embeddings on our Q8_0 kernel: one copy of the table serves the lookup and
        // the output projection, read from the file straight into it.
        let own_table_path = match tied && embed_type == GgmlDType::Q8_0 {
            true => WeightMatrix::tied_q8_0_path(g.device, vocab, hidden).map_err(|e| e.to_string())?,
            false => None,
        };
        let (output, embeddings) = if let Some(isa) = own_table_path {
            let table = Arc::new(g.q8_0_rows(&embed_info)?);
            (WeightMatrix::tied_q8_0(table.clone(), isa), Embeddings::OwnQ8_0(table))
        } else {
            let embed = Arc::new(g.tensor("token_embd.weight")?);
            let output = if tied {
                // Tied embeddings: the output projection is the embedding table.
                WeightMatrix::shared(embed.clone()).map_err(|e| e.to_string())?
            } else {
                g.matmul("output.weight")?
            };
            let embeddings = if embed.dtype() != GgmlDType::F32 && hidden % embed.dtype().block_size() == 0 {
                Embeddings::Quantized(embed)
            } else {
                Embeddings::Dense(embed.dequantize(g.device).map_err(|e| e.to_string())?)
            };
            (output, embeddings)
        };
        let norm = g.norm("output_norm.weight", rms_eps)?;
        let sliding_window = match architecture.sliding_window_pattern() {
            Some(_) => g
                .md_u32("attention.sliding_window")
                .ok()
                .or(architecture.default_sliding_window())
                .filter(|&w| w > 0),
            None => None,
        };
        let local_layers = g.local_layers(architecture, layers_n, sliding_window.is_some())?;
        let (q_width, kv_width) = (heads * head_dim, kv_heads * head_dim);
        let mut layers = Vec::with_capacity(layers_n);
        for (i, local) in local_layers.into_iter().enumerate() {
            let p = format!("blk.{i}");
            let names = |parts: &[&str]| -> Vec<String> { parts.iter().map(|n| format!("{p}.{n}")).collect() };
            let qkv = if g.has(&format!("{p}.attn_qkv.weight")) {
                g.stacked(&format!("{p}.attn_qkv"), vec![q_width, kv_width, kv_width])?
            } else {
                g.projections(&names(&["attn_q", "attn_k", "attn_v"]))?
            };
            let gate_up = if g.has(&format!("{p}.ffn_gate.weight")) {
                g.projections(&names(&["ffn_gate", "ffn_up"]))?
            } else {
                // Phi-3: one matrix, the gate's rows then the up projection's.
                let up = format!("{p}.ffn_up");
                let rows = g.rows(&format!("{up}.weight"))?;
                g.stacked(&up, vec![rows / 2, rows / 2])?
            };
            layers.push(Layer {
                attn_norm: g.norm(&format!("{p}.attn_norm.weight"), rms_eps)?,
                qkv,
                wo: g.matmul(&format!("{p}.attn_output.weight"))?,
                ffn_norm: g.norm(&format!("{p}.ffn_norm.weight"), rms_eps)?,
                gate_up,
                w_down: g.matmul(&format!("{p}.ffn_down.weight"))?,
                q_norm: g.optional_norm(&format!("{p}.attn_q_norm.weight"), rms_eps)?,
                k_norm: g.optional_norm(&format!("{p}.attn_k_norm.weight"), rms_eps)?,
                post_attn_norm: g.optional_norm(&format!("{p}.post_attention_norm.weight"), rms_eps)?,
                post_ffn_norm: g.optional_norm(&format!("{p}.post_ffw_norm.weight"), rms_eps)?,
                local,
            });
        }
        let rope = |base: f32, scaling: &RopeScaling| {
            rope_tables(rotary_dims, base, context_length, scaling, g.device).map_err(|e| e.to_string())
        };
        let (cos, sin) = rope(rope_base, &rope_scaling)?;
        // Local layers rotate with a base of their own: Gemma 3's 10,000 whatever the global
        // base, and unscaled; Gemma 2's the global base and scaling.
        let (rope_base_local, local_scaling) = match architecture {
            Architecture::Gemma3 => (
                g.md_f32("rope.freq_base_swa").unwrap_or(10_000.0),
                RopeScaling {
                    attn_factor: rope_scaling.attn_factor,
                    ..RopeScaling::default()
                },
            ),
            _ => (g.md_f32("rope.freq_base_swa").unwrap_or(rope_base), rope_scaling.clone()),
        };
        let (cos_local, sin_local) = if sliding_window.is_some() {
            rope(rope_base_local, &local_scaling)?
        } else {
            (cos.clone(), sin.clone())
        };
        let (default_attention_cap, default_output_cap) = architecture.soft_caps();
        let cap = |key: &str, default: Option<f64>| match architecture {
            Architecture::Gemma2 => g.md_f32(key).map(f64::from).or(default).filter(|&c| c > 0.0),
            Architecture::Gemma3 if key == "final_logit_softcapping" => {
                g.md_f32(key).map(f64::from).filter(|&c| c > 0.0)
            }
            _ => None,
        };
        Ok(TransformerWeights {
            config: TransformerConfig {
                architecture,
                layers: layers_n,
                heads,
                kv_heads,
                head_dim,
                hidden,
                vocab,
                context_length,
                rms_eps,
                rope_base,
                rope_style: architecture.rope_style(),
                rotary_dims,
                rope_scaling,
                activation: architecture.activation(),
                embedding_scale: architecture.is_gemma().then(|| (hidden as f64).sqrt()),
                attention_scale: architecture.attention_scale(layers_n, hidden, heads, head_dim),
                attention_softcap: cap("attn_logit_softcapping", default_attention_cap),
                output_softcap: cap("final_logit_softcapping", default_output_cap),
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
            Embeddings::OwnQ8_0(table) => embed_q8_0(table, tokens)?,
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
        let global_mask = StepMask::new(seq, past, n_rep, None, &self.device);
        let local_mask = StepMask::new(seq, past, n_rep, self.config.sliding_window, &self.device);
        for (layer, slot) in self.layers.iter().zip(cache.layers.iter_mut()) {
            let ((cos, sin), mask) = if layer.local {
                (&local_rope, &local_mask)
            } else {
                (&global_rope, &global_mask)
            };
            // candle's CUDA norm and softmax kernels take contiguous inputs only (no-op when so).
            let h = layer.attn_norm.forward(&x.contiguous()?)?;
            let mut attn = self.attention(layer, &h, cos, sin, mask, slot, past)?;
            if let Some(n) = &layer.post_attn_norm {
                attn = n.forward(&attn)?;
            }
            x = (x + attn)?;
            let h = layer.ffn_norm.forward(&x.contiguous()?)?;
            let mut ffn = layer.w_down.forward(&layer.gate_up.gated_product(&h, self.config.activation)?)?;
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
        let mut logits = self.output.forward(&x)?;
        if let Some(cap) = self.config.output_softcap {
            logits = soft_cap(&logits, cap)?;
        }
        logits.to_dtype(DType::F32)
    }

    /// Rotate the first `rotary_dims` of each head of `t` (`[b, heads, seq, head_dim]`); the
    /// rest passes through (partial rotary, Phi-3/4).
    fn rotate(&self, t: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        let c = &self.config;
        let rope = |x: &Tensor| match c.rope_style {
            RopeStyle::Interleaved => candle_nn::rotary_emb::rope_i(x, cos, sin),
            RopeStyle::Halves => candle_nn::rotary_emb::rope(x, cos, sin),
        };
        if c.rotary_dims == c.head_dim {
            return rope(t);
        }
        let rotated = rope(&t.narrow(3, 0, c.rotary_dims)?.contiguous()?)?;
        let kept = t.narrow(3, c.rotary_dims, c.head_dim - c.rotary_dims)?;
        Tensor::cat(&[&rotated, &kept], 3)?.contiguous()
    }

    // The per-layer pieces of one forward step; bundling them would only rename the list.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        layer: &Layer,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: &StepMask<'_>,
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
        let (q, k) = (self.rotate(&q, cos, sin)?, self.rotate(&k, cos, sin)?);
        let (k, v) = append_kv(slot, past, &k, &v, c.context_length)?;
        if c.attention_softcap.is_none() {
            let window = if layer.local { c.sliding_window } else { None };
            if let Some(y) = cached_attention::causal_attention(&q, &k, &v, past, window, c.attention_scale)? {
                return layer.wo.forward(&y);
            }
        }
        // Grouped-query attention without copying K/V per query head: the query heads that
        // share a KV head are stacked as extra rows of that head.
        let n_rep = c.heads / c.kv_heads;
        let q = (q * c.attention_scale)?.reshape((b, c.kv_heads, n_rep * seq, c.head_dim))?;
        let mut att = q.matmul(&k.t()?)?;
        if let Some(cap) = c.attention_softcap {
            att = soft_cap(&att, cap)?;
        }
        let att = match mask.tensor()? {
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

/// `t` (on the CPU) on `device`.
fn move_qtensor(t: QTensor, device: &Device) -> candle_core::Result<QTensor> {
    if device.is_cpu() {
        return Ok(t);
    }
    QTensor::new(QStorage::from_data(t.data()?, device, t.dtype())?, t.shape().clone())
}

/// The attention mask of one forward step, built the first time a layer's tensor operations
/// ask for it: the CPU kernel (`cached_attention`) masks by position itself, and the 1.5B
/// model's mask for a 512-token prompt is 6 MiB.
struct StepMask<'a> {
    seq: usize,
    past: usize,
    n_rep: usize,
    window: Option<usize>,
    device: &'a Device,
    built: std::cell::OnceCell<Option<Tensor>>,
}

impl<'a> StepMask<'a> {
    fn new(seq: usize, past: usize, n_rep: usize, window: Option<usize>, device: &'a Device) -> Self {
        Self { seq, past, n_rep, window, device, built: std::cell::OnceCell::new() }
    }

    fn tensor(&self) -> candle_core::Result<Option<&Tensor>> {
        if self.built.get().is_none() {
            let mask = attention_mask(self.seq, self.past, self.n_rep, self.window, self.device)?;
            // Only this step's layers, one after another, reach here: the cell is still empty.
            let _ = self.built.set(mask);
        }
        Ok(self.built.get().and_then(Option::as_ref))
    }
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

/// `cap * tanh(x / cap)`: bounds scores smoothly (Gemma 2).
fn soft_cap(x: &Tensor, cap: f64) -> candle_core::Result<Tensor> {
    (x / cap)?.tanh()? * cap
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
