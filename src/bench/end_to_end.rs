//! The end-to-end row of `assay bench`: the same RAG questions answered by the in-process
//! runtime and by llama.cpp's `llama-server` serving the same GGUF file with the same number of
//! threads and one slot, each side a whole `assay run` (retrieval, prompt, generation, storing
//! the answers, scoring) in a fresh database, so no side reuses the other's generations.
//! Matrix kernels alone do not say what a user waits for; this does.
//!
//! Here: the server's lifetime and the figures read back from each run's JSON export. The bench
//! face starts the runs (each in its own process, as a user would).

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What went wrong starting the server or reading a run's figures.
#[derive(Debug, thiserror::Error)]
pub enum EndToEndError {
    #[error("starting {program} for the end-to-end bench: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} did not answer on 127.0.0.1:{port}/health within {waited_s} s (its log: {log})")]
    NotHealthy { program: String, port: u16, waited_s: u64, log: String },
    #[error("{program} exited while loading {model} ({status}); the end of its log ({log}):\n{tail}")]
    Exited { program: String, model: String, status: String, log: String, tail: String },
    #[error("no free port on 127.0.0.1 for llama-server: {0}")]
    Port(std::io::Error),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the end-to-end run `{side}` printed no usable JSON export: {message}")]
    RunJson { side: String, message: String },
}

/// Both sides of the end-to-end row and their ratio.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndToEnd {
    /// The model (registry id) both sides answer with.
    pub model: String,
    pub dataset: String,
    /// Questions asked (the dataset's first N).
    pub questions: usize,
    /// Threads on each side (the runtime's pool, llama-server's `-t` and `-tb`).
    pub threads: usize,
    /// Most tokens generated per answer, on both sides.
    pub max_tokens: usize,
    /// The llama-server program that served the file.
    pub server_program: String,
    /// The instruction sets llama-server reports it was built with (its `system_info` line).
    pub server_cpu_features: Option<String>,
    /// Seconds from starting llama-server to its first healthy answer (not in its side's time:
    /// a served model is loaded before the run, as users run one).
    pub server_start_s: f64,
    pub served: EndToEndSide,
    /// The in-process runtime, once per kernel path measured (the default path first).
    pub in_process: Vec<EndToEndSide>,
    /// In-process speed over the server's on the default path: the server's wall time divided
    /// by ours (1.0 = as fast; above 1, the in-process runtime is faster).
    pub ratio: f64,
}

/// One side: a whole `assay run` of the questions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndToEndSide {
    /// `llama-server`, or the in-process kernel path (`avx512`, `avx2`, …).
    pub label: String,
    /// Wall time of the whole `assay run` process (the in-process side includes loading the
    /// model, as a user's run does).
    pub wall_s: f64,
    /// Sum of the answers' own times (retrieval, prompt, generation), without loading,
    /// storing and scoring.
    pub answer_s: f64,
    pub answers: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The server's wall time over this side's (in-process sides; 1.0 = as fast).
    pub ratio: Option<f64>,
}

/// llama-server on PATH, else where scripts/llm_build_llama_server.sh caches it
/// (`$ASSAY_TOOLS/bin`, default `~/.cache/assay/llama-cpp/bin`).
pub fn find_llama_server() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths).map(|dir| dir.join("llama-server")).find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let tools = match std::env::var_os("ASSAY_TOOLS") {
            Some(dir) => PathBuf::from(dir),
            None => directories::BaseDirs::new()?.home_dir().join(".cache/assay/llama-cpp"),
        };
        Some(tools.join("bin/llama-server")).filter(|p| p.is_file())
    })
}

/// A llama-server process on 127.0.0.1 serving one file with one slot, killed when dropped.
pub struct LlamaServerProcess {
    child: Child,
    port: u16,
    log: PathBuf,
    /// Seconds it took to answer /health.
    pub start_s: f64,
}

