//! Models served by an inference server — llama.cpp's llama-server, vLLM, Ollama, LM Studio —
//! through the OpenAI-compatible API: `/chat/completions`, streamed. This is how Assay scales
//! past one machine: the serving engine batches, shards and replicates; Assay sends requests.
//! Several base URLs for one model are replicas, used in turn. The API key is read from the
//! environment variable the spec names, when a request is sent: it is never stored.
//!
//! Registered in the user's models file as `[[server]]` tables (`assay models add-server`,
//! server_spec.rs).
//!
//! Every response is read through `capped_body` (an answer is text, never gigabytes), and
//! redirects are not followed: the API key travels in the request, and an endpoint that
//! redirects is reported so its final URL can be registered. Generations are cached under
//! [`ServerModel::identity`] — the endpoints, the model name and what the server says about the
//! model it serves — never under the name alone: llama-server calls every model `model`.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::capped_body::{is_too_large, CappedBody, MAX_RESPONSE_BYTES};
use super::chat_template::ChatMessage;
use super::error::{ContextOverflow, LlmError, Result};
use super::generate::GenerationParams;
use super::prompt_text::for_server;
use crate::models::server_spec::ServerSpec;
use super::sse;

/// A served model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerGeneration {
    pub text: String,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    /// Why the server stopped (`stop`, `length`).
    pub finish_reason: Option<String>,
    pub first_token_ms: Option<u64>,
}

pub struct ServerModel {
    pub spec: ServerSpec,
    agent: ureq::Agent,
    next_replica: AtomicUsize,
}

