//! `--target http:FILE.toml`: the description of a user's own question-answering service — how
//! to ask it (URL, method, headers, a JSON body whose strings are minijinja templates over the
//! question's fields) and where its answer is (a JSON pointer into the response, or into each
//! chunk of a server-sent-events or newline-delimited JSON stream). Read and checked whole
//! before a run starts; errors name the file, line and field.
//!
//! Secrets stay out of the file: `${NAME}` in a header value or the URL's path or query is read
//! from the environment when a request is sent, so the token is never in the file's hash, the
//! database or a report. A file reads only the variables it lists in `secrets` (a file someone
//! sent you cannot quietly read `AWS_SECRET_ACCESS_KEY`: the list is at the top, to review), and
//! never in the URL's scheme or host, so where requests go is always written in the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::models::server_spec::is_env_name;

#[derive(Debug, thiserror::Error)]
pub enum HttpSpecError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// How the service sends its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseStream {
    /// One JSON document.
    #[default]
    None,
    /// Server-sent events: `data: {json}` lines (`data: [DONE]` ends the stream).
    Sse,
    /// Newline-delimited JSON: one chunk per line.
    Ndjson,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpTargetSpec {
    /// The environment variables `${NAME}` may read: every one used must be listed here.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// The endpoint; `${NAME}` (a listed secret) may stand in its path or query.
    pub url: String,
    #[serde(default = "default_method")]
    pub method: String,
    /// Header values may hold `${NAME}` (tokens).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The JSON body; every string in it is a minijinja template over the question
    /// (`question`, `id`, `doc`, `tags`). Absent for GET.
    #[serde(default)]
    pub body: Option<toml::Value>,
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Attempts after the first, on timeouts, connection errors, 429 and 5xx.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Requests in flight at once (`--concurrency` overrides).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    pub response: ResponseSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponseSpec {
    #[serde(default)]
    pub stream: ResponseStream,
    /// JSON pointer to the answer text (in each chunk when streamed; the pieces are joined).
    pub answer: String,
    /// JSON pointer to the cited sources: an array of strings, or of objects whose
    /// `citation_field` is the id.
    #[serde(default)]
    pub citations: Option<String>,
    #[serde(default = "default_citation_field")]
    pub citation_field: String,
}

fn default_method() -> String {
    "POST".into()
}
fn default_timeout_s() -> u64 {
    120
}
fn default_retries() -> u32 {
    3
}
fn default_concurrency() -> usize {
    1
}
fn default_citation_field() -> String {
    "id".into()
}

impl HttpTargetSpec {
    /// Read and check `path`. Environment references are checked here too, so a missing token
    /// stops the run before it starts.
    pub fn load(path: &Path) -> Result<(Self, String), HttpSpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| HttpSpecError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let invalid = |message: String| HttpSpecError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let spec: HttpTargetSpec = toml::from_str(&text).map_err(|e| invalid(toml_error(&text, &e)))?;
        spec.check().map_err(invalid)?;
        Ok((spec, text))
    }

    fn check(&self) -> Result<(), String> {
        for (i, name) in self.secrets.iter().enumerate() {
            if !is_env_name(name) {
                // Not echoed: a pasted token in place of a name would land in the message.
                return Err(format!(
                    "field `secrets`: entry {} is not an environment variable name (capitals, digits and _, \
                     not starting with a digit)",
                    i + 1
                ));
            }
        }
        // Messages quote the URL as written: its expansion may hold a secret.
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(format!("field `url`: {:?} is not an http:// or https:// URL", self.url));
        }
        if self.url[..self.url.find("://").map_or(0, |i| i + 3)].contains("${") || authority(&self.url).contains("${") {
            return Err(format!(
                "field `url`: `${{…}}` in the scheme or host of {:?}: a secret may stand in the path or query, \
                 never choose where requests go",
                self.url
            ));
        }
        self.expand(&self.url).map_err(|e| format!("field `url`: {e}"))?;
        if !["GET", "POST", "PUT"].contains(&self.method.as_str()) {
            return Err(format!("field `method`: {:?} (expected GET, POST or PUT)", self.method));
        }
        for (name, value) in &self.headers {
            if name.contains("${") {
                return Err(format!("field `headers.{name}`: `${{…}}` may stand in a header's value, not its name"));
            }
            self.expand(value).map_err(|e| format!("field `headers.{name}`: {e}"))?;
        }
        if self.method == "GET" && self.body.is_some() {
            return Err("field `body`: a GET request has no body".into());
        }
        if let Some(body) = &self.body {
            check_templates(body, "body")?;
        }
        if self.timeout_s == 0 {
            return Err("field `timeout_s`: must be at least 1".into());
        }
        if !(1..=64).contains(&self.concurrency) {
            return Err(format!("field `concurrency`: {} (expected 1 to 64)", self.concurrency));
        }
        check_pointer(&self.response.answer).map_err(|e| format!("field `response.answer`: {e}"))?;
        if let Some(p) = &self.response.citations {
            check_pointer(p).map_err(|e| format!("field `response.citations`: {e}"))?;
        }
        Ok(())
    }
}

