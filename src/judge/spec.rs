//! Judge specs as data: a `<name>.toml` file plus a minijinja prompt template next to it.
//!
//! Specs are validated when loaded (outcomes, values, pass threshold, template variables), so a
//! broken spec is reported with its file and field before any item is judged. Built-in specs are
//! compiled into the binary from `judges/`; a user judges dir adds specs or overrides them by name.

use serde::Deserialize;

use crate::record::StatementSide;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Variables a prompt template may use.
pub const TEMPLATE_VARIABLES: &[&str] =
    &["question", "reference", "answer", "context", "gold_context", "text", "claim", "answer_1", "answer_2", ASKED];

/// The variable a pairwise judge of each answer sets to `1` or `2`: which of the two answers
/// it asks about (set by the judge, never read from an item).
pub const ASKED: &str = "asked";

/// The variables only a pairwise judge reads: the two answers it compares.
const PAIR_VARIABLES: &[&str] = &["answer_1", "answer_2"];

/// The inputs a pairwise judge may read: what both runs share (the question, its reference and
/// golden context) and the two answers. One answer's own retrieved context has no place beside
/// the other's.
const PAIRWISE_INPUTS: &[&str] = &["question", "reference", "gold_context", "answer_1", "answer_2"];

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("{file}: cannot read: {source}")]
    Io { file: PathBuf, source: std::io::Error },
    #[error("{file}:{line}: {message}")]
    Toml { file: PathBuf, line: usize, message: String },
    #[error("{file}: field `{field}`: {message}")]
    Field { file: PathBuf, field: &'static str, message: String },
    #[error("{file}: prompt template: {message}")]
    Template { file: PathBuf, message: String },
    #[error("no judge named `{name}` (known: {known})")]
    Unknown { name: String, known: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeMode {
    /// The model picks one outcome by option scoring.
    Choice,
    /// Claims of reference and answer are extracted and each is checked with a Yes/No choice.
    Claims,
    /// The mean of other judges' expected scores (its `members`).
    Jury,
    /// The answer split into statements, each checked against the reference (precision), and
    /// the reference's statements against the answer (recall); see `statements`.
    Statements,
    /// Two answers to one question side by side: which is better (`1`, `2` or `tie`), judged
    /// in both orders (see `pairwise`). Used by a pairwise comparison of two runs, not by a run.
    Pairwise,
}

impl JudgeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeMode::Choice => "choice",
            JudgeMode::Claims => "claims",
            JudgeMode::Jury => "jury",
            JudgeMode::Statements => "statements",
            JudgeMode::Pairwise => "pairwise",
        }
    }
}

/// What a judge's verdict is measured against (`baseline` in a spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Baseline {
    /// The same prompt with the question in place of the answer: an answer that says nothing.
    /// Small judges say Yes to much on-topic text (the 1.5B gave an answer that only repeats
    /// the question P(Yes) 0.27 to 0.64); dividing by this prior keeps what the answer adds.
    Question,
}

/// The file format of a spec (`judges/<name>.toml`).
#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    prompt: String,
    /// Claims mode: the prompt that asks for the claims of a text (a file beside the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extract: Option<String>,
    /// Jury mode: the judges whose expected scores are averaged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    members: Vec<String>,
    /// Score cut points between consecutive outcomes (n - 1, increasing), fitted from human
    /// labels by `assay agree --calibrate`: the label is the outcome whose band holds the score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thresholds: Option<Vec<f64>>,
    /// How many human labels the thresholds were fitted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    calibrated_on: Option<usize>,
    outcomes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    values: Option<Vec<f64>>,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default = "default_mode")]
    mode: JudgeMode,
    #[serde(default)]
    explain: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pass: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    baseline: Option<Baseline>,
    /// Statements mode: which side's statements are checked (`answer`: precision, `reference`:
    /// recall); both when absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sides: Vec<StatementSide>,
    /// Choice, statements and claims modes: an answer that states nothing fails without the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    nothing_stated_fails: bool,
}

fn default_mode() -> JudgeMode {
    JudgeMode::Choice
}

