//! Templates that build gigabytes in a few steps (issue 36): each payload is rendered in a
//! child process capped at 1.5 GiB of address space, which must end with an error naming the
//! template file and the limit, having used a bounded amount of memory (its peak resident size,
//! read from /proc/self/status). Then the same through the CLI: a dataset's own `prompt.md` and
//! a judge file in the judges folder. Ordinary templates must render exactly as minijinja
//! renders them unguarded.

use crate::common::{assay_command, dataset_copy};
use assay::bounded_template;
use std::process::Command;

/// One payload per way of building a large value in one step, or in many small kept ones.
const PAYLOADS: &[(&str, &str, &str)] = &[
    (
        "concat-doubling",
        r#"{% set s = "a" * 10000000 %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{{ s|length }}"#,
        "`~` would build a value larger than the 16 MiB",
    ),
    ("range-repeat-join", "{{ (range(100000) * 100000)|join }}", "`*` would build a list of more than"),
    ("string-repeat", r#"{{ "ab" * 90000000 }}"#, "`*` would build a value of 172 MiB"),
    ("plus-doubling", r#"{% set s = "a" * 9000000 %}{% set s = s + s %}{{ s|length }}"#, "`+` would build a value of 18 MiB"),
    ("list-repeat-join", r#"{% set l = ["x" * 1000000] * 1000 %}{{ l|join }}"#, "filter `join` would build a value larger"),
    ("replace-empty", r#"{{ ("x" * 1000000)|replace("", "yyyyyyyyyyyyyyyyyyyy") }}"#, "filter `replace` would build a value of 21 MiB"),
    ("indent-wide", "{{ (\"a\\n\" * 1000000)|indent(1000) }}", "filter `indent` would build a value of 956 MiB"),
    ("list-of-characters", r#"{{ ("x" * 10000000)|list|length }}"#, "filter `list` would build a list of more than"),
    ("batch-padding", "{{ [1]|batch(1000000000000, fill_with=0) }}", "filter `batch` would build a list of more than"),
    ("format-width", r#"{{ "%999999999s"|format("a") }}"#, "filter `format` would build a value of 954 MiB"),
    ("string-of-shared-list", r#"{{ (["x" * 10000000] * 100000)|string }}"#, "filter `string` would build a value larger"),
    ("method-replace", r#"{{ ("x" * 10000000).replace("", "yy") }}"#, "method `replace` would build a value of 29 MiB"),
    (
        "captured-loop",
        "{% set x %}{% for i in range(100000) %}{% for j in range(40) %}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa{% endfor %}{% endfor %}{% endset %}{{ x|length }}",
        "the rendered text passed 16 MiB",
    ),
    (
        "kept-in-a-list",
        r#"{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [("x" * 1000000) ~ i] %}{% endfor %}{{ ns.l|length }}"#,
        "more than 64 MiB of values and text in all",
    ),
    (
        "kept-in-dicts",
        r#"{% set big = "x" * 8000000 %}{% set ns = namespace(d=none) %}{% for i in range(100000) %}{% set ns.d = {"up": ns.d, "text": big[i:]} %}{% endfor %}done"#,
        "more than 64 MiB of values and text in all",
    ),
    (
        "written-out",
        r#"{% for i in range(100000) %}{% for j in range(40) %}{{ "y" * 1000 }}{% endfor %}{% endfor %}"#,
        "the rendered text passed 16 MiB",
    ),
];

/// Peak resident memory one payload's child may reach: the 64 MiB render budget, one value
/// being measured, and the test binary itself.
const MAX_PEAK_KIB: u64 = 200 * 1024;

const PAYLOAD_VAR: &str = "ASSAY_TEST_TEMPLATE_PAYLOAD";

#[test]
fn every_payload_stops_with_a_named_error_and_bounded_memory() {
    let exe = std::env::current_exe().expect("the test binary's path");
    for (name, _, expected) in PAYLOADS {
        // `ulimit -v` caps the child, so an unguarded step fails fast instead of taking the machine.
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1572864 && exec \"$0\" template_payload_child --nocapture --test-threads=1")
            .arg(&exe)
            .env(PAYLOAD_VAR, name)
            .output()
            .expect("the test binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: the child failed ({:?})\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The harness may print the test's name on the same line first.
        let after = |tag: &str| stdout.lines().find_map(|l| l.split_once(tag).map(|(_, rest)| rest.to_string()));
        let outcome = after("OUTCOME: ").unwrap_or_else(|| panic!("{name}: no outcome\n{stdout}"));
        assert!(outcome.contains(expected), "{name}: expected {expected:?}, got {outcome:?}");
        assert!(outcome.contains("payload.md"), "{name}: the error does not name the template: {outcome:?}");
        let peak: u64 = after("PEAK_KIB: ")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name}: no peak\n{stdout}"));
        assert!(peak <= MAX_PEAK_KIB, "{name}: peak {peak} KiB over {MAX_PEAK_KIB} KiB");
        println!("{name}: peak {} MiB: {outcome}", peak / 1024);
    }
}

/// The child side: renders one payload (named by the environment) and prints the error and
/// its own peak resident size. Without the variable it does nothing.
#[test]
fn template_payload_child() {
    let Ok(wanted) = std::env::var(PAYLOAD_VAR) else { return };
    let (_, source, _) = PAYLOADS.iter().find(|(name, _, _)| *name == wanted).expect("a known payload");
    let mut env = bounded_template::environment();
    env.add_template("payload.md", source).expect("the payload parses");
    let template = env.get_template("payload.md").expect("added above");
    let outcome = match bounded_template::render(&template, minijinja::context! {}) {
        Ok(text) => format!("rendered {} bytes", text.len()),
        Err(e) => e.to_string(),
    };
    println!("OUTCOME: {}", outcome.replace('\n', " "));
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).expect("VmHWM");
    println!("PEAK_KIB: {}", peak.trim().trim_end_matches("kB").trim());
}

/// Templates as real prompts and chat templates write them render exactly as minijinja renders
/// them without the guards (the guards change how steps are run, never what they produce).
#[test]
fn ordinary_templates_render_as_minijinja_renders_them() {
    let sources = [
        "Hello {{ name }}!\n{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}{% if not loop.last %}\n{% endif %}{% endfor %}",
        "{% set ns = namespace(text='', n=0) %}{% for m in messages %}{% set ns.text = ns.text + m.content %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.text }} {{ ns.n }}",
        "{{ messages[1:] | map(attribute='role') | join(', ') }} {{ messages[-1]['content'][:5] }} {{ 'x' ~ 3 ~ none }}",
        "{{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ 2 ** 10 }} {{ [1, 2] + [3] }} {{ [0] * 3 }} {{ 'ab' * 3 }} {{ 1.5 + 1 }}",
        "{% macro item(n, text) %}[{{ n }}] {{ text | upper }}{% endmacro %}{% for c in chunks %}{{ item(loop.index, c) }}\n{% endfor %}",
        "{% set block %}captured {{ name }}{% endset %}{{ block | replace('captured', 'kept') | indent(2, first=true) }}",
        "{{ 'a' in 'cat' }} {{ 3 in [1, 2, 3] }} {{ name is startingwith('wor') }} {{ chunks | length }} {{ chunks | reverse | list }}",
        "{{ '%s has %d items' | format(name, 3) }} {{ chunks | batch(2) | list }} {{ chunks | slice(2) | list }} {{ 'a b  c' | split | list }}",
        "{% for c in chunks if c != 'b' %}{{ c }}{% else %}none{% endfor %} {{ missing | default('fallback') }} {{ {'k': 1} | items | list }}",
        "{% filter upper %}shout {{ name }}{% endfilter %} {% with x = 2 %}{{ x * x }}{% endwith %} {{ chunks | unique | sort | join('') }}",
    ];
    let context = minijinja::context! {
        name => "world",
        messages => vec![
            minijinja::context! { role => "system", content => "  Be brief. " },
            minijinja::context! { role => "user", content => "What is the weight?" },
        ],
        chunks => vec!["a", "b", "c"],
    };
    for source in sources {
        let mut plain = minijinja::Environment::new();
        plain.add_template("t.md", source).unwrap();
        let expected = plain.get_template("t.md").unwrap().render(&context).unwrap();
        let mut env = bounded_template::environment();
        env.add_template("t.md", source).unwrap();
        let got = bounded_template::render(&env.get_template("t.md").unwrap(), &context)
            .unwrap_or_else(|e| panic!("{source}: {e:#}"));
        assert_eq!(got, expected, "{source}");
    }
}

/// Strict templates stay strict: an undefined value in an operator is still an error, placed in
/// the template rather than in the guard.
#[test]
fn strict_undefined_values_are_still_errors_in_the_template() {
    let mut env = bounded_template::environment();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("strict.md", "line one\n{{ misspelt ~ 'x' }}").unwrap();
    let err = bounded_template::render(&env.get_template("strict.md").unwrap(), minijinja::context! {}).unwrap_err();
    assert_eq!(err.kind(), minijinja::ErrorKind::UndefinedError);
    assert_eq!((err.name(), err.line()), (Some("strict.md"), Some(2)));
}

/// A template may not name the guards' hooks (it could otherwise swap one for its own macro).
#[test]
fn the_guards_names_are_reserved() {
    let mut env = bounded_template::environment();
    env.add_template("sneaky.md", "{% macro __assay_guard_emit(v) %}{% endmacro %}{{ 'x' }}").unwrap();
    let err = bounded_template::render(&env.get_template("sneaky.md").unwrap(), minijinja::context! {}).unwrap_err();
    assert!(err.to_string().contains("reserved"), "{err}");
}

fn peak_rss_kib(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maximum resident size in:\n{stderr}"))
}

const BOMB: &str = "{% set s = \"a\" * 10000000 %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{{ s }}{{ question }}";

/// A downloaded dataset's own prompt.md: `assay run` refuses it by name before any model loads,
/// in bounded memory (`/usr/bin/time -v` reads the CLI's peak resident size).
#[test]
fn a_dataset_prompt_bomb_is_refused_by_name_before_a_model_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    std::fs::write(dataset.join("prompt.md"), BOMB).unwrap();
    let db = tmp.path().join("runs.sqlite");
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_assay"))
        .args(["run", dataset.to_str().unwrap(), "--target", "rag", "--model", "smollm2-135m-instruct", "--limit", "1"])
        .env("ASSAY_DB", &db)
        .output()
        .expect("assay runs under /usr/bin/time");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the bomb was accepted:\n{stderr}");
    assert!(stderr.contains("prompt.md"), "the error does not name the file:\n{stderr}");
    assert!(stderr.contains("16 MiB one value may hold"), "the error does not name the limit:\n{stderr}");
    let peak = peak_rss_kib(&stderr);
    assert!(peak <= 300 * 1024, "assay run peaked at {} MiB", peak / 1024);
    assert!(!db.exists(), "a refused prompt left a database behind");
}

/// A judge file with a bomb in its prompt: `judges list` reports that judge and still lists.
#[test]
fn a_judge_prompt_bomb_is_reported_by_judges_list() {
    let tmp = tempfile::tempdir().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(
        judges.join("bomb.toml"),
        "name = \"bomb\"\ndescription = \"a crafted judge\"\nprompt = \"bomb.md\"\noutcomes = [\"No\", \"Yes\"]\n\
         inputs = [\"answer\"]\nmode = \"choice\"\npass = \"Yes\"\n",
    )
    .unwrap();
    std::fs::write(judges.join("bomb.md"), BOMB.replace("{{ question }}", "{{ answer }} Yes or No?")).unwrap();
    let db = tmp.path().join("runs.sqlite");
    let command = assay_command(&["judges", "list", "--judges-dir", judges.to_str().unwrap()], &db);
    let out = Command::new("/usr/bin/time").arg("-v").arg(command.get_program()).args(command.get_args()).envs(
        command.get_envs().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
    ).output().expect("assay runs under /usr/bin/time");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("bomb"), "the judge is not named:\n{all}");
    assert!(all.contains("16 MiB one value may hold"), "the limit is not named:\n{all}");
    let peak = peak_rss_kib(&stderr);
    assert!(peak <= 300 * 1024, "judges list peaked at {} MiB", peak / 1024);
}
