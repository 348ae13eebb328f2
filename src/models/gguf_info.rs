//! What a GGUF file says about itself: architecture, parameter count, quantization, context
//! length. Read from the header only (no weights loaded), for `assay models add` and `list`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use serde::Serialize;

use super::error::{ModelsError, Result};

/// The `general.architecture` values the runtime runs (`llm::architecture` keeps the same list,
/// checked by a test there): the registry refuses other GGUFs when they are added, rather than at
/// the first run that loads one.
pub const RUNNABLE_ARCHITECTURES: [&str; 6] = ["llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"];

#[derive(Debug, Clone, Serialize)]
pub struct GgufInfo {
    pub path: PathBuf,
    pub architecture: String,
    pub name: Option<String>,
    /// Total number of weights over all tensors.
    pub parameters: u64,
    /// The quantization holding most weights (e.g. `Q4_K`), with its share of all weights.
    pub quantization: String,
    pub quantization_share: f64,
    pub context_length: Option<u64>,
    pub has_chat_template: bool,
    pub tokenizer_model: Option<String>,
}

impl GgufInfo {
    pub fn read(path: &Path) -> Result<Self> {
        let content = read_content(path)?;
        let md = &content.metadata;
        let string = |key: &str| md.get(key).and_then(|v| v.to_string().ok()).cloned();
        let architecture = string("general.architecture").ok_or_else(|| ModelsError::Gguf {
            path: path.to_path_buf(),
            message: "metadata has no general.architecture".into(),
        })?;
        let context_length = md
            .get(&format!("{architecture}.context_length"))
            .and_then(|v| v.to_u64().ok());
        let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
        let mut parameters = 0u64;
        for info in content.tensor_infos.values() {
            // Shapes were checked by `read_content`: their products fit.
            let n = info.shape.dims().iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
            parameters = parameters.saturating_add(n);
            let count = by_type.entry(format!("{:?}", info.ggml_dtype)).or_default();
            *count = count.saturating_add(n);
        }
        let (quantization, count) = by_type
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(t, n)| (t.clone(), *n))
            .unwrap_or_else(|| ("none".into(), 0));
        Ok(GgufInfo {
            path: path.to_path_buf(),
            architecture,
            name: string("general.name"),
            parameters,
            quantization,
            quantization_share: if parameters == 0 {
                0.0
            } else {
                count as f64 / parameters as f64
            },
            context_length,
            has_chat_template: md.contains_key("tokenizer.chat_template"),
            tokenizer_model: string("tokenizer.ggml.model"),
        })
    }

    /// One line for a registry entry's description.
    pub fn summary(&self) -> String {
        let name = self.name.clone().unwrap_or_else(|| "GGUF model".into());
        let ctx = self
            .context_length
            .map(|c| format!(", context {c}"))
            .unwrap_or_default();
        format!(
            "{name}: {} arch, {} parameters, {}{ctx}",
            self.architecture,
            human_count(self.parameters),
            self.quantization
        )
    }
}

/// Read a GGUF header, turning candle's errors into ones that name the file.
pub(crate) fn read_content(path: &Path) -> Result<gguf_file::Content> {
    let file = fs::File::open(path).map_err(|e| ModelsError::io(path, e))?;
    let len = file.metadata().map_err(|e| ModelsError::io(path, e))?.len();
    let gguf_error = |message: String| ModelsError::Gguf {
        path: path.to_path_buf(),
        message,
    };
    let mut reader = std::io::BufReader::new(file);
    // candle builds a 32-byte value per metadata array element: bound them before it reads.
    super::gguf_bounds::scan_metadata(&mut reader).map_err(|why| gguf_error(format!("{why}; not read")))?;
    // candle's reader panics on some malformed headers (a zero `general.alignment`).
    let content = crate::third_party_panic::contain(|| gguf_file::Content::read(&mut reader))
        .map_err(|panic| gguf_error(format!("malformed header ({panic})")))?
        .map_err(|e| {
            let message = super::error::candle_message(&e);
            if message.contains("failed to fill whole buffer") {
                gguf_error(format!("the file ends inside its header ({len} bytes): truncated or not a GGUF file"))
            } else {
                gguf_error(message)
            }
        })?;
    super::gguf_bounds::check_dimensions(&content).map_err(gguf_error)?;
    // A truncated file has a whole header but lacks tensor data: check the extents here so
    // that loading fails with a clear message instead of a short read deep in candle.
    for (name, info) in &content.tensor_infos {
        let bytes = tensor_bytes(info)
            .ok_or_else(|| gguf_error(format!("tensor {name}: impossible shape {:?}", info.shape.dims())))?;
        let end = content.tensor_data_offset.saturating_add(info.offset).saturating_add(bytes);
        if end > len {
            return Err(gguf_error(format!(
                "file is truncated: tensor {name} ends at byte {end}, the file has {len}"
            )));
        }
    }
    Ok(content)
}

/// Bytes of a tensor's data; None when its element count overflows or does not fill whole
/// blocks of its type (only a malformed header says so).
fn tensor_bytes(info: &gguf_file::TensorInfo) -> Option<u64> {
    let elems = info
        .shape
        .dims()
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))?;
    let block = info.ggml_dtype.block_size() as u64;
    if block == 0 || elems % block != 0 {
        return None;
    }
    (elems / block).checked_mul(info.ggml_dtype.type_size() as u64)
}

pub fn human_count(n: u64) -> String {
    if n >= 1_000_000_000 {
        format!("{:.2}B", n as f64 / 1e9)
    } else if n >= 1_000_000 {
        format!("{:.0}M", n as f64 / 1e6)
    } else {
        n.to_string()
    }
}
