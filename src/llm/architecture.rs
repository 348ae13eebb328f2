//! The GGUF architectures the runtime runs, and what each changes in the shared decoder
//! (transformer.rs): rotation style, activation, embedding scale, which layers attend
//! through a sliding window, soft-capping, the attention scale. Adding an architecture is an
//! entry here plus its tensor names in the loader. The rules follow llama.cpp, the reference
//! the differential tests compare against.

/// How query/key pairs are rotated: adjacent pairs (llama as converted to GGUF) or the two
/// halves of each head's rotary part (NeoX style: Qwen, Phi-3, Gemma).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeStyle {
    Interleaved,
    Halves,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    Silu,
    GeluTanh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// Llama 1–3.x and the models converted as `llama` (Mistral 7B, SmolLM2, TinyLlama).
    Llama,
    Qwen2,
    /// Qwen2 without q/k/v biases, with per-head q/k norms.
    Qwen3,
    /// Phi-3, 3.5 and 4-mini: fused q/k/v and gate/up, partial rotary, LongRoPE factors.
    Phi3,
    /// Gemma 2: soft-capped attention and output, every other layer local.
    Gemma2,
    /// Gemma 3: q/k norms, five local layers to one global.
    Gemma3,
}

impl Architecture {
    const ALL: [Architecture; 6] = [
        Architecture::Llama,
        Architecture::Qwen2,
        Architecture::Qwen3,
        Architecture::Phi3,
        Architecture::Gemma2,
        Architecture::Gemma3,
    ];

    /// The `general.architecture` value of GGUF files of this architecture.
    pub fn gguf_name(self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Qwen2 => "qwen2",
            Architecture::Qwen3 => "qwen3",
            Architecture::Phi3 => "phi3",
            Architecture::Gemma2 => "gemma2",
            Architecture::Gemma3 => "gemma3",
        }
    }

    pub fn from_gguf_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.gguf_name() == name)
    }

    pub fn rope_style(self) -> RopeStyle {
        match self {
            Architecture::Llama => RopeStyle::Interleaved,
            _ => RopeStyle::Halves,
        }
    }

    pub fn activation(self) -> Activation {
        match self {
            Architecture::Gemma2 | Architecture::Gemma3 => Activation::GeluTanh,
            _ => Activation::Silu,
        }
    }

    pub fn is_gemma(self) -> bool {
        matches!(self, Architecture::Gemma2 | Architecture::Gemma3)
    }

    /// Of every `n` layers the first `n - 1` are local, when the file gives a window.
    pub fn sliding_window_pattern(self) -> Option<usize> {
        match self {
            Architecture::Gemma2 => Some(2),
            Architecture::Gemma3 => Some(6),
            // Phi-3 files carry a window that llama.cpp ignores (its conversion is known to
            // be wrong); ignored here too, so both runtimes agree.
            _ => None,
        }
    }

    /// The window when the file names none.
    pub fn default_sliding_window(self) -> Option<usize> {
        match self {
            Architecture::Gemma2 => Some(4096),
            _ => None,
        }
    }

    /// Soft-capping of attention scores and output logits: (attention, output) defaults,
    /// overridden by the file's `attn_logit_softcapping` / `final_logit_softcapping`.
    pub fn soft_caps(self) -> (Option<f64>, Option<f64>) {
        match self {
            Architecture::Gemma2 => (Some(50.0), Some(30.0)),
            // Gemma 3 caps the output only when the file asks.
            _ => (None, None),
        }
    }

    /// The query scale. Gemma's 27B models scale by the model width per head rather than
    /// the head width (their `query_pre_attn_scalar`); GGUF does not carry it, and llama.cpp
    /// recognises them by their layer count, as here.
    pub fn attention_scale(self, layers: usize, hidden: usize, heads: usize, head_dim: usize) -> f64 {
        let width = match (self, layers) {
            (Architecture::Gemma2, 46) | (Architecture::Gemma3, 62) => hidden / heads,
            _ => head_dim,
        };
        1.0 / (width as f64).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::Architecture;
    use crate::models::gguf_info::RUNNABLE_ARCHITECTURES;

    /// The registry refuses GGUFs by the list in `models` (it cannot see the runtime): that list
    /// and the runtime's architectures must be the same set, in the same order.
    #[test]
    fn the_registry_list_is_the_runtime_list() {
        let runtime: Vec<&str> = Architecture::ALL.iter().map(|a| a.gguf_name()).collect();
        assert_eq!(runtime, RUNNABLE_ARCHITECTURES);
        assert_eq!(Architecture::from_gguf_name("bert"), None);
    }
}