/// A validated judge.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JudgeSpec {
    pub name: String,
    pub description: String,
    /// Where the spec came from (a path, or `built-in`).
    pub source: String,
    pub template: String,
    /// Claims mode: the template that asks for the claims of `{{ text }}`.
    pub extract_template: String,
    /// Jury mode: the member judges.
    pub members: Vec<String>,
    /// Calibrated score cut points between outcomes (None: the label is the most probable outcome).
    pub thresholds: Option<Vec<f64>>,
    pub calibrated_on: Option<usize>,
    /// Allowed outcomes, worst first.
    pub outcomes: Vec<String>,
    /// Raw value of each outcome (defaults to its index).
    pub values: Vec<f64>,
    pub inputs: Vec<String>,
    pub mode: JudgeMode,
    pub explain: bool,
    /// The worst outcome that still passes.
    pub pass: Option<String>,
    /// Model id for this judge, overriding the run's judge model.
    pub model: Option<String>,
    /// Choice mode: the distribution is divided by the one for this stand-in answer
    /// (contextual calibration), so the label says whether the answer beats it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Statements mode: the sides whose statements are checked (`answer`: precision against the
    /// reference, `reference`: recall against the answer). Both unless the spec names one: a
    /// judge that only needs recall reads half as many prompts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sides: Vec<StatementSide>,
    /// An answer that states nothing (a refusal, a lead-in, only questions, no words:
    /// `nothing_stated`) gets the worst outcome without the model, when the reference answers
    /// the question. For judges that check an answer against its reference. Left out of
    /// the hash when false, so specs without it keep theirs.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nothing_stated_fails: bool,
}

impl JudgeSpec {
    /// Whether a statements judge checks the statements of `side`.
    pub fn checks_side(&self, side: StatementSide) -> bool {
        self.sides.is_empty() || self.sides.contains(&side)
    }

    /// sha256 of everything in the spec that decides a verdict (every field but where it was
    /// read from), for a run's config: a resumed run must judge with the same specs.
    pub fn content_sha256(&self) -> String {
        use sha2::Digest;
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(fields) = value.as_object_mut() {
            fields.remove("source");
        }
        hex::encode(sha2::Sha256::digest(value.to_string().as_bytes()))
    }

