//! Finding the GGUF models a user already has: Ollama's blob store (read through its
//! manifests, so a model appears under the name Ollama gives it, `qwen3:4b`), LM Studio's
//! models folder and the Hugging Face cache. Found files are registered by reference
//! ([`Registry::add`]: metadata read, sha256 computed once, nothing copied).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::registry::Registry;

/// Where each tool keeps its models; `None`/empty skips that tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanRoots {
    /// Ollama's models folder (`manifests/` and `blobs/` inside).
    pub ollama: Option<PathBuf>,
    /// LM Studio's models folders (`PUBLISHER/REPO/FILE.gguf` inside).
    pub lm_studio: Vec<PathBuf>,
    /// The Hugging Face hub cache (`models--ORG--NAME/snapshots/REV/…` inside).
    pub hf_cache: Option<PathBuf>,
}

impl ScanRoots {
    /// The places each tool uses by default, honouring their environment variables
    /// (`OLLAMA_MODELS`, `HF_HUB_CACHE`, `HF_HOME`).
    pub fn for_this_user() -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let env_dir = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let ollama = env_dir("OLLAMA_MODELS").or_else(|| home.as_ref().map(|h| h.join(".ollama/models")));
        let lm_studio = home
            .as_ref()
            .map(|h| vec![h.join(".lmstudio/models"), h.join(".cache/lm-studio/models")])
            .unwrap_or_default();
        let hf_cache = env_dir("HF_HUB_CACHE")
            .or_else(|| env_dir("HF_HOME").map(|h| h.join("hub")))
            .or_else(|| home.as_ref().map(|h| h.join(".cache/huggingface/hub")));
        ScanRoots {
            ollama,
            lm_studio,
            hf_cache,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelSource {
    Ollama,
    LmStudio,
    HuggingFace,
}

/// A GGUF file another tool holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundModel {
    pub source: ModelSource,
    /// The name the tool shows (`qwen3:4b`, `org/repo/file.gguf`).
    pub name: String,
    pub path: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum ScanOutcome {
    Added { id: String, description: String },
    AlreadyRegistered { id: String },
    Skipped { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannedModel {
    #[serde(flatten)]
    pub found: FoundModel,
    #[serde(flatten)]
    pub outcome: ScanOutcome,
}

/// Every GGUF file under `roots`, each once (the same blob reached twice is listed once).
/// Folders that do not exist are skipped; unreadable manifests are skipped silently, as
/// the tool that wrote them would.
pub fn find_models(roots: &ScanRoots) -> Vec<FoundModel> {
    let mut found = Vec::new();
    if let Some(dir) = &roots.ollama {
        found.extend(ollama_models(dir));
    }
    for dir in &roots.lm_studio {
        for path in gguf_files_under(dir, 3) {
            let name = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().into_owned();
            found.push(FoundModel {
                source: ModelSource::LmStudio,
                name,
                path,
            });
        }
    }
    if let Some(dir) = &roots.hf_cache {
        found.extend(hugging_face_models(dir));
    }
    let mut seen = HashSet::new();
    found.retain(|m| seen.insert(fs::canonicalize(&m.path).unwrap_or_else(|_| m.path.clone())));
    found
}

/// Find and register: each found model is added under an id made from its name, unless its
/// file is already registered; what cannot be used is skipped with the reason.
pub fn register_found(registry: &mut Registry, found: Vec<FoundModel>) -> Vec<ScannedModel> {
    found
        .into_iter()
        .map(|found| {
            let outcome = register_one(registry, &found);
            ScannedModel { found, outcome }
        })
        .collect()
}

fn register_one(registry: &mut Registry, found: &FoundModel) -> ScanOutcome {
    if let Some(reason) = unusable(&found.path) {
        return ScanOutcome::Skipped { reason };
    }
    let canonical = fs::canonicalize(&found.path).unwrap_or_else(|_| found.path.clone());
    if let Some(entry) = registry
        .models
        .iter()
        .find(|m| registry.model_path(&m.id).is_ok_and(|p| fs::canonicalize(&p).unwrap_or(p) == canonical))
    {
        return ScanOutcome::AlreadyRegistered { id: entry.id.clone() };
    }
    let base = id_from_name(&found.name);
    let id = (1..)
        .map(|n| if n == 1 { base.clone() } else { format!("{base}-{n}") })
        .find(|id| registry.entry(id).is_err())
        .unwrap_or(base);
    match registry.add(&found.path, Some(&id)) {
        Ok(entry) => ScanOutcome::Added {
            id: entry.id,
            description: entry.description,
        },
        Err(e) => ScanOutcome::Skipped { reason: e.to_string() },
    }
}

/// Files the runtime cannot load whatever their metadata says.
fn unusable(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    if name.contains("mmproj") {
        return Some("a vision projector, not a language model".into());
    }
    if is_split_part(&name) {
        return Some("one part of a split GGUF (join the parts with llama.cpp's gguf-split first)".into());
    }
    None
}

/// `name-00001-of-00003.gguf`.
fn is_split_part(name: &str) -> bool {
    let stem = name.trim_end_matches(".gguf");
    let parts: Vec<&str> = stem.rsplitn(4, '-').collect();
    parts.len() == 4
        && parts[1] == "of"
        && [parts[0], parts[2]].iter().all(|p| p.len() == 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A registry id from a tool's name: lowercase, `:` and `/` become `-`.
fn id_from_name(name: &str) -> String {
    let name = name.trim_end_matches(".gguf").trim_end_matches(".GGUF");
    let mut id = String::new();
    for c in name.to_lowercase().chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' };
        if !(c == '-' && (id.is_empty() || id.ends_with('-'))) {
            id.push(c);
        }
    }
    let id = id.trim_matches('-').trim_start_matches('.').to_string();
    if id.is_empty() {
        "model".into()
    } else {
        id
    }
}

#[derive(Deserialize)]
struct OllamaManifest {
    #[serde(default)]
    layers: Vec<OllamaLayer>,
}

#[derive(Deserialize)]
struct OllamaLayer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

/// Ollama: `manifests/HOST/NAMESPACE/MODEL/TAG` (JSON) name the blob of the weights,
/// `blobs/sha256-HEX`. Models of the `library` namespace are shown as `MODEL:TAG`.
fn ollama_models(dir: &Path) -> Vec<FoundModel> {
    let mut found = Vec::new();
    for manifest in files_at_depth(&dir.join("manifests"), 4) {
        let Ok(text) = fs::read_to_string(&manifest) else { continue };
        let Ok(parsed) = serde_json::from_str::<OllamaManifest>(&text) else { continue };
        let Some(layer) = parsed
            .layers
            .iter()
            .find(|l| l.media_type == "application/vnd.ollama.image.model")
        else {
            continue;
        };
        let Some(hex) = layer.digest.strip_prefix("sha256:") else { continue };
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let blob = dir.join("blobs").join(format!("sha256-{hex}"));
        if !blob.is_file() {
            continue;
        }
        let parts: Vec<String> = manifest
            .strip_prefix(dir.join("manifests"))
            .map(|p| p.iter().map(|s| s.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let [_host, namespace, model, tag] = parts.as_slice() else { continue };
        let name = if namespace == "library" {
            format!("{model}:{tag}")
        } else {
            format!("{namespace}/{model}:{tag}")
        };
        found.push(FoundModel {
            source: ModelSource::Ollama,
            name,
            path: blob,
        });
    }
    found
}

/// Hugging Face: `models--ORG--NAME/snapshots/REV/…/FILE.gguf` (links into `blobs/`).
fn hugging_face_models(dir: &Path) -> Vec<FoundModel> {
    let mut found = Vec::new();
    let Ok(repos) = fs::read_dir(dir) else { return found };
    let mut repos: Vec<PathBuf> = repos.flatten().map(|e| e.path()).collect();
    repos.sort();
    for repo in repos {
        let Some(folder) = repo.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
        let Some(repo_name) = folder.strip_prefix("models--") else { continue };
        let repo_name = repo_name.replacen("--", "/", 1);
        let Ok(revisions) = fs::read_dir(repo.join("snapshots")) else { continue };
        let mut revisions: Vec<PathBuf> = revisions.flatten().map(|e| e.path()).collect();
        revisions.sort();
        for revision in revisions {
            for path in gguf_files_under(&revision, 4) {
                let file = path.strip_prefix(&revision).unwrap_or(&path).to_string_lossy().into_owned();
                found.push(FoundModel {
                    source: ModelSource::HuggingFace,
                    name: format!("{repo_name}/{file}"),
                    path,
                });
            }
        }
    }
    found
}

/// `.gguf` files (following links) at most `depth` folders below `dir`, sorted.
fn gguf_files_under(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth > 0 {
                out.extend(gguf_files_under(&path, depth - 1));
            }
        } else if path.is_file()
            && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
        {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Files exactly `depth` folders below `dir`, sorted.
fn files_at_depth(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if depth > 1 && path.is_dir() {
            out.extend(files_at_depth(&path, depth - 1));
        } else if depth == 1 && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_the_tools_names() {
        assert_eq!(id_from_name("qwen3:4b"), "qwen3-4b");
        assert_eq!(id_from_name("hf.co/Org/Model-GGUF:Q4_K_M"), "hf.co-org-model-gguf-q4_k_m");
        assert_eq!(id_from_name("Org/Repo/model.Q4_K_M.gguf"), "org-repo-model.q4_k_m");
        assert_eq!(id_from_name("::"), "model");
    }

    #[test]
    fn split_parts_are_recognised() {
        assert!(is_split_part("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf"));
        assert!(!is_split_part("qwen2.5-7b-instruct-q4_k_m.gguf"));
        assert!(!is_split_part("model-1-of-2.gguf"));
    }
}