impl ServerModel {
    pub fn new(spec: ServerSpec) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(spec.timeout_s))
            .redirects(0)
            .build();
        ServerModel {
            spec,
            agent,
            next_replica: AtomicUsize::new(0),
        }
    }

    fn api_key(&self) -> Result<Option<String>> {
        match &self.spec.api_key_env {
            None => Ok(None),
            Some(name) => std::env::var(name).map(Some).map_err(|_| {
                LlmError::Invalid(format!(
                    "server model {}: environment variable {name} (its API key) is not set",
                    self.spec.id
                ))
            }),
        }
    }

    /// POST `body` to `base` + `path`; a failure says whether another try may help.
    fn post(&self, base: &str, path: &str, body: &serde_json::Value) -> std::result::Result<ureq::Response, Failure> {
        let mut request = self
            .agent
            .post(&format!("{}{path}", base.trim_end_matches('/')))
            .set("Content-Type", "application/json");
        if let Ok(Some(key)) = self.api_key() {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        Ok(not_redirected(request.send_json(body).map_err(request_error)?)?)
    }

    /// GET `base` + `path` as JSON (capped), within `timeout`.
    fn get_json(&self, url: &str, timeout: Duration) -> std::result::Result<serde_json::Value, Failure> {
        let mut request = self.agent.get(url).timeout(timeout);
        if let Ok(Some(key)) = self.api_key() {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        let response = not_redirected(request.call().map_err(request_error)?)?;
        Ok(read_json(response)?)
    }

    /// Chat completion of `messages`, streamed. Transient failures move to the next replica
    /// after a pause; the error after the last attempt names the endpoint and the server's
    /// message.
    pub fn chat(
        &self,
        messages: &[ChatMessage],
        params: &GenerationParams,
        cancel: Option<&AtomicBool>,
    ) -> Result<ServerGeneration> {
        self.api_key()?;
        let mut body = serde_json::json!({
            "model": self.spec.model,
            "messages": messages_json(messages),
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "seed": params.seed,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !params.stop.is_empty() {
            body["stop"] = serde_json::json!(params.stop);
        }
        if let Some(p) = params.top_p {
            body["top_p"] = serde_json::json!(p);
        }
        self.with_retries(cancel, |base| self.stream_chat(base, &body, cancel))
    }

    /// The log-probabilities of the most likely first tokens of the reply to `messages`
    /// (`top` of them), as (token text, logprob). A server that gives none is an error that
    /// says so: choice judges cannot run on it.
    pub fn first_token_logprobs(&self, messages: &[ChatMessage], top: usize) -> Result<Vec<(String, f64)>> {
        self.api_key()?;
        let body = serde_json::json!({
            "model": self.spec.model,
            "messages": messages_json(messages),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": true,
            "top_logprobs": top,
        });
        self.with_retries(None, |base| {
            let reply = read_json(self.post(base, "/chat/completions", &body)?)?;
            let top = reply
                .pointer("/choices/0/logprobs/content/0/top_logprobs")
                .and_then(|t| t.as_array())
                .filter(|t| !t.is_empty())
                .ok_or_else(|| {
                    let message = "the server gave no token log-probabilities (`logprobs`/`top_logprobs`): \
                                   choice judges need them (llama-server and vLLM give them)";
                    (message.to_string(), false)
                })?;
            Ok(top
                .iter()
                .filter_map(|t| Some((t.get("token")?.as_str()?.to_string(), t.get("logprob")?.as_f64()?)))
                .collect())
        })
    }

    /// `request` on the replicas in turn until it succeeds, fails for good, or the retries
    /// are spent (with a growing pause between tries); the error names the endpoint.
    fn with_retries<T>(
        &self,
        cancel: Option<&AtomicBool>,
        request: impl Fn(&str) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        let mut attempt = 0;
        loop {
            let base = self.replica();
            match request(&base) {
                Ok(value) => return Ok(value),
                Err(Failure { message, transient, overflow }) => {
                    let cancelled = cancel.is_some_and(|c| c.load(Ordering::Relaxed));
                    if !transient || attempt >= self.spec.retries || cancelled {
                        return Err(LlmError::Server {
                            endpoint: format!("{}/chat/completions ({})", base.trim_end_matches('/'), self.spec.model),
                            message,
                            overflow,
                        });
                    }
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(500 << (attempt - 1).min(4)));
                }
            }
        }
    }

    /// The replica for the next request: each in turn.
    fn replica(&self) -> String {
        let n = self.next_replica.fetch_add(1, Ordering::Relaxed);
        self.spec.base_urls[n % self.spec.base_urls.len()].clone()
    }

    /// One streamed request; the error says whether another try may help.
    fn stream_chat(
        &self,
        base: &str,
        body: &serde_json::Value,
        cancel: Option<&AtomicBool>,
    ) -> std::result::Result<ServerGeneration, Failure> {
        let started = Instant::now();
        let response = self.post(base, "/chat/completions", body)?;
        let mut out = ServerGeneration {
            text: String::new(),
            prompt_tokens: None,
            completion_tokens: None,
            finish_reason: None,
            first_token_ms: None,
        };
        let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        let events = sse::read_events(
            CappedBody::new(response.into_reader(), MAX_RESPONSE_BYTES),
            &cancelled,
            |data| {
                let data = data.trim();
                if data == "[DONE]" {
                    return Ok(ControlFlow::Break(()));
                }
                let chunk: serde_json::Value = serde_json::from_str(data)
                    .map_err(|e| (format!("a streamed chunk is not JSON ({e}): {:.200}", data), false))?;
                if let Some(error) = chunk.get("error") {
                    return Err((format!("the server reported: {error}"), false));
                }
                if let Some(choice) = chunk.pointer("/choices/0") {
                    if let Some(piece) = choice.pointer("/delta/content").and_then(|c| c.as_str()) {
                        out.first_token_ms.get_or_insert(started.elapsed().as_millis() as u64);
                        out.text.push_str(piece);
                    }
                    if let Some(reason) = choice.get("finish_reason").and_then(|r| r.as_str()) {
                        out.finish_reason = Some(reason.to_string());
                    }
                }
                if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
                    out.prompt_tokens = usage.get("prompt_tokens").and_then(|t| t.as_u64()).map(|t| t as u32);
                    out.completion_tokens = usage.get("completion_tokens").and_then(|t| t.as_u64()).map(|t| t as u32);
                }
                Ok(ControlFlow::Continue(()))
            },
            |e, n| match is_too_large(&e) {
                true => (format!("after {n} chunks, {e}"), false),
                false => (format!("the stream broke after {n} chunks: {e}"), true),
            },
            || ("cancelled".to_string(), false),
        )?;
        if events == 0 {
            return Err(("the server answered with an empty stream".to_string(), false).into());
        }
        Ok(out)
    }

    /// What identifies the model this spec reaches, for the generation cache and a run's
    /// config: every endpoint, the model name, and what each endpoint reports about the model it
    /// serves — its `/models` entry (llama-server adds the weights' size, parameter count and
    /// vocabulary) and, where the server has one, llama-server's `/props` (the model file's path
    /// and its chat template). A field that changes on every start (`created`) is left out. An
    /// endpoint that does not answer still counts by its URL: two servers never share a key,
    /// whatever they call their model.
    pub fn identity(&self) -> String {
        let timeout = Duration::from_secs(5);
        let mut parts = vec![format!("model={}", self.spec.model)];
        for base in &self.spec.base_urls {
            let base = base.trim_end_matches('/');
            parts.push(format!("endpoint={base}"));
            if let Ok(list) = self.get_json(&format!("{base}/models"), timeout) {
                let entries = list.pointer("/data").and_then(|d| d.as_array()).cloned().unwrap_or_default();
                let entry = entries
                    .iter()
                    .find(|m| m.get("id").and_then(|i| i.as_str()) == Some(self.spec.model.as_str()))
                    .or_else(|| entries.first().filter(|_| entries.len() == 1));
                if let Some(mut entry) = entry.cloned() {
                    if let Some(fields) = entry.as_object_mut() {
                        fields.remove("created");
                    }
                    parts.push(format!("models={entry}"));
                }
            }
            // llama-server's `/props` sits beside the API root, outside `/v1`.
            let root = base.strip_suffix("/v1").unwrap_or(base);
            if let Ok(props) = self.get_json(&format!("{root}/props"), timeout) {
                for field in ["model_path", "chat_template", "model_alias"] {
                    if let Some(value) = props.get(field) {
                        parts.push(format!("props.{field}={value}"));
                    }
                }
            }
        }
        parts.join("\n")
    }

    /// Whether each replica answers (`GET /models`), with the reason when one does not.
    pub fn probe(&self) -> Vec<(String, std::result::Result<(), String>)> {
        self.spec
            .base_urls
            .iter()
            .map(|base| {
                let url = format!("{}/models", base.trim_end_matches('/'));
                let outcome = match self.get_json(&url, Duration::from_secs(5)) {
                    Ok(list) => {
                        let names: Vec<&str> = list
                            .pointer("/data")
                            .and_then(|d| d.as_array())
                            .map(|d| d.iter().filter_map(|m| m.get("id").and_then(|i| i.as_str())).collect())
                            .unwrap_or_default();
                        // llama-server serves one model whatever the name asked; others
                        // list theirs, and a name they do not list would be refused.
                        if names.is_empty() || names.contains(&self.spec.model.as_str()) || names.len() == 1 {
                            Ok(())
                        } else {
                            Err(format!("serves {} but not {}", names.join(", "), self.spec.model))
                        }
                    }
                    Err(failure) => Err(failure.message),
                };
                (base.clone(), outcome)
            })
            .collect()
    }
}

/// The messages as the API takes them. The untrusted-value marks are for our own tokenizer; a
/// server gets plain text (and applies its own chat template to it), its values without
/// chat-marker text (`prompt_text::for_server`).
fn messages_json(messages: &[ChatMessage]) -> Vec<serde_json::Value> {
    messages
        .iter()
        .map(|m| serde_json::json!({"role": m.role, "content": for_server(&m.content)}))
        .collect()
}

/// A 3xx reply as an error: redirects are not followed (see the module comment).
fn not_redirected(response: ureq::Response) -> std::result::Result<ureq::Response, (String, bool)> {
    if !(300..400).contains(&response.status()) {
        return Ok(response);
    }
    let location = response.header("location").unwrap_or("nowhere");
    let host = match location.split_once("://") {
        Some((_, rest)) => rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())].rsplit('@').next().unwrap_or(""),
        None => "the same host",
    };
    Err((
        format!(
            "HTTP {}: the server redirects (to {host}); redirects are not followed: register its final URL",
            response.status()
        ),
        false,
    ))
}