    /// Parse and validate a spec; `file` names it in errors, `template` is the prompt text.
    pub fn parse(toml_text: &str, file: &Path, template: String) -> Result<Self, SpecError> {
        let raw: SpecFile = toml::from_str(toml_text).map_err(|e| toml_error(file, toml_text, &e))?;
        let field = |field, message: String| SpecError::Field { file: file.to_path_buf(), field, message };
        if raw.name.trim().is_empty() || !raw.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(field("name", format!("`{}` must be non-empty letters, digits, `_` or `-`", raw.name)));
        }
        if raw.outcomes.len() < 2 {
            return Err(field("outcomes", format!("needs at least two outcomes, found {}", raw.outcomes.len())));
        }
        for (i, outcome) in raw.outcomes.iter().enumerate() {
            if outcome.trim().is_empty() {
                return Err(field("outcomes", format!("outcome {} is empty", i + 1)));
            }
            if raw.outcomes[..i].contains(outcome) {
                return Err(field("outcomes", format!("`{outcome}` appears twice")));
            }
        }
        let values = match raw.values.clone() {
            None => (0..raw.outcomes.len()).map(|i| i as f64).collect::<Vec<_>>(),
            Some(values) => {
                if values.len() != raw.outcomes.len() {
                    return Err(field(
                        "values",
                        format!("{} values for {} outcomes", values.len(), raw.outcomes.len()),
                    ));
                }
                if values.iter().any(|v| !v.is_finite()) {
                    return Err(field("values", "values must be finite numbers".into()));
                }
                if values.windows(2).any(|w| w[1] <= w[0]) {
                    return Err(field("values", "values must increase from worst to best outcome".into()));
                }
                values
            }
        };
        for input in &raw.inputs {
            if !TEMPLATE_VARIABLES.contains(&input.as_str()) {
                return Err(field("inputs", format!("unknown input `{input}` (known: {})", TEMPLATE_VARIABLES.join(", "))));
            }
        }
        if let Some(pass) = &raw.pass {
            if !raw.outcomes.contains(pass) {
                return Err(field("pass", format!("`{pass}` is not one of the outcomes")));
            }
        }
        if raw.mode != JudgeMode::Pairwise {
            if let Some(pair) = raw.inputs.iter().find(|i| PAIR_VARIABLES.contains(&i.as_str())) {
                return Err(field("inputs", format!("`{pair}` is one of two answers side by side: only a pairwise judge (mode = \"pairwise\") reads it")));
            }
            let all: BTreeMap<&str, String> = TEMPLATE_VARIABLES.iter().map(|v| (*v, format!("<{v}>"))).collect();
            if render_template(&template, &all).is_ok_and(|shown| shown.contains(&format!("<{ASKED}>"))) {
                return Err(SpecError::Template {
                    file: prompt_path(file, &raw.prompt),
                    message: format!("`{{{{ {ASKED} }}}}` names one of two answers side by side: only a pairwise judge (mode = \"pairwise\") has it"),
                });
            }
        }
        if raw.inputs.iter().any(|i| i == ASKED) {
            return Err(field("inputs", format!("`{ASKED}` is set by a pairwise judge, not read from the item: leave it out of `inputs`")));
        }
        if matches!(raw.mode, JudgeMode::Claims | JudgeMode::Statements) && raw.outcomes != ["No", "Yes"] {
            return Err(field("outcomes", "claims and statements modes check each claim with outcomes [\"No\", \"Yes\"]".into()));
        }
        if raw.nothing_stated_fails {
            if !matches!(raw.mode, JudgeMode::Choice | JudgeMode::Statements | JudgeMode::Claims) {
                return Err(field("nothing_stated_fails", "only a choice, statements or claims judge fails an answer that states nothing".into()));
            }
            if !(raw.inputs.iter().any(|i| i == "answer") && raw.inputs.iter().any(|i| i == "reference")) {
                return Err(field("nothing_stated_fails", "judges an answer against its reference: `inputs` needs `answer` and `reference`".into()));
            }
        }
        if !raw.sides.is_empty() && raw.mode != JudgeMode::Statements {
            return Err(field("sides", "only a statements judge (mode = \"statements\") checks sides".into()));
        }
        match raw.mode {
            JudgeMode::Jury => {
                if raw.members.len() < 2 {
                    return Err(field("members", format!("a jury needs at least two member judges, found {}", raw.members.len())));
                }
                if raw.members.contains(&raw.name) {
                    return Err(field("members", "a jury cannot be its own member".into()));
                }
            }
            _ => {
                if !raw.members.is_empty() {
                    return Err(field("members", "only a jury (mode = \"jury\") has members".into()));
                }
                if raw.prompt.is_empty() {
                    return Err(field("prompt", "missing: the prompt template file".into()));
                }
                check_template(&template, &prompt_path(file, &raw.prompt))?;
            }
        }
        if raw.mode == JudgeMode::Pairwise {
            check_pairwise(&raw, &template, file)?;
        }
        if raw.baseline.is_some() {
            if raw.mode != JudgeMode::Choice {
                return Err(field("baseline", "only a choice judge (mode = \"choice\") has a baseline".into()));
            }
            if !(raw.inputs.iter().any(|i| i == "answer") && raw.inputs.iter().any(|i| i == "question")) {
                return Err(field("baseline", "puts the question in place of the answer: `inputs` needs both".into()));
            }
        }
        if let Some(thresholds) = &raw.thresholds {
            if thresholds.len() + 1 != raw.outcomes.len() {
                return Err(field(
                    "thresholds",
                    format!("{} cut points for {} outcomes (needs {})", thresholds.len(), raw.outcomes.len(), raw.outcomes.len() - 1),
                ));
            }
            if thresholds.iter().any(|t| !t.is_finite() || !(0.0..=1.0).contains(t)) || thresholds.windows(2).any(|w| w[1] < w[0]) {
                return Err(field("thresholds", "cut points must be increasing numbers in [0, 1]".into()));
            }
        }
        Ok(JudgeSpec {
            name: raw.name,
            description: raw.description,
            source: file.display().to_string(),
            template,
            extract_template: DEFAULT_EXTRACT.to_string(),
            members: raw.members,
            thresholds: raw.thresholds,
            calibrated_on: raw.calibrated_on,
            outcomes: raw.outcomes,
            values,
            inputs: raw.inputs,
            mode: raw.mode,
            explain: raw.explain,
            pass: raw.pass,
            model: raw.model,
            baseline: raw.baseline,
            sides: raw.sides,
            nothing_stated_fails: raw.nothing_stated_fails,
        })
    }

    /// Load `<dir>/<name>.toml` and the prompt file it names.
    pub fn load(file: &Path) -> Result<Self, SpecError> {
        let text = std::fs::read_to_string(file).map_err(|source| SpecError::Io { file: file.to_path_buf(), source })?;
        let raw: SpecFile = toml::from_str(&text).map_err(|e| toml_error(file, &text, &e))?;
        // The prompt lives beside its spec: a spec (perhaps shared by someone else) cannot make
        // Assay read files elsewhere into a prompt.
        let beside = |field: &'static str, name: &str| -> Result<String, SpecError> {
            let escapes = Path::new(name)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
            if name.is_empty() {
                return Err(SpecError::Field {
                    file: file.to_path_buf(),
                    field,
                    message: "missing field `prompt`: the name of the prompt template file beside this spec".into(),
                });
            }
            if escapes {
                return Err(SpecError::Field {
                    file: file.to_path_buf(),
                    field,
                    message: format!("`{name}` must be a file in the judges folder"),
                });
            }
            let path = prompt_path(file, name);
            // A symlink (or a linked folder on the way) could still lead out of the folder: the
            // resolved file must lie inside the resolved judges folder.
            let folder = file.parent().unwrap_or(Path::new(".")).canonicalize();
            if let (Ok(folder), Ok(resolved)) = (&folder, &path.canonicalize()) {
                if !resolved.starts_with(folder) {
                    return Err(SpecError::Field {
                        file: file.to_path_buf(),
                        field,
                        message: format!("`{name}` must be a file in the judges folder (it links to {})", resolved.display()),
                    });
                }
            }
            std::fs::read_to_string(&path).map_err(|source| SpecError::Io { file: path.clone(), source })
        };
        let template = if raw.mode == JudgeMode::Jury && raw.prompt.is_empty() { String::new() } else { beside("prompt", &raw.prompt)? };
        let mut spec = Self::parse(&text, file, template)?;
        if let Some(extract) = &raw.extract {
            let template = beside("extract", extract)?;
            check_template(&template, &prompt_path(file, extract))?;
            spec.extract_template = template;
        }
        Ok(spec)
    }

    /// The label for an expected score under calibrated thresholds (None: not calibrated).
    pub fn calibrated_label(&self, score: f64) -> Option<&str> {
        let thresholds = self.thresholds.as_ref()?;
        let band = thresholds.iter().filter(|t| score >= **t).count();
        self.outcomes.get(band).map(|s| s.as_str())
    }

    /// Render the prompt for one item. Variables a template does not use are ignored.
    pub fn render(&self, variables: &BTreeMap<&str, String>) -> Result<String, SpecError> {
        render_template(&self.template, variables).map_err(|message| SpecError::Template {
            file: PathBuf::from(&self.source),
            message,
        })
    }

    /// Render the claim-extraction prompt (claims mode) for `variables` (`text`).
    pub fn render_extract(&self, variables: &BTreeMap<&str, String>) -> Result<String, SpecError> {
        render_template(&self.extract_template, variables).map_err(|message| SpecError::Template {
            file: PathBuf::from(&self.source),
            message,
        })
    }

    /// Score in [0, 1] of outcome `index`: its value rescaled between the worst and best values.
    pub fn normalised_value(&self, index: usize) -> f64 {
        let (lo, hi) = (self.values[0], self.values[self.values.len() - 1]);
        (self.values[index] - lo) / (hi - lo)
    }

    /// Whether `label` meets the pass threshold (None when the spec has none).
    pub fn passes(&self, label: &str) -> Option<bool> {
        let pass = self.pass.as_ref()?;
        let at = |l: &str| self.outcomes.iter().position(|o| o == l);
        Some(at(label)? >= at(pass)?)
    }
}

