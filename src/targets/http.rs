//! The HTTP target: a user's own question-answering service, asked over HTTP as its file
//! describes (http_spec.rs), its answer read whole or from a stream (server-sent events or
//! newline-delimited JSON, the chunks joined). Latency to the first chunk and in total is
//! recorded. Timeouts, connection errors, 429 and 5xx are retried with backoff; an answer that
//! never comes becomes the item's error — naming the endpoint and what the server said — so
//! the item is unscored (never zero) and `assay run --resume` asks again.
//!
//! Redirects are not followed, to any host: the request carries the file's secrets in headers
//! and the URL, and a redirect would hand them to whatever host it names (ureq keeps every
//! header but `Authorization` and `Cookie` across hosts) and may turn https into http. A
//! service that redirects is reported with where it pointed, so the file can name the final
//! URL. The response is read up to `llm::capped_body::MAX_RESPONSE_BYTES`.

use std::io::{BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::http_spec::{HttpTargetSpec, ResponseStream};
use super::{Target, TargetError};
use crate::dataset::Question;
use crate::llm::capped_body::{is_too_large, CappedBody, MAX_RESPONSE_BYTES};
use crate::llm::sse;
use crate::record::Answer;

pub struct HttpTarget {
    spec: HttpTargetSpec,
    file_name: String,
    agent: ureq::Agent,
    concurrency: usize,
    cancel: Option<Arc<AtomicBool>>,
}

impl HttpTarget {
    /// `concurrency` overrides the file's when given.
    pub fn new(
        spec: HttpTargetSpec,
        file_name: String,
        concurrency: Option<usize>,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(spec.timeout_s.min(10)))
            .timeout(Duration::from_secs(spec.timeout_s))
            .redirects(0)
            .build();
        HttpTarget {
            concurrency: concurrency.unwrap_or(spec.concurrency).max(1),
            spec,
            file_name,
            agent,
            cancel,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The endpoint as the file writes it (with `${NAME}` unexpanded: no secret in messages).
    fn endpoint(&self) -> String {
        format!("{} {}", self.spec.method, self.spec.url)
    }

    fn fail(&self, message: impl std::fmt::Display) -> TargetError {
        TargetError::Failed(format!("{}: {message}", self.endpoint()))
    }

    /// Ask one question, retrying transient failures.
    fn ask(&self, question: &Question) -> Result<Answer, TargetError> {
        let body = match &self.spec.body {
            Some(template) => Some(render_body(template, question).map_err(|e| self.fail(e))?),
            None => None,
        };
        let mut attempt = 0;
        loop {
            match self.attempt(body.as_ref()) {
                Ok(answer) => return Ok(answer),
                Err(Attempt::Final(message)) => return Err(self.fail(message)),
                Err(Attempt::Transient { message, wait }) => {
                    if attempt >= self.spec.retries || self.cancelled() {
                        let tries = attempt + 1;
                        return Err(self.fail(format!("{message} (after {tries} attempt{})", if tries == 1 { "" } else { "s" })));
                    }
                    attempt += 1;
                    let backoff = Duration::from_millis(500 << (attempt - 1).min(4));
                    std::thread::sleep(wait.unwrap_or(backoff).min(Duration::from_secs(30)));
                }
            }
        }
    }

    fn attempt(&self, body: Option<&serde_json::Value>) -> Result<Answer, Attempt> {
        let url = self.spec.expand(&self.spec.url).map_err(Attempt::Final)?;
        let mut request = self.agent.request(&self.spec.method, &url);
        for (name, value) in &self.spec.headers {
            request = request.set(name, &self.spec.expand(value).map_err(Attempt::Final)?);
        }
        let started = Instant::now();
        let sent = match body {
            Some(json) => request.send_json(json),
            None => request.call(),
        };
        let response = match sent {
            Ok(r) => r,
            Err(ureq::Error::Status(code, r)) => {
                let retry_after = r
                    .header("retry-after")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let said = snippet(&r.into_string().unwrap_or_default());
                let message = format!("HTTP {code}: {said}");
                return Err(if code == 429 || code >= 500 {
                    Attempt::Transient { message, wait: retry_after }
                } else {
                    Attempt::Final(message)
                });
            }
            Err(ureq::Error::Transport(t)) => {
                // Kind and message only: ureq's own text repeats the URL, secrets expanded.
                let message = match t.message() {
                    Some(m) => format!("{}: {m}", t.kind()),
                    None => t.kind().to_string(),
                };
                return Err(Attempt::Transient { message, wait: None });
            }
        };
        if (300..400).contains(&response.status()) {
            return Err(Attempt::Final(redirect_refused(&response)));
        }
        let headers_ms = started.elapsed().as_millis() as u64;
        let content_type = response.content_type().to_ascii_lowercase();
        if content_type.contains("html") {
            let page = snippet(&response.into_string().unwrap_or_default());
            return Err(Attempt::Final(format!("returned an HTML page, not JSON: {page}")));
        }
        let reader = CappedBody::new(response.into_reader(), MAX_RESPONSE_BYTES);
        let read = match self.spec.response.stream {
            ResponseStream::None => self.read_whole(reader),
            ResponseStream::Sse => self.read_stream(reader, started, true),
            ResponseStream::Ndjson => self.read_stream(reader, started, false),
        }?;
        Ok(Answer {
            text: read.text,
            citations: read.citations,
            latency_ms: started.elapsed().as_millis() as u64,
            first_chunk_ms: Some(read.first_chunk_ms.unwrap_or(headers_ms)),
            ..Answer::default()
        })
    }

    fn read_whole(&self, mut reader: impl Read) -> Result<ReadAnswer, Attempt> {
        let mut text = String::new();
        reader.read_to_string(&mut text).map_err(|e| match is_too_large(&e) {
            true => Attempt::Final(e.to_string()),
            false => Attempt::Transient { message: format!("reading the response: {e}"), wait: None },
        })?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Attempt::Final(format!("the response is not JSON ({e}): {}", snippet(&text))))?;
        let pointer = &self.spec.response.answer;
        let answer = match json.pointer(pointer) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => return Err(Attempt::Final(format!("{pointer} in the response is {}, not text", kind(other)))),
            None => return Err(Attempt::Final(format!("the response has nothing at {pointer}: {}", snippet(&text)))),
        };
        Ok(ReadAnswer {
            text: answer,
            citations: self.citations_in(&json)?.unwrap_or_default(),
            first_chunk_ms: None,
        })
    }

    /// Server-sent events (`data:` lines; `[DONE]` ends the stream) or one JSON document
    /// per line, each a chunk of the answer.
    fn read_stream(&self, reader: impl Read, started: Instant, sse: bool) -> Result<ReadAnswer, Attempt> {
        let mut read = ReadAnswer::default();
        let mut chunks = 0usize;
        let mut on_chunk = |data: &str| -> Result<ControlFlow<()>, Attempt> {
            let data = data.trim();
            if data == "[DONE]" {
                return Ok(ControlFlow::Break(()));
            }
            if data.is_empty() {
                return Ok(ControlFlow::Continue(()));
            }
            chunks += 1;
            read.first_chunk_ms.get_or_insert(started.elapsed().as_millis() as u64);
            let json: serde_json::Value = serde_json::from_str(data).map_err(|e| {
                Attempt::Final(format!("streamed chunk {chunks} is not JSON ({e}): {}", snippet(data)))
            })?;
            match json.pointer(&self.spec.response.answer) {
                Some(serde_json::Value::String(s)) => read.text.push_str(s),
                None | Some(serde_json::Value::Null) => {}
                Some(other) => {
                    return Err(Attempt::Final(format!(
                        "streamed chunk {chunks}: {} is {}, not text",
                        self.spec.response.answer,
                        kind(other)
                    )))
                }
            }
            if let Some(citations) = self.citations_in(&json)? {
                read.citations = citations;
            }
            Ok(ControlFlow::Continue(()))
        };
        let broke = |e: std::io::Error, n: usize| match is_too_large(&e) {
            true => Attempt::Final(format!("after {n} chunks, {e}")),
            false => Attempt::Transient { message: format!("the stream broke after {n} chunks: {e}"), wait: None },
        };
        let cancelled = || self.cancelled();
        let cancel = || Attempt::Final("cancelled".into());
        if sse {
            sse::read_events(reader, &cancelled, &mut on_chunk, broke, cancel)?;
        } else {
            for (n, line) in BufReader::new(reader).lines().enumerate() {
                if cancelled() {
                    return Err(cancel());
                }
                if on_chunk(&line.map_err(|e| broke(e, n))?)?.is_break() {
                    break;
                }
            }
        }
        if read.first_chunk_ms.is_none() {
            return Err(Attempt::Final("the stream ended without a chunk".into()));
        }
        Ok(read)
    }

    /// The cited ids at the citations pointer, when the spec names one and the JSON has it.
    fn citations_in(&self, json: &serde_json::Value) -> Result<Option<Vec<String>>, Attempt> {
        let Some(pointer) = &self.spec.response.citations else { return Ok(None) };
        let Some(value) = json.pointer(pointer) else { return Ok(None) };
        let items = value
            .as_array()
            .ok_or_else(|| Attempt::Final(format!("{pointer} in the response is {}, not a list", kind(value))))?;
        let field = &self.spec.response.citation_field;
        items
            .iter()
            .map(|item| match item {
                serde_json::Value::String(s) => Ok(s.clone()),
                serde_json::Value::Object(o) => match o.get(field) {
                    Some(serde_json::Value::String(s)) => Ok(s.clone()),
                    _ => Err(Attempt::Final(format!("a citation at {pointer} has no text field `{field}`"))),
                },
                other => Err(Attempt::Final(format!("a citation at {pointer} is {}, not text", kind(other)))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

impl Target for HttpTarget {
    fn describe(&self) -> String {
        format!("http:{}", self.file_name)
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        self.ask(question)
    }

    fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Up to `concurrency` questions at once, one thread each (the requests mostly wait).
    fn answer_batch(&mut self, questions: &[&Question]) -> Vec<Result<Answer, TargetError>> {
        let this = &*self;
        std::thread::scope(|scope| {
            let handles: Vec<_> = questions.iter().map(|q| scope.spawn(move || this.ask(q))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(TargetError::Failed("the request thread panicked".into()))))
                .collect()
        })
    }
}

enum Attempt {
    /// Worth trying again (after `wait`, when the server said how long).
    Transient { message: String, wait: Option<Duration> },
    Final(String),
}

#[derive(Default)]
struct ReadAnswer {
    text: String,
    citations: Vec<String>,
    first_chunk_ms: Option<u64>,
}

/// The body with every string rendered as a template over the question's fields. Strings
/// become JSON strings whatever they hold, so a question can never break the JSON.
fn render_body(template: &toml::Value, question: &Question) -> Result<serde_json::Value, String> {
    let context = minijinja::context! {
        question => &question.question,
        id => &question.id,
        tags => &question.tags,
    };
    render_value(template, &context)
}

fn render_value(value: &toml::Value, context: &minijinja::Value) -> Result<serde_json::Value, String> {
    Ok(match value {
        toml::Value::String(s) => {
            let env = crate::bounded_template::environment();
            let template = env.template_from_str(s).map_err(|e| format!("body template {s:?}: {e}"))?;
            serde_json::Value::String(
                crate::bounded_template::render(&template, context).map_err(|e| format!("body template {s:?}: {e}"))?,
            )
        }
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Value::from(*f),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Datetime(d) => serde_json::Value::String(d.to_string()),
        toml::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(|v| render_value(v, context)).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(table) => serde_json::Value::Object(
            table
                .iter()
                .map(|(k, v)| Ok((k.clone(), render_value(v, context)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// What a refused redirect says: its status and the host it pointed to (not the whole
/// `Location`, which may carry the request's own query back).
fn redirect_refused(response: &ureq::Response) -> String {
    let status = response.status();
    let target = response
        .header("location")
        .map(|location| match location.split_once("://") {
            Some((_, rest)) => {
                let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
                // Any user info before `@` stays out of the message.
                let host = authority.rsplit('@').next().unwrap_or(authority);
                format!("host {host:?}")
            }
            None => "another path on the same host".into(),
        })
        .unwrap_or_else(|| "no location".into());
    format!(
        "HTTP {status}: the service redirects (to {target}); redirects are not followed, so secrets never reach \
         another host: write the final URL in the file"
    )
}

/// The start of a server's text for an error message, on one line.
fn snippet(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = one_line.chars().take(200).collect();
    if one_line.chars().count() > 200 {
        cut.push('…');
    }
    format!("{cut:?}")
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "text",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}