/// A reply's JSON, read up to the response cap.
fn read_json(response: ureq::Response) -> std::result::Result<serde_json::Value, (String, bool)> {
    serde_json::from_reader(CappedBody::new(response.into_reader(), MAX_RESPONSE_BYTES)).map_err(|e| {
        if e.is_io() {
            let io = std::io::Error::from(e);
            return (format!("reading the reply: {io}"), !is_too_large(&io));
        }
        (format!("the reply is not JSON: {e}"), false)
    })
}

/// A failed request: the message, whether another try may help, and, when the prompt did not
/// fit the server's context window, what the server said about it.
struct Failure {
    message: String,
    transient: bool,
    overflow: Option<ContextOverflow>,
}

impl From<(String, bool)> for Failure {
    fn from((message, transient): (String, bool)) -> Self {
        Failure { message, transient, overflow: None }
    }
}

/// A failed request's message, and whether another try may help (timeouts, connection
/// errors, 429, 5xx). The URL is left out of transport errors: the spec's names it.
fn request_error(e: ureq::Error) -> Failure {
    match e {
        ureq::Error::Status(code, response) => {
            let body = response.into_string().unwrap_or_default();
            let said: String = body.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(300).collect();
            let overflow = if code == 400 || code == 413 { context_overflow(&body) } else { None };
            Failure { message: format!("HTTP {code}: {said}"), transient: code == 429 || code >= 500, overflow }
        }
        ureq::Error::Transport(t) => Failure {
            message: match t.message() {
                Some(m) => format!("{}: {m}", t.kind()),
                None => t.kind().to_string(),
            },
            transient: true,
            overflow: None,
        },
    }
}