/// Write a copy of `spec` into `dir` with calibrated `thresholds` (fitted on `labels` human
/// labels): `<name>.toml` beside its prompt files, which then replaces the built-in or the
/// user's spec of that name. Returns the spec file written.
pub fn write_calibrated_copy(spec: &JudgeSpec, dir: &Path, thresholds: &[f64], labels: usize) -> Result<PathBuf, SpecError> {
    let io = |file: PathBuf| move |source| SpecError::Io { file, source };
    std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
    let file = dir.join(format!("{}.toml", spec.name));
    let (prompt, extract) = match spec.mode {
        JudgeMode::Jury => (String::new(), None),
        JudgeMode::Claims => (format!("{}.md", spec.name), Some(format!("{}-extract.md", spec.name))),
        JudgeMode::Choice | JudgeMode::Statements | JudgeMode::Pairwise => (format!("{}.md", spec.name), None),
    };
    if !prompt.is_empty() {
        std::fs::write(dir.join(&prompt), &spec.template).map_err(io(dir.join(&prompt)))?;
    }
    if let Some(extract) = &extract {
        std::fs::write(dir.join(extract), &spec.extract_template).map_err(io(dir.join(extract)))?;
    }
    let default_values: Vec<f64> = (0..spec.outcomes.len()).map(|i| i as f64).collect();
    let raw = SpecFile {
        name: spec.name.clone(),
        description: spec.description.clone(),
        prompt,
        extract,
        members: spec.members.clone(),
        thresholds: Some(thresholds.iter().map(|t| (t * 1e4).round() / 1e4).collect()),
        calibrated_on: Some(labels),
        outcomes: spec.outcomes.clone(),
        values: (spec.values != default_values).then(|| spec.values.clone()),
        inputs: spec.inputs.clone(),
        mode: spec.mode,
        explain: spec.explain,
        pass: spec.pass.clone(),
        model: spec.model.clone(),
        baseline: spec.baseline,
        sides: spec.sides.clone(),
        nothing_stated_fails: spec.nothing_stated_fails,
    };
    let text = toml::to_string(&raw).map_err(|e| SpecError::Field { file: file.clone(), field: "thresholds", message: e.to_string() })?;
    std::fs::write(&file, text).map_err(io(file.clone()))?;
    // What was written must load back as the same judge.
    JudgeSpec::load(&file)?;
    Ok(file)
}

