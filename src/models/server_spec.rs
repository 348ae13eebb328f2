//! A served model as the user's models file registers it (`[[server]]`): where it is served,
//! under what name, and which environment variable holds its API key.

use serde::{Deserialize, Serialize};

/// One served model, as the user's models file registers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// The id `--model` / `--judge-model` take.
    pub id: String,
    /// OpenAI-compatible API roots, e.g. `http://127.0.0.1:8080/v1`; several are replicas.
    pub base_urls: Vec<String>,
    /// The model name the server expects in requests.
    pub model: String,
    /// Name of the environment variable holding the API key, if the server wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Attempts after the first on timeouts, connection errors, 429 and 5xx.
    #[serde(default = "default_retries")]
    pub retries: u32,
}

fn default_timeout_s() -> u64 {
    300
}
fn default_retries() -> u32 {
    2
}

impl ServerSpec {
    /// What is wrong with the spec, if anything (checked when the models file is read).
    pub fn problem(&self) -> Option<String> {
        if self.base_urls.is_empty() {
            return Some("base_urls: at least one URL is needed".into());
        }
        if let Some(url) = self
            .base_urls
            .iter()
            .find(|u| !(u.starts_with("http://") || u.starts_with("https://")))
        {
            return Some(format!("base_urls: {url:?} is not an http:// or https:// URL"));
        }
        if self.model.trim().is_empty() {
            return Some("model: the server's model name is needed".into());
        }
        if self.timeout_s == 0 {
            return Some("timeout_s: must be at least 1".into());
        }
        if self.api_key_env.as_deref().is_some_and(|name| !is_env_name(name)) {
            // Not repeated: what was given is often the key itself, pasted in place of its
            // variable's name, and would land in the terminal and the models file's errors.
            return Some(
                "api_key_env: not an environment variable name ([A-Z_][A-Z0-9_]*); give the name of the \
                 variable that holds the key (e.g. MY_SERVER_KEY), never the key"
                    .into(),
            );
        }
        None
    }
}

/// Whether `name` is an environment variable name as shells write them: `[A-Z_][A-Z0-9_]*`.
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'_'))
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}
