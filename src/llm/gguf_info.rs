//! What a GGUF file says about itself: architecture, parameter count, quantization, context
//! length. Read from the header only (no weights loaded), for `assay models add` and `list`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use serde::Serialize;

use super::error::{LlmError, Result};

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
        let architecture = string("general.architecture").ok_or_else(|| LlmError::Gguf {
            path: path.to_path_buf(),
            message: "metadata has no general.architecture".into(),
        })?;
        let context_length = md
            .get(&format!("{architecture}.context_length"))
            .and_then(|v| v.to_u64().ok());
        let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
        let mut parameters = 0u64;
        for info in content.tensor_infos.values() {
            let n = info.shape.elem_count() as u64;
            parameters += n;
            *by_type.entry(format!("{:?}", info.ggml_dtype)).or_default() += n;
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
    let mut file = fs::File::open(path).map_err(|e| LlmError::io(path, e))?;
    let content = gguf_file::Content::read(&mut file).map_err(|e| LlmError::Gguf {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    // A truncated file has a whole header but lacks tensor data: check the extents here so
    // that loading fails with a clear message instead of a short read deep in candle.
    let len = file
        .metadata()
        .map_err(|e| LlmError::io(path, e))?
        .len();
    for (name, info) in &content.tensor_infos {
        let elems = info.shape.elem_count();
        let block = info.ggml_dtype.block_size();
        let bytes = (elems / block.max(1)) as u64 * info.ggml_dtype.type_size() as u64;
        let end = content.tensor_data_offset.saturating_add(info.offset).saturating_add(bytes);
        if end > len {
            return Err(LlmError::Gguf {
                path: path.to_path_buf(),
                message: format!(
                    "file is truncated: tensor {name} ends at byte {end}, the file has {len}"
                ),
            });
        }
    }
    Ok(content)
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