/// A TOML error with its line, without the quoted source line (which can be megabytes long).
fn toml_error(file: &Path, text: &str, error: &toml::de::Error) -> SpecError {
    let offset = error.span().map_or(0, |span| span.start.min(text.len()));
    SpecError::Toml {
        file: file.to_path_buf(),
        line: text.as_bytes()[..offset].iter().filter(|b| **b == b'\n').count() + 1,
        message: error.message().trim_end().to_string(),
    }
}

fn prompt_path(spec_file: &Path, prompt: &str) -> PathBuf {
    spec_file.parent().unwrap_or(Path::new(".")).join(prompt)
}

fn render_template(template: &str, variables: &BTreeMap<&str, String>) -> Result<String, String> {
    let mut env = crate::bounded_template::environment();
    // Strict: a misspelt variable is an error, not an empty string in the prompt.
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(false);
    env.add_template("prompt", template).map_err(|e| e.to_string())?;
    let tmpl = env.get_template("prompt").map_err(|e| e.to_string())?;
    crate::bounded_template::render(&tmpl, variables).map_err(|e| e.to_string())
}

/// What a pairwise spec must be: outcomes `1` and `2` (and `tie` if it offers one) for a judge
/// asked which answer is better, or two outcomes, worst first (`No`, `Yes`), for one asked about
/// each answer in turn, whose prompt then names the answer asked about with `{{ asked }}`;
/// inputs that both runs share plus both answers, a prompt that shows both answers, and none of
/// the settings that read one answer's score (pass, thresholds, baseline, explanation).
fn check_pairwise(raw: &SpecFile, template: &str, file: &Path) -> Result<(), SpecError> {
    use crate::record::{FIRST_ANSWER, SECOND_ANSWER, TIE};
    let field = |field, message: String| SpecError::Field { file: file.to_path_buf(), field, message };
    let allowed = [FIRST_ANSWER, SECOND_ANSWER, TIE];
    let which_better = raw.outcomes.iter().all(|o| allowed.contains(&o.as_str()))
        && raw.outcomes.iter().any(|o| o == FIRST_ANSWER)
        && raw.outcomes.iter().any(|o| o == SECOND_ANSWER);
    let each_answer = raw.outcomes.len() == 2 && raw.outcomes.iter().all(|o| !allowed.contains(&o.as_str()));
    if !which_better && !each_answer {
        return Err(field(
            "outcomes",
            format!(
                "a pairwise judge's outcomes are [\"1\", \"2\", \"tie\"] (or [\"1\", \"2\"]), or two outcomes such as [\"No\", \"Yes\"] asked of each answer, found {:?}",
                raw.outcomes
            ),
        ));
    }
    for input in &raw.inputs {
        if !PAIRWISE_INPUTS.contains(&input.as_str()) {
            return Err(field("inputs", format!("a pairwise judge reads only {}; found `{input}`", PAIRWISE_INPUTS.join(", "))));
        }
    }
    for pair in PAIR_VARIABLES {
        if !raw.inputs.iter().any(|i| i == pair) {
            return Err(field("inputs", format!("a pairwise judge reads both answers: `inputs` needs `{pair}`")));
        }
    }
    let unused = [
        ("pass", raw.pass.is_some()),
        ("thresholds", raw.thresholds.is_some()),
        ("baseline", raw.baseline.is_some()),
        ("explain", raw.explain),
        ("values", raw.values.is_some()),
    ];
    if let Some((name, _)) = unused.iter().find(|(_, set)| *set) {
        return Err(field(name, format!("a pairwise judge has no `{name}`: its verdict is a preference between two answers, not a score")));
    }
    // Both answers must reach the prompt, or the judge compares one answer with nothing.
    let all: BTreeMap<&str, String> = TEMPLATE_VARIABLES.iter().map(|v| (*v, format!("<{v}>"))).collect();
    let shown = render_template(template, &all).map_err(|message| SpecError::Template { file: prompt_path(file, &raw.prompt), message })?;
    for pair in PAIR_VARIABLES {
        if !shown.contains(&format!("<{pair}>")) {
            return Err(SpecError::Template {
                file: prompt_path(file, &raw.prompt),
                message: format!("a pairwise prompt shows both answers: `{{{{ {pair} }}}}` is missing"),
            });
        }
    }
    // A judge of each answer must say which one it asks about; one asked which is better has
    // no answer to name.
    if shown.contains(&format!("<{ASKED}>")) != each_answer {
        let message = if each_answer {
            format!("a pairwise judge with outcomes {:?} is asked about each answer in turn: the prompt needs `{{{{ {ASKED} }}}}`", raw.outcomes)
        } else {
            format!("`{{{{ {ASKED} }}}}` names the answer asked about, for a pairwise judge with outcomes such as [\"No\", \"Yes\"]; this one asks which is better")
        };
        return Err(SpecError::Template { file: prompt_path(file, &raw.prompt), message });
    }
    Ok(())
}

