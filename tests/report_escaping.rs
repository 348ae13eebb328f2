//! Answers are untrusted text: hostile strings from a target must come out of every report
//! format as inert text.

use std::path::Path;
use std::process::Command;

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click](javascript:alert(3))",
    "=HYPERLINK(\"http://evil.example\")",
    "a | b \u{1b}[31mred\u{7}",
];

fn assay(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env("ASSAY_DB", db)
        .output()
        .unwrap()
}

#[test]
fn hostile_answers_are_inert_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let answers = tmp.path().join("hostile.jsonl");
    let lines: String = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, text)| {
            serde_json::json!({"id": format!("q{:03}", i + 1), "answer": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(&answers, lines).unwrap();
    let target = format!("answers:{}", answers.display());
    let out = assay(
        &["run", dataset.to_str().unwrap(), "--target", &target, "--limit", "5", "--name", "<b>bold</b>"],
        &db,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "terminal output carries an escape sequence");

    let export = |format: &str| {
        let file = tmp.path().join(format!("report.{format}"));
        let out = assay(&["export", "<b>bold</b>", "--format", format, "-o", file.to_str().unwrap()], &db);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(file).unwrap()
    };

    let html = export("html");
    for raw in ["<script>alert", "<img src=x", "<b>bold", "href=\"javascript:"] {
        assert!(!html.contains(raw), "HTML contains {raw:?}");
    }
    assert!(html.contains("&lt;script&gt;alert(1)"), "the text is shown, escaped");
    assert!(html.contains("Content-Security-Policy"));

    let md = export("md");
    assert!(!md.contains("<script>") && !md.contains("<img"), "Markdown passes HTML through");
    assert!(md.contains("a \\| b"), "pipes are escaped in table cells");

    let csv = export("csv");
    assert!(csv.contains("'=HYPERLINK"), "formula cells are defused");

    let junit = export("junit");
    let doc = roxmltree::Document::parse(&junit).expect("JUnit output is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("testcase")).count(), 5);
}

/// Model text that would become Markdown links and images (a tracking pixel loads when the
/// report is viewed), a target name that would close its code span, and U+FFFE / U+FFFF, which
/// XML 1.0 does not allow anywhere (a JUnit file holding them is rejected by CI parsers).
#[test]
fn links_images_backticks_and_xml_noncharacters_are_inert() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let answers = tmp.path().join("hostile`](evil.example)`.jsonl");
    let texts = [
        "![pixel](http://evil.example/track.png)",
        "[click here](http://evil.example/login)",
        "``` closes `code` spans ``",
        "bad \u{fffe} and \u{ffff} characters",
    ];
    let lines: String = texts
        .iter()
        .enumerate()
        .map(|(i, text)| serde_json::json!({"id": format!("q{:03}", i + 1), "answer": text}).to_string() + "\n")
        .collect();
    std::fs::write(&answers, lines).unwrap();
    let target = format!("answers:{}", answers.display());
    let name = "run \u{fffe}\u{ffff} [x](http://evil.example)";
    let out = assay(&["run", dataset.to_str().unwrap(), "--target", &target, "--limit", "4", "--name", name], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let export = |format: &str| {
        let file = tmp.path().join(format!("report.{format}"));
        let out = assay(&["export", name, "--format", format, "-o", file.to_str().unwrap()], &db);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(file).unwrap()
    };
    let md = export("md");
    for raw in ["![pixel](", "[click here](", "[x](", "`](evil"] {
        assert!(!md.contains(raw), "Markdown keeps {raw:?} live:\n{md}");
    }
    assert!(md.contains("pixel") && md.contains("click here"), "the text is still shown");
    let junit = export("junit");
    roxmltree::Document::parse(&junit).expect("JUnit output is well-formed XML");
    assert!(!junit.contains('\u{fffe}') && !junit.contains('\u{ffff}'));
}

/// The export is written through a temporary file beside the output. With a predictable name
/// (`.report.md.tmp-<pid>`) anyone who can write to that folder could plant a symlink there and
/// have the export overwrite another file; the temporary file is created exclusively under an
/// unpredictable name. Symlinks are planted for the next few thousand process ids here.
#[test]
fn an_export_never_writes_through_a_planted_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let out = assay(&["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--limit", "2", "--name", "planted"], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let exports = tmp.path().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    let last_pid: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").unwrap().trim().parse().unwrap();
    for pid in last_pid + 1..last_pid + 3000 {
        std::os::unix::fs::symlink(&victim, exports.join(format!(".report.md.tmp-{pid}"))).unwrap();
    }
    let report = exports.join("report.md");
    let out = assay(&["export", "planted", "--format", "md", "-o", report.to_str().unwrap()], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "the export wrote through a planted link");
    assert!(std::fs::symlink_metadata(&report).unwrap().file_type().is_file());
    assert!(std::fs::read_to_string(&report).unwrap().contains("# Assay report"));
}
