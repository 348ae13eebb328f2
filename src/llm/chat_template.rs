//! Chat prompts: a model's own template (`tokenizer.chat_template` in its GGUF, a Jinja
//! template as Hugging Face writes them) rendered with minijinja; for models without one (base
//! models such as Gemma 3 270M) the messages are joined as plain text.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{LlmError, Result};

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: "user".into(),
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: "assistant".into(),
            content: content.into(),
        }
    }
}

/// How a model turns messages into prompt text.
#[derive(Debug, Clone)]
pub enum ChatFormat {
    /// The model's Jinja template, with the BOS/EOS token texts it may refer to.
    Template {
        source: String,
        bos_token: String,
        eos_token: String,
        path: PathBuf,
    },
    /// No template: message contents separated by blank lines, the reply follows directly.
    Plain,
}

impl ChatFormat {
    /// Render `messages`, ending where the assistant's reply begins.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String> {
        match self {
            ChatFormat::Plain => {
                let mut out = messages
                    .iter()
                    .map(|m| m.content.trim_end())
                    .collect::<Vec<_>>()
                    .join("\n\n");
                out.push('\n');
                Ok(out)
            }
            ChatFormat::Template {
                source,
                bos_token,
                eos_token,
                path,
            } => render_template(source, messages, bos_token, eos_token, path),
        }
    }

    pub fn is_template(&self) -> bool {
        matches!(self, ChatFormat::Template { .. })
    }
}

fn render_template(
    source: &str,
    messages: &[ChatMessage],
    bos_token: &str,
    eos_token: &str,
    path: &Path,
) -> Result<String> {
    let err = |e: minijinja::Error| LlmError::ChatTemplate {
        path: path.to_path_buf(),
        message: format!("{e:#}"),
    };
    let mut env = crate::bounded_template::environment();
    // Hugging Face templates call `raise_exception` for conversations they reject.
    env.add_function("raise_exception", |msg: String| -> std::result::Result<String, minijinja::Error> {
        Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            msg,
        ))
    });
    // Python string methods (`.strip()`, `.startswith()`) that templates use.
    env.set_unknown_method_callback(python_string_methods);
    env.add_template("chat", source).map_err(err)?;
    let template = env.get_template("chat").map_err(err)?;
    crate::bounded_template::render(
        &template,
        minijinja::context! {
            messages => messages,
            add_generation_prompt => true,
            bos_token => bos_token,
            eos_token => eos_token,
        },
    )
    .map_err(err)
}

fn python_string_methods(
    _state: &minijinja::State,
    value: &minijinja::Value,
    method: &str,
    args: &[minijinja::Value],
) -> std::result::Result<minijinja::Value, minijinja::Error> {
    let Some(s) = value.as_str() else {
        return Err(minijinja::Error::from(minijinja::ErrorKind::UnknownMethod));
    };
    let arg = |i: usize| args.get(i).and_then(|a| a.as_str()).unwrap_or("");
    let v = match method {
        "strip" if args.is_empty() => s.trim().into(),
        "lstrip" if args.is_empty() => s.trim_start().into(),
        "rstrip" if args.is_empty() => s.trim_end().into(),
        "strip" => s.trim_matches(|c| arg(0).contains(c)).into(),
        "startswith" => s.starts_with(arg(0)).into(),
        "endswith" => s.ends_with(arg(0)).into(),
        "lower" => s.to_lowercase().into(),
        "upper" => s.to_uppercase().into(),
        "split" if args.is_empty() => s.split_whitespace().map(String::from).collect::<Vec<_>>().into(),
        "split" => s.split(arg(0)).map(String::from).collect::<Vec<_>>().into(),
        "replace" => s.replace(arg(0), arg(1)).into(),
        _ => return Err(minijinja::Error::from(minijinja::ErrorKind::UnknownMethod)),
    };
    Ok(v)
}