/// A test render with every known variable set: finds syntax errors and unknown variables.
fn check_template(template: &str, file: &Path) -> Result<(), SpecError> {
    let all: BTreeMap<&str, String> = TEMPLATE_VARIABLES.iter().map(|v| (*v, format!("<{v}>"))).collect();
    render_template(template, &all)
        .map(|_| ())
        .map_err(|message| SpecError::Template { file: file.to_path_buf(), message })
}

/// The built-in claim-extraction prompt (claims specs without `extract` use it).
pub const DEFAULT_EXTRACT: &str = include_str!("../../judges/claims-extract.md");

/// The built-in specs, compiled in from `judges/`.
const BUILT_IN: &[(&str, &str, &str)] = &[
    ("correctness", include_str!("../../judges/correctness.toml"), include_str!("../../judges/correctness.md")),
    ("correctness5", include_str!("../../judges/correctness5.toml"), include_str!("../../judges/correctness5.md")),
    ("correct", include_str!("../../judges/correct.toml"), include_str!("../../judges/correct.md")),
    ("faithfulness", include_str!("../../judges/faithfulness.toml"), include_str!("../../judges/faithfulness.md")),
    ("relevance", include_str!("../../judges/relevance.toml"), include_str!("../../judges/relevance.md")),
    ("abstention", include_str!("../../judges/abstention.toml"), include_str!("../../judges/abstention.md")),
    ("claims", include_str!("../../judges/claims.toml"), include_str!("../../judges/claims.md")),
    ("jury", include_str!("../../judges/jury.toml"), ""),
    ("supported", include_str!("../../judges/supported.toml"), include_str!("../../judges/supported.md")),
    ("facts", include_str!("../../judges/facts.toml"), ""),
    ("facts-overlap", include_str!("../../judges/facts-overlap.toml"), ""),
    ("covered", include_str!("../../judges/covered.toml"), include_str!("../../judges/supported.md")),
    ("facts-recall", include_str!("../../judges/facts-recall.toml"), ""),
    ("better", include_str!("../../judges/better.toml"), include_str!("../../judges/better.md")),
];

