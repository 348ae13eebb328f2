//! Models served by an inference server — llama.cpp's llama-server, vLLM, Ollama, LM Studio —
//! through the OpenAI-compatible API: `/chat/completions`, streamed. This is how Assay scales
//! past one machine: the serving engine batches, shards and replicates; Assay sends requests.
//! Several base URLs for one model are replicas, used in turn. The API key is read from the
//! environment variable the spec names, when a request is sent: it is never stored.
//!
//! Registered in the user's models file as `[[server]]` tables (`assay models add-server`,
//! server_spec.rs).

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::chat_template::ChatMessage;
use super::error::{LlmError, Result};
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

    fn post(&self, base: &str, path: &str, body: &serde_json::Value) -> std::result::Result<ureq::Response, ureq::Error> {
        let mut request = self
            .agent
            .post(&format!("{}{path}", base.trim_end_matches('/')))
            .set("Content-Type", "application/json");
        if let Ok(Some(key)) = self.api_key() {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        request.send_json(body)
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
            let reply = self
                .post(base, "/chat/completions", &body)
                .map_err(request_error)?
                .into_json::<serde_json::Value>()
                .map_err(|e| (format!("the reply is not JSON: {e}"), false))?;
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
        request: impl Fn(&str) -> std::result::Result<T, (String, bool)>,
    ) -> Result<T> {
        let mut attempt = 0;
        loop {
            let base = self.replica();
            match request(&base) {
                Ok(value) => return Ok(value),
                Err((message, transient)) => {
                    let cancelled = cancel.is_some_and(|c| c.load(Ordering::Relaxed));
                    if !transient || attempt >= self.spec.retries || cancelled {
                        return Err(LlmError::Server {
                            endpoint: format!("{}/chat/completions ({})", base.trim_end_matches('/'), self.spec.model),
                            message,
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
    ) -> std::result::Result<ServerGeneration, (String, bool)> {
        let started = Instant::now();
        let response = self.post(base, "/chat/completions", body).map_err(request_error)?;
        let mut out = ServerGeneration {
            text: String::new(),
            prompt_tokens: None,
            completion_tokens: None,
            finish_reason: None,
            first_token_ms: None,
        };
        let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        let events = sse::read_events(
            response.into_reader(),
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
            |e, n| (format!("the stream broke after {n} chunks: {e}"), true),
            || ("cancelled".to_string(), false),
        )?;
        if events == 0 {
            return Err(("the server answered with an empty stream".into(), false));
        }
        Ok(out)
    }

    /// Whether each replica answers (`GET /models`), with the reason when one does not.
    pub fn probe(&self) -> Vec<(String, std::result::Result<(), String>)> {
        self.spec
            .base_urls
            .iter()
            .map(|base| {
                let mut request = self
                    .agent
                    .get(&format!("{}/models", base.trim_end_matches('/')))
                    .timeout(Duration::from_secs(5));
                if let Ok(Some(key)) = self.api_key() {
                    request = request.set("Authorization", &format!("Bearer {key}"));
                }
                let outcome = match request.call() {
                    Ok(r) => match r.into_json::<serde_json::Value>() {
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
                        Err(e) => Err(format!("/models is not JSON: {e}")),
                    },
                    Err(e) => Err(request_error(e).0),
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

/// A failed request's message, and whether another try may help (timeouts, connection
/// errors, 429, 5xx). The URL is left out of transport errors: the spec's names it.
fn request_error(e: ureq::Error) -> (String, bool) {
    match e {
        ureq::Error::Status(code, response) => {
            let said = response.into_string().unwrap_or_default();
            let said: String = said.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(300).collect();
            (format!("HTTP {code}: {said}"), code == 429 || code >= 500)
        }
        ureq::Error::Transport(t) => (
            match t.message() {
                Some(m) => format!("{}: {m}", t.kind()),
                None => t.kind().to_string(),
            },
            true,
        ),
    }
}