/// Whether an error reply says the prompt is longer than the context window, and the sizes it
/// gives. llama-server: `{"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 631,
/// "n_ctx": 256, …}}`; vLLM and OpenAI: a message "…maximum context length is 4096 tokens.
/// However, you requested 5000 tokens…" (OpenAI adds `"code": "context_length_exceeded"`).
fn context_overflow(body: &str) -> Option<ContextOverflow> {
    let reply: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = reply.get("error").filter(|e| e.is_object()).unwrap_or(&reply);
    let text = |key: &str| error.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let size = |key: &str| error.get(key).and_then(|v| v.as_u64()).map(|n| n as usize);
    let message = text("message").to_ascii_lowercase();
    if text("type") == "exceed_context_size_error" || message.contains("exceeds the available context size") {
        return Some(ContextOverflow { prompt_tokens: size("n_prompt_tokens"), window: size("n_ctx") });
    }
    if text("code") == "context_length_exceeded" || message.contains("maximum context length") {
        return Some(ContextOverflow {
            prompt_tokens: number_after(&message, "requested ").or_else(|| number_after(&message, "resulted in ")),
            window: number_after(&message, "maximum context length is "),
        });
    }
    None
}

/// The whole number that follows the first `cue` in `text`.
fn number_after(text: &str, cue: &str) -> Option<usize> {
    let rest = &text[text.find(cue)? + cue.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| *c != ',').collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overflow_is_read_from_each_servers_wording() {
        // llama-server, as it answered a 631-token prompt with a 256-token window here.
        let llama = r#"{"error":{"code":400,"message":"request (631 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":631,"n_ctx":256}}"#;
        assert_eq!(context_overflow(llama), Some(ContextOverflow { prompt_tokens: Some(631), window: Some(256) }));
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4,096 tokens. However, you requested 5000 tokens (4999 in the messages, 1 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(context_overflow(vllm), Some(ContextOverflow { prompt_tokens: Some(5000), window: Some(4096) }));
        let openai = r#"{"error":{"message":"Your messages resulted in 9001 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert_eq!(context_overflow(openai), Some(ContextOverflow { prompt_tokens: Some(9001), window: None }));
        for other in [r#"{"error":{"message":"model not found","type":"not_found"}}"#, "Bad Request", ""] {
            assert_eq!(context_overflow(other), None, "{other}");
        }
    }
}