impl LlamaServerProcess {
    /// Start `program` on `model` with `threads` threads for prompts and decoding, one slot
    /// and a context of `context` tokens, its log in `log`; wait until it answers /health.
    pub fn start(program: &Path, model: &Path, threads: usize, context: usize, log: &Path) -> Result<Self, EndToEndError> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(EndToEndError::Port)?
            .port();
        let log_file = std::fs::File::create(log).map_err(|source| EndToEndError::Io { path: log.to_path_buf(), source })?;
        let threads = threads.to_string();
        let child = Command::new(program)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-t", &threads, "-tb", &threads, "-np", "1", "-c", &context.to_string()])
            // Log level 4 (trace) is the one at which llama.cpp logs the instruction sets it
            // was built with (`system_info`), which say what the ratio compares against.
            .args(["--jinja", "--no-webui", "-lv", "4"])
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|source| EndToEndError::Spawn { program: program.display().to_string(), source })?;
        let started = Instant::now();
        let mut server = LlamaServerProcess { child, port, log: log.to_path_buf(), start_s: 0.0 };
        // Loading a 1.5B file from a cold disk takes seconds; two minutes is far past that.
        let limit = Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(EndToEndError::Exited {
                    program: program.display().to_string(),
                    model: model.display().to_string(),
                    status: status.to_string(),
                    log: log.display().to_string(),
                    tail: server.log_tail(2000),
                });
            }
            if ureq::get(&format!("http://127.0.0.1:{port}/health")).call().is_ok() {
                break;
            }
            if started.elapsed() > limit {
                return Err(EndToEndError::NotHealthy {
                    program: program.display().to_string(),
                    port,
                    waited_s: limit.as_secs(),
                    log: log.display().to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        server.start_s = started.elapsed().as_secs_f64();
        Ok(server)
    }

    /// The OpenAI-compatible API root.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The instruction sets the server reports (llama.cpp logs `system_info: … | CPU : SSE3 =
    /// 1 | … | AVX512 = 0 | …`), the ones it has, in its words.
    pub fn cpu_features(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.log).ok()?;
        cpu_features_of_log(&text)
    }

    fn log_tail(&self, bytes: usize) -> String {
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(&self.log) {
            let _ = file.read_to_string(&mut text);
        }
        let start = text.len().saturating_sub(bytes);
        let start = (start..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        text[start..].to_string()
    }
}

impl Drop for LlamaServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The features llama.cpp's `system_info` line marks `= 1` after `CPU :`, space-separated.
fn cpu_features_of_log(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("system_info") && l.contains("CPU :"))?;
    let cpu = &line[line.find("CPU :")? + "CPU :".len()..];
    let on: Vec<&str> = cpu
        .split('|')
        .filter_map(|field| {
            let (name, value) = field.split_once('=')?;
            (value.trim() == "1").then_some(name.trim())
        })
        .collect();
    Some(on.join(" "))
}

/// One side's figures from the JSON export that `assay run --json` printed, timed at `wall_s`.
/// An item that failed, or whose generation came from a cache, would make the times
/// meaningless: refused with the item named.
pub fn side_from_run_json(label: &str, wall_s: f64, json: &[u8]) -> Result<EndToEndSide, EndToEndError> {
    let bad = |message: String| EndToEndError::RunJson { side: label.to_string(), message };
    let export: serde_json::Value = serde_json::from_slice(json).map_err(|e| bad(e.to_string()))?;
    let items = export["runs"][0]["items"].as_array().ok_or_else(|| bad("no runs[0].items".into()))?;
    let mut side = EndToEndSide {
        label: label.to_string(),
        wall_s,
        answer_s: 0.0,
        answers: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        ratio: None,
    };
    for item in items {
        let id = item["id"].as_str().unwrap_or("?");
        if let Some(error) = item["error"].as_str() {
            return Err(bad(format!("item {id} failed: {error}")));
        }
        if item["cached"].as_bool() == Some(true) {
            return Err(bad(format!("item {id} came from the generation cache")));
        }
        side.answers += 1;
        side.answer_s += item["latency_ms"].as_u64().unwrap_or(0) as f64 / 1000.0;
        side.prompt_tokens += item["prompt_tokens"].as_u64().unwrap_or(0);
        side.completion_tokens += item["completion_tokens"].as_u64().unwrap_or(0);
    }
    if side.answers == 0 {
        return Err(bad("the run answered no question".into()));
    }
    Ok(side)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_instruction_sets_are_the_ones_marked_1() {
        let log = "build: 1 (abc)\nsystem_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 0 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |\nmain: listening";
        assert_eq!(cpu_features_of_log(log).as_deref(), Some("SSE3 SSSE3 AVX AVX2 F16C FMA BMI2 LLAMAFILE OPENMP REPACK"));
        assert_eq!(cpu_features_of_log("no such line"), None);
    }

    #[test]
    fn a_side_sums_its_answers_and_refuses_failed_or_cached_items() {
        let json = br#"{"runs":[{"items":[
            {"id":"q1","latency_ms":1500,"prompt_tokens":900,"completion_tokens":40,"error":null},
            {"id":"q2","latency_ms":500,"prompt_tokens":700,"completion_tokens":12,"error":null}]}]}"#;
        let side = side_from_run_json("avx2", 3.0, json).unwrap();
        assert_eq!((side.answers, side.prompt_tokens, side.completion_tokens), (2, 1600, 52));
        assert!((side.answer_s - 2.0).abs() < 1e-9);
        let failed = br#"{"runs":[{"items":[{"id":"q7","error":"timed out"}]}]}"#;
        let err = side_from_run_json("llama-server", 1.0, failed).unwrap_err().to_string();
        assert!(err.contains("q7") && err.contains("timed out") && err.contains("llama-server"), "{err}");
        let cached = br#"{"runs":[{"items":[{"id":"q3","cached":true,"error":null}]}]}"#;
        assert!(side_from_run_json("x", 1.0, cached).unwrap_err().to_string().contains("cache"));
        assert!(side_from_run_json("x", 1.0, b"not json").is_err());
    }
}