/// One built-in spec by name (None: no such built-in).
pub fn builtin(name: &str) -> Option<JudgeSpec> {
    load_all(None).ok()?.remove(name)
}

/// All judges: built-ins, then every `*.toml` in `user_dir` (a user spec replaces a built-in of
/// the same name). A missing user dir is fine; a broken spec in it is an error.
pub fn load_all(user_dir: Option<&Path>) -> Result<BTreeMap<String, JudgeSpec>, SpecError> {
    let mut specs = BTreeMap::new();
    for (name, toml_text, template) in BUILT_IN {
        let file = PathBuf::from(format!("judges/{name}.toml"));
        let mut spec = JudgeSpec::parse(toml_text, &file, template.to_string())?;
        spec.source = "built-in".into();
        specs.insert(spec.name.clone(), spec);
    }
    if let Some(dir) = user_dir.filter(|d| d.is_dir()) {
        let entries = std::fs::read_dir(dir).map_err(|source| SpecError::Io { file: dir.to_path_buf(), source })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            let spec = JudgeSpec::load(&file)?;
            specs.insert(spec.name.clone(), spec);
        }
    }
    Ok(specs)
}

/// Pick judges by name, in the order given. A jury brings its members (before it, unless they
/// were named already), since its score is made from theirs.
pub fn select(specs: &BTreeMap<String, JudgeSpec>, names: &[String]) -> Result<Vec<JudgeSpec>, SpecError> {
    let find = |name: &String| {
        specs.get(name).cloned().ok_or_else(|| SpecError::Unknown {
            name: name.clone(),
            known: specs.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    };
    let mut selected: Vec<JudgeSpec> = Vec::new();
    for name in names {
        let spec = find(name)?;
        // Metric members are computed by the jury itself (`jury_metrics`), unless a judge of
        // that name exists (a user's judge named `rouge_l` is a judge).
        for member in spec.members.iter().filter(|m| specs.contains_key(*m) || !super::jury_metrics::is_jury_metric(m)) {
            let member_spec = find(member)?;
            if member_spec.mode == JudgeMode::Jury {
                return Err(SpecError::Field {
                    file: PathBuf::from(&spec.source),
                    field: "members",
                    message: format!("`{member}` is a jury itself"),
                });
            }
            if !names.contains(member) && !selected.iter().any(|s| &s.name == member) {
                selected.push(member_spec);
            }
        }
        if !selected.iter().any(|s| &s.name == name) {
            selected.push(spec);
        }
    }
    Ok(selected)
}

/// The default user judges dir: `<data dir>/assay/judges`.
pub fn default_judges_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "assay").map(|d| d.data_dir().join("judges"))
}
