//! The retrieval bench functions on real data: quality on the sample dataset per mode and the
//! fixed-window baseline, and the generated-corpus scale run (small here; `assay bench` runs
//! the full 20,000 chunks). Figures are printed, never compared with a clock.

use assay::dataset::load_dataset;
use assay::bench::retrieval::{bench_quality, bench_retrieval, bench_scale, BenchOptions};
use assay::retrieve::{minilm_dir, MiniLm};
use std::path::{Path, PathBuf};

fn minilm() -> Option<PathBuf> {
    let dir = minilm_dir(&assay::models::registry::default_models_dir().ok()?);
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "MiniLM files missing in {}", dir.display());
    eprintln!("skipping dense/hybrid: MiniLM files missing in {}", dir.display());
    None
}

/// A copy of the sample dataset, so the test's index cache does not land in the source tree.
fn trailgear() -> (tempfile::TempDir, assay::dataset::Dataset) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("trailgear");
    copy_dir(&root, &copy);
    let dataset = load_dataset(&copy).unwrap();
    (scratch, dataset)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != ".assay" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn quality_per_mode_and_baseline_on_the_sample_dataset() {
    let (_scratch, dataset) = trailgear();
    let work = tempfile::tempdir().unwrap();
    let options = BenchOptions { work_dir: work.path().join("bench"), ..BenchOptions::default() };
    let model = minilm().map(|d| MiniLm::load(&d).unwrap());
    let quality = bench_quality(&dataset, &options, model.as_ref()).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&quality).unwrap());
    let methods: Vec<&str> = quality.rows.iter().map(|r| r.method.as_str()).collect();
    if model.is_some() {
        assert_eq!(methods, ["bm25", "dense", "hybrid", "baseline"]);
    } else {
        assert_eq!(methods, ["bm25", "baseline"]);
    }
    for row in &quality.rows {
        assert_eq!(row.questions, 78, "questions with a golden context or citations, less refusals");
        assert!(row.hit_at_1 <= row.hit_at_5 && row.mrr <= row.hit_at_5 && row.hit_at_1 <= row.mrr);
    }
    let bm25 = &quality.rows[0];
    assert!(bm25.hit_at_5 > 0.8, "{bm25:?}");
    // Per question outcomes add up to each row's share, so the paired comparison with the
    // baseline counts the same questions the table shows.
    assert_eq!(quality.question_ids.len(), 78);
    for row in &quality.rows {
        let answered: Vec<bool> = row.answer_found.iter().flatten().copied().collect();
        let share = answered.iter().filter(|f| **f).count() as f64 / answered.len() as f64;
        assert!((share - row.answer_in_top_5).abs() < 1e-12, "{}", row.method);
    }
    let against = assay::bench::baseline::against_baseline(&quality, 0);
    assert_eq!(against.len(), quality.rows.len() - 1);
    for mode in &against {
        let row = quality.rows.iter().find(|r| r.method == mode.method).unwrap();
        let baseline = quality.rows.last().unwrap();
        assert!((mode.diff.mean_diff - (row.answer_in_top_5 - baseline.answer_in_top_5)).abs() < 1e-9, "{mode:?}");
    }
}

#[test]
fn scale_run_builds_and_queries_a_generated_corpus() {
    let work = tempfile::tempdir().unwrap();
    let options = BenchOptions { work_dir: work.path().join("bench"), scale_chunks: 600, queries: 50, ..BenchOptions::default() };
    let scale = bench_scale(&options).unwrap();
    eprintln!("{scale:?}");
    assert_eq!(scale.chunks, 600, "one chunk per generated section");
    assert_eq!(scale.documents, 6);
    assert_eq!(scale.queries, 50);
    assert!(scale.query_p50_ms <= scale.query_p99_ms);
    assert!(scale.chunks_per_second > 0.0);
}

/// The full figures for the report: `cargo test --release --test integration retrieve_bench:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn full_retrieval_bench() {
    let (_scratch, dataset) = trailgear();
    let options = BenchOptions { minilm_dir: minilm(), ..BenchOptions::default() };
    let bench = bench_retrieval(Some(&dataset), &options).unwrap();
    println!("{}", serde_json::to_string_pretty(&bench).unwrap());
}
