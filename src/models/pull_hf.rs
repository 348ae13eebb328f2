//! Installing a registered model from Hugging Face (the `hf` source in models.toml) with the
//! hf-hub crate, when the network allows.
//!
//! Each of the model's files is fetched by name from the repo into a cache inside the models
//! dir, checked against the registry's size and sha256, and moved into `<models dir>/<id>/`.
//! Before any download a short reachability probe of the endpoint (`$HF_ENDPOINT` or the
//! default) decides, so that an offline machine falls back to the next source at once
//! instead of waiting on network timeouts.

use std::fs;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use super::error::ModelsError;
use super::registry::{sha256_file, ModelEntry, Registry};

/// How long the probe may take, name lookup and TCP connection together.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The endpoint hf-hub will use: `$HF_ENDPOINT` or the public hub.
pub fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
}

/// Whether a TCP connection to `endpoint` can be opened within [`PROBE_TIMEOUT`]; the error
/// says why not (name not found, refused, timed out).
pub fn probe(endpoint: &str) -> std::result::Result<(), String> {
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("https", endpoint));
    let authority = rest.split('/').next().unwrap_or(rest);
    let default_port = if scheme == "http" { 80 } else { 443 };
    let target = if authority.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        authority.to_string()
    } else {
        format!("{authority}:{default_port}")
    };
    // Name lookup has no timeout of its own: run it aside and stop waiting after the limit.
    let (tx, rx) = mpsc::channel();
    let lookup = target.clone();
    std::thread::spawn(move || {
        let _ = tx.send(lookup.to_socket_addrs().map(|a| a.collect::<Vec<_>>()));
    });
    let addrs = match rx.recv_timeout(PROBE_TIMEOUT) {
        Ok(Ok(addrs)) if !addrs.is_empty() => addrs,
        Ok(Ok(_)) => return Err(format!("{target}: no address")),
        Ok(Err(e)) => return Err(format!("{target}: {e}")),
        Err(_) => return Err(format!("{target}: name lookup timed out")),
    };
    let mut last = String::new();
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("{target} ({addr}): {e}"),
        }
    }
    Err(last)
}

/// Install `entry` from its Hugging Face repo. Errors are plain messages (the caller names
/// the model and decides whether another source is tried).
pub fn pull_from_hf(registry: &Registry, entry: &ModelEntry) -> std::result::Result<PathBuf, String> {
    let Some(hf) = &entry.hf else {
        return Err("no Hugging Face repo is registered".into());
    };
    let endpoint = endpoint();
    probe(&endpoint).map_err(|e| format!("Hugging Face is not reachable ({e})"))?;
    fs::create_dir_all(&registry.models_dir).map_err(|e| format!("{}: {e}", registry.models_dir.display()))?;
    let cache = registry.models_dir.join(".hf-cache");
    let result = fetch_files(registry, entry, &hf.repo, &hf.file, &endpoint, &cache);
    // The cache only held the downloads on their way in.
    let _ = fs::remove_dir_all(&cache);
    result
}

fn fetch_files(
    registry: &Registry,
    entry: &ModelEntry,
    repo: &str,
    main_file: &str,
    endpoint: &str,
    cache: &Path,
) -> std::result::Result<PathBuf, String> {
    let api = hf_hub::api::sync::ApiBuilder::from_env()
        .with_endpoint(endpoint.to_string())
        .with_cache_dir(cache.to_path_buf())
        .with_progress(false)
        .build()
        .map_err(|e| format!("Hugging Face client: {e}"))?;
    let api_repo = api.model(repo.to_string());
    let mut fetched = Vec::new();
    for (i, file) in entry.files.iter().enumerate() {
        // The registry's first file is the repo's `file`; the others keep their names.
        let remote = if i == 0 { main_file } else { file.name.as_str() };
        let path = api_repo
            .get(remote)
            .map_err(|e| format!("{repo}/{remote}: {e}"))?;
        let (sha256, size) = sha256_file(&path).map_err(|e| e.to_string())?;
        if size != file.size {
            return Err(ModelsError::SizeMismatch {
                path: path.clone(),
                expected: file.size,
                actual: size,
            }
            .to_string());
        }
        if !sha256.eq_ignore_ascii_case(&file.sha256) {
            return Err(ModelsError::Sha256Mismatch {
                path: path.clone(),
                expected: file.sha256.clone(),
                actual: sha256,
            }
            .to_string());
        }
        fetched.push((path, file));
    }
    let model_dir = registry.models_dir.join(&entry.id);
    fs::create_dir_all(&model_dir).map_err(|e| format!("{}: {e}", model_dir.display()))?;
    for (path, file) in &fetched {
        let dest = registry.file_path(entry, file);
        // The cache's snapshot entries are links to blobs: copy the content, not the link.
        let real = fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if fs::rename(&real, &dest).is_err() {
            fs::copy(&real, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        registry.mark_verified(entry, file);
    }
    Ok(registry.file_path(entry, &entry.files[0]))
}