impl HttpTargetSpec {
    /// `text` with each `${NAME}` replaced by that environment variable, for names the file
    /// lists in `secrets`; an unlisted or unset one is an error naming it (never its value).
    pub fn expand(&self, text: &str) -> Result<String, String> {
        expand_env(text, &self.secrets)
    }
}

/// The URL's host and port (and user info): what lies between `://` and the path.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

/// `${NAME}` replaced by the environment variable NAME when `allowed` lists it; an unlisted or
/// unset one is an error naming it.
pub fn expand_env(text: &str, allowed: &[String]) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| format!("`${{` without a closing `}}` in {text:?}"))?;
        let name = &after[..end];
        if !is_env_name(name) {
            return Err(format!("`${{{name}}}` is not an environment variable name (capitals, digits and _)"));
        }
        if !allowed.iter().any(|a| a == name) {
            return Err(format!(
                "`${{{name}}}` is not listed in `secrets`: add `secrets = [\"{name}\"]` at the top of the file \
                 to let it read that variable"
            ));
        }
        let value = std::env::var(name).map_err(|_| format!("environment variable {name} is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn check_pointer(pointer: &str) -> Result<(), String> {
    if pointer.is_empty() || pointer.starts_with('/') {
        Ok(())
    } else {
        Err(format!("{pointer:?} is not a JSON pointer (it starts with `/`, e.g. \"/answer\")"))
    }
}

fn check_templates(value: &toml::Value, field: &str) -> Result<(), String> {
    match value {
        toml::Value::String(s) => {
            let env = crate::bounded_template::environment();
            env.template_from_str(s)
                .map(|_| ())
                .map_err(|e| format!("field `{field}`: template {s:?}: {e}"))
        }
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check_templates(v, &format!("{field}[{i}]"))),
        toml::Value::Table(table) => table
            .iter()
            .try_for_each(|(k, v)| check_templates(v, &format!("{field}.{k}"))),
        toml::Value::Datetime(_) => Err(format!("field `{field}`: a date has no JSON form; quote it")),
        _ => Ok(()),
    }
}

/// A TOML error as `line N: message`.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_references_expand_and_others_are_named() {
        std::env::set_var("ASSAY_SPEC_TEST_TOKEN", "s3cret");
        let listed = ["ASSAY_SPEC_TEST_TOKEN".to_string(), "ASSAY_SPEC_TEST_UNSET".to_string()];
        assert_eq!(expand_env("Bearer ${ASSAY_SPEC_TEST_TOKEN}", &listed).unwrap(), "Bearer s3cret");
        assert_eq!(expand_env("no references", &[]).unwrap(), "no references");
        let err = expand_env("Bearer ${ASSAY_SPEC_TEST_UNSET}", &listed).unwrap_err();
        assert!(err.contains("ASSAY_SPEC_TEST_UNSET is not set"), "{err}");
        let err = expand_env("Bearer ${ASSAY_SPEC_TEST_TOKEN}", &[]).unwrap_err();
        assert!(err.contains("not listed in `secrets`") && !err.contains("s3cret"), "{err}");
        assert!(expand_env("${unclosed", &listed).is_err());
        assert!(expand_env("${bad name}", &listed).is_err());
        assert!(expand_env("${lower}", &["lower".to_string()]).is_err());
    }

    #[test]
    fn env_names_are_capitals_digits_and_underscores() {
        for good in ["MY_KEY", "_X", "A1"] {
            assert!(is_env_name(good), "{good}");
        }
        for bad in ["", "1A", "my_key", "sk-abc123", "A B", "A-B"] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }
}
