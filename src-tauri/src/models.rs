//! The Models screen's commands over the core's registry: list what is known and installed,
//! pull a model on a worker thread with `pull-progress` events, register a local GGUF, and
//! register the GGUF models Ollama, LM Studio and the Hugging Face cache already hold, add a
//! served model, and remove a model.

use assay::models::gguf_info::GgufInfo;
use assay::models::pull::{PullEvent, pull};
use assay::models::registry::{InstallState, Registry};
use assay::models::scan::{find_models, register_found, ScanRoots, ScannedModel};
use assay::models::server_spec::ServerSpec;
use serde::Serialize;
use std::path::Path;
use tauri::{AppHandle, Emitter};

#[derive(Serialize)]
pub struct ListedModel {
    id: String,
    description: String,
    arch: String,
    /// Bytes over all of the model's files.
    size: u64,
    /// `verified`, `present`, `corrupt`, `missing`, or `served` for a model an inference
    /// server serves.
    state: String,
    path: String,
    /// From the GGUF header when the file is on disk (`Q4_K`, with its share of the weights).
    quantization: Option<String>,
    quantization_share: Option<f64>,
    parameters: Option<u64>,
    /// Where the registry says the model can be fetched from (package registry or user file).
    source: String,
}

#[derive(Serialize)]
pub struct ModelsView {
    models_dir: String,
    models: Vec<ListedModel>,
    /// The retrieval mode a run gets when it names none (the new-run form ticks it).
    default_retrieval: &'static str,
}

#[tauri::command]
pub async fn list_models() -> Result<ModelsView, String> {
    let registry = Registry::load().map_err(|e| e.to_string())?;
    let mut models: Vec<ListedModel> = registry
        .models
        .iter()
        .map(|m| {
            let path = m.files.first().map(|f| registry.file_path(m, f)).unwrap_or_default();
            let state = registry.install_state(m);
            let info = match state {
                // Any model file but the embedding model's safetensors: Ollama's blobs have
                // no extension, and the header says whether it is a GGUF.
                InstallState::Verified | InstallState::Present if m.arch != "bert" => {
                    GgufInfo::read(&path).ok()
                }
                _ => None,
            };
            ListedModel {
                id: m.id.clone(),
                description: m.description.clone(),
                arch: m.arch.clone(),
                size: m.files.iter().map(|f| f.size).sum(),
                state: serde_json::to_value(state).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
                path: path.display().to_string(),
                quantization: info.as_ref().map(|i| i.quantization.clone()),
                quantization_share: info.as_ref().map(|i| i.quantization_share),
                parameters: info.as_ref().map(|i| i.parameters),
                source: if m.path.is_some() {
                    "added locally".into()
                } else if let Some(pip) = &m.pip {
                    format!("{} package(s)", pip.packages.len())
                } else {
                    "no download source".into()
                },
            }
        })
        .collect();
    // Served models: usable as generators and judges; whether they answer is the server's
    // business at run time (the CLI's `models list` asks them).
    models.extend(registry.servers.iter().map(|s| ListedModel {
        id: s.id.clone(),
        description: format!("{} (OpenAI-compatible API)", s.model),
        arch: "server".into(),
        size: 0,
        state: "served".into(),
        path: s.base_urls.join(", "),
        quantization: None,
        quantization_share: None,
        parameters: None,
        source: "inference server".into(),
    }));
    Ok(ModelsView {
        models_dir: registry.models_dir.display().to_string(),
        models,
        default_retrieval: assay::run::default_retrieval().as_str(),
    })
}

#[derive(Serialize, Clone)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PullProgress {
    Downloading { id: String, package: String, index: usize, count: usize },
    /// Bytes on disk so far against about how many the model has, and the speed so far.
    Transferred { id: String, bytes: u64, expected: u64, bytes_per_s: f64 },
    Assembling { id: String, file: String },
    Installed { id: String, path: String },
    Failed { id: String, message: String },
}

/// Install a model (sha256-checked by the core); progress arrives as `pull-progress` events.
#[tauri::command]
pub async fn pull_model(app: AppHandle, id: String) -> Result<(), String> {
    let registry = Registry::load().map_err(|e| e.to_string())?;
    registry.entry(&id).map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        let send = |event: PullProgress| drop(app.emit("pull-progress", event));
        let outcome = pull(&registry, &id, &mut |event| {
            send(match event {
                PullEvent::Downloading { package, index, count } => PullProgress::Downloading { id: id.clone(), package, index, count },
                PullEvent::Transferred { bytes, expected, bytes_per_s } => {
                    PullProgress::Transferred { id: id.clone(), bytes, expected, bytes_per_s }
                }
                PullEvent::Assembling { file } => PullProgress::Assembling { id: id.clone(), file },
                PullEvent::Installed { path } | PullEvent::AlreadyInstalled { path } => {
                    PullProgress::Installed { id: id.clone(), path: path.display().to_string() }
                }
                // The next source's progress follows.
                PullEvent::SourceSkipped { .. } => return,
            })
        });
        if let Err(error) = outcome {
            send(PullProgress::Failed { id: id.clone(), message: error.to_string() });
        }
    });
    Ok(())
}

/// Register a GGUF file already on disk (it stays where it is).
#[tauri::command]
pub async fn add_model(path: String) -> Result<String, String> {
    let mut registry = Registry::load().map_err(|e| e.to_string())?;
    let entry = registry.add(Path::new(&path), None).map_err(|e| e.to_string())?;
    Ok(entry.id)
}

/// Find the models other tools hold in their default places and register them by reference
/// (the same as `assay models scan`). Reading headers and hashing new files takes a while:
/// done off the UI's thread.
#[tauri::command]
pub async fn scan_models() -> Result<Vec<ScannedModel>, String> {
    tauri::async_runtime::spawn_blocking(|| {
        let mut registry = Registry::load().map_err(|e| e.to_string())?;
        Ok(register_found(&mut registry, find_models(&ScanRoots::for_this_user())))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Register a model an inference server serves (the same entry as `assay models add-server`);
/// whether the server answers is its business at run time, as for the CLI's runs.
#[tauri::command]
pub async fn add_server(id: String, urls: Vec<String>, served_model: String, api_key_env: Option<String>) -> Result<String, String> {
    let mut registry = Registry::load().map_err(|e| e.to_string())?;
    let urls: Vec<String> = urls.iter().map(|u| u.trim().to_string()).filter(|u| !u.is_empty()).collect();
    if urls.is_empty() {
        return Err("URL: give the server's API root, e.g. http://127.0.0.1:8080/v1".into());
    }
    let spec = ServerSpec {
        id: id.trim().to_string(),
        base_urls: urls,
        model: served_model.trim().to_string(),
        api_key_env: api_key_env.map(|e| e.trim().to_string()).filter(|e| !e.is_empty()),
        timeout_s: 300,
        retries: 2,
    };
    registry.add_server(spec.clone()).map_err(|e| e.to_string())?;
    Ok(spec.id)
}

/// Remove a model (the same as `assay models remove`): a served or added model's entry (an
/// added file stays on disk), or a pulled model's downloaded files. Returns what was done.
#[tauri::command]
pub async fn remove_model(id: String) -> Result<String, String> {
    let mut registry = Registry::load().map_err(|e| e.to_string())?;
    registry.remove(&id).map(|removed| removed.describe()).map_err(|e| e.to_string())
}
