//! A pairwise comparison of two stored runs: every question both runs answered is judged
//! (`judge::pairwise` side by side in both orders, or `judge::graded_pairs` each answer alone
//! by an absolute judge), each judgment is stored as soon as it is made (`store::pairwise`),
//! judgments already stored for the same runs, judge, judge model and answers are reused (the
//! judge model is not even loaded when nothing is missing; an absolute judge's verdicts stored
//! with the runs count too), and the statistics (`stats::pairwise_statistics`) give the verdict
//! by the rule every metric of a comparison uses (`compare::pairwise_verdict`): p below 0.05
//! and the interval on one side of "no preference".
//!
//! It lives here, not in `compare`, because it runs a judge; `compare` only reads stored
//! figures.

use crate::compare::{pairwise_outcome, PairwiseOutcome, PairwiseSource};
use crate::dataset::Question;
use crate::judge::graded_pairs::{graded_judgment, EachAnswerAlone};
use crate::judge::pairwise::{recombined, JudgingPairs, PairwiseJudge, ServedPairwiseJudge};
use crate::judge::spec::{self, JudgeMode, JudgeSpec};
use crate::llm::device::DeviceChoice;
use crate::llm::model::LanguageModel;
use crate::llm::server::ServerModel;
use crate::models::registry::Registry;
use crate::record::{Answer, ItemRecord, PairwiseJudgment, RunRecord, Verdict};
use crate::stats::RunReport;
use crate::store::{PairwiseKey, Store, StoreError};
use super::request::{judge_panel, DEFAULT_JUDGE_MODEL};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The judge a pairwise comparison uses when none is named: `correct`, each answer judged
/// alone. With the default judge model it picked the labelled-correct answer far more often
/// than the side-by-side `better` (docs/pairwise.md: 77 of 79 sample pairs against 64, 36 of
/// 39 long-against-short pairs against 6 of 12).
pub const DEFAULT_PAIRWISE_JUDGE: &str = "correct";

/// How a pairwise comparison judges one question.
#[derive(Debug, Clone)]
pub enum PairwiseJudgeSpec {
    /// Both answers in one prompt, in both orders: a `mode = "pairwise"` spec such as `better`.
    SideBySide(Box<JudgeSpec>),
    /// Each answer judged alone by an absolute judge (`name`), whose specs (with a jury's
    /// members) are `specs`.
    EachAlone { name: String, specs: Vec<JudgeSpec> },
}

impl PairwiseJudgeSpec {
    /// The judge `name` from `spec::select`'s choice (it and its members): side by side when
    /// it is a pairwise spec, else each answer alone. None when `name` is not among them.
    fn from_selection(name: &str, chosen: Vec<JudgeSpec>) -> Option<Self> {
        let spec = chosen.iter().find(|s| s.name == name)?.clone();
        Some(match spec.mode {
            JudgeMode::Pairwise => PairwiseJudgeSpec::SideBySide(Box::new(spec)),
            _ => PairwiseJudgeSpec::EachAlone { name: name.to_string(), specs: chosen },
        })
    }

    pub fn name(&self) -> &str {
        match self {
            PairwiseJudgeSpec::SideBySide(spec) => &spec.name,
            PairwiseJudgeSpec::EachAlone { name, .. } => name,
        }
    }

    /// What the stored judgments are keyed by: the spec's hash; for an absolute judge with
    /// members, a hash of every spec it reads, so a changed member is a new judge.
    pub fn content_sha256(&self) -> String {
        match self {
            PairwiseJudgeSpec::SideBySide(spec) => spec.content_sha256(),
            PairwiseJudgeSpec::EachAlone { specs, .. } if specs.len() == 1 => specs[0].content_sha256(),
            PairwiseJudgeSpec::EachAlone { specs, .. } => {
                use sha2::Digest;
                let mut lines: Vec<String> = specs.iter().map(|s| format!("{}={}\n", s.name, s.content_sha256())).collect();
                lines.sort();
                hex::encode(sha2::Sha256::digest(lines.concat().as_bytes()))
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PairwiseError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("pairwise judge: {0}")]
    Judge(String),
    #[error("the pairwise comparison was stopped after {judged} of {missing} questions (they are stored and will be reused)")]
    Cancelled { judged: usize, missing: usize },
}

/// What a face asks for.
pub struct PairwiseRequest<'a> {
    pub run_a: &'a RunRecord,
    pub run_b: &'a RunRecord,
    /// The judge (`pairwise_spec` finds one by name).
    pub spec: PairwiseJudgeSpec,
    /// The judge model id (a registry model or a `[[server]]` entry).
    pub judge_model: String,
    pub device: DeviceChoice,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// What a pairwise comparison reports while it works.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PairwiseProgress {
    /// The questions both runs answered, and how many were judged before.
    Started { pairs: usize, reused: usize },
    /// The judge model is being loaded (only when something is left to judge).
    LoadingJudge { model: String },
    /// One question judged in both orders.
    Judged { question_id: String, done: usize, missing: usize, error: Option<String> },
}

/// What a face asks for by name: the database, the two runs (id, unique prefix or name), the
/// judge (`correct` when None; from the built-ins and `judges_dir`) and the judge model
/// (`DEFAULT_JUDGE_MODEL` when None).
#[derive(Debug, Clone)]
pub struct PairwiseOrder {
    pub database: PathBuf,
    pub run_a: String,
    pub run_b: String,
    pub judge: Option<String>,
    pub judges_dir: Option<PathBuf>,
    pub judge_model: Option<String>,
    pub device: DeviceChoice,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// The pairwise comparison both faces call: the runs and the judge found by name (every
/// error before a model loads), then `pairwise_compare`.
pub fn compare_pairwise(order: &PairwiseOrder, events: &mut dyn FnMut(PairwiseProgress)) -> Result<PairwiseOutcome, PairwiseError> {
    let store = Store::open_existing(&order.database)?;
    let (run_a, run_b) = (store.find_run(&order.run_a)?, store.find_run(&order.run_b)?);
    let request = PairwiseRequest {
        run_a: &run_a,
        run_b: &run_b,
        spec: pairwise_spec(order.judge.as_deref(), order.judges_dir.as_deref())?,
        judge_model: order.judge_model.clone().unwrap_or_else(|| DEFAULT_JUDGE_MODEL.to_string()),
        device: order.device,
        cancel: order.cancel.clone(),
    };
    pairwise_compare(&store, &request, events)
}

/// A pairwise judge by name (`correct` when None), from the built-ins and `judges_dir`: a
/// pairwise spec is judged side by side, any other judge grades each answer alone.
pub fn pairwise_spec(name: Option<&str>, judges_dir: Option<&Path>) -> Result<PairwiseJudgeSpec, PairwiseError> {
    let name = name.unwrap_or(DEFAULT_PAIRWISE_JUDGE).to_string();
    let specs = spec::load_all(judges_dir).map_err(|e| PairwiseError::Judge(e.to_string()))?;
    let chosen = spec::select(&specs, std::slice::from_ref(&name)).map_err(|e| PairwiseError::Judge(e.to_string()))?;
    PairwiseJudgeSpec::from_selection(&name, chosen).ok_or_else(|| PairwiseError::Judge(format!("no judge named `{name}`")))
}

/// The judge on its model: a served model when the registry names a server, else in process.
pub fn pairwise_judge(spec: PairwiseJudgeSpec, model_id: &str, device: DeviceChoice) -> Result<Box<dyn JudgingPairs>, PairwiseError> {
    let error = |e: String| PairwiseError::Judge(e);
    let spec = match spec {
        PairwiseJudgeSpec::EachAlone { name, specs } => {
            let (panel, model) = judge_panel(specs, Some(model_id), device)
                .map_err(|e| error(e.to_string()))?
                .ok_or_else(|| error(format!("judge `{name}` has no spec to run")))?;
            return Ok(Box::new(EachAnswerAlone::new(name, panel, model)));
        }
        PairwiseJudgeSpec::SideBySide(spec) => *spec,
    };
    let registry = Registry::load().map_err(|e| error(e.to_string()))?;
    Ok(match registry.server(model_id) {
        Some(server) => Box::new(ServedPairwiseJudge::new(spec, Arc::new(ServerModel::new(server.clone()))).map_err(|e| error(e.to_string()))?),
        None => {
            let model = LanguageModel::by_id(&registry, model_id, device).map_err(|e| error(e.to_string()))?;
            Box::new(PairwiseJudge::new(spec, model).map_err(|e| error(e.to_string()))?)
        }
    })
}

/// The key a pairwise comparison with the judge `name` stores its judgments under (None when
/// its members cannot be found).
fn judge_sha256_of(specs: &BTreeMap<String, JudgeSpec>, name: &str) -> Option<String> {
    let chosen = spec::select(specs, &[name.to_string()]).ok()?;
    Some(PairwiseJudgeSpec::from_selection(name, chosen)?.content_sha256())
}

/// A run's stored verdicts by an absolute judge, by question, when they were made by the same
/// judge specs on the same judge model (else None: they would not be the judgment asked for).
fn stored_verdicts(run: &RunRecord, items: &[ItemRecord], spec: &PairwiseJudgeSpec, judge_model: &str) -> Option<BTreeMap<String, Verdict>> {
    let PairwiseJudgeSpec::EachAlone { name, specs } = spec else { return None };
    let config = &run.config;
    let same_specs = specs.iter().all(|s| config.judge_specs.get(&s.name) == Some(&s.content_sha256()));
    if config.judge_model.as_deref() != Some(judge_model) || !same_specs {
        return None;
    }
    Some(
        items
            .iter()
            .filter_map(|item| Some((item.question.id.clone(), item.verdicts.get(name)?.clone())))
            .filter(|(_, verdict)| verdict.score.is_some_and(f64::is_finite))
            .collect(),
    )
}

/// A hash of what the judge reads of one question: the question, its reference and both
/// answers, in this order (A's, then B's).
pub fn answers_sha256(question: &Question, a: &Answer, b: &Answer) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for part in [question.question.as_str(), question.answer.as_deref().unwrap_or(""), a.text.as_str(), b.text.as_str()] {
        // Length-prefixed, so no two different splits of the same bytes hash alike.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Judge what is missing, store it, and return every judgment with the statistics. The judge
/// model is loaded only when some question has no stored judgment.
pub fn pairwise_compare(
    store: &Store,
    request: &PairwiseRequest<'_>,
    events: &mut dyn FnMut(PairwiseProgress),
) -> Result<PairwiseOutcome, PairwiseError> {
    let judge_sha256 = request.spec.content_sha256();
    let key = PairwiseKey {
        run_a: &request.run_a.id,
        run_b: &request.run_b.id,
        judge_sha256: &judge_sha256,
        judge_model: &request.judge_model,
    };
    let (items_a, items_b) = (store.items(&request.run_a.id)?, store.items(&request.run_b.id)?);
    let (pairs, excluded) = answered_by_both(&items_a, &items_b);
    let mut judgments = stored_for(store, &key, &pairs)?;
    // An absolute judge's verdicts stored with both runs are that judge's reading of each
    // answer alone: the judgment is made from them, not judged again.
    if let (Some(verdicts_a), Some(verdicts_b)) = (
        stored_verdicts(request.run_a, &items_a, &request.spec, &request.judge_model),
        stored_verdicts(request.run_b, &items_b, &request.spec, &request.judge_model),
    ) {
        for ((question, a, b), slot) in pairs.iter().zip(judgments.iter_mut()).filter(|(_, slot)| slot.is_none()) {
            if let (Some(va), Some(vb)) = (verdicts_a.get(&question.id), verdicts_b.get(&question.id)) {
                let judgment = graded_judgment(question, a, b, va, vb);
                store.record_pairwise(&key, &answers_sha256(question, a, b), &judgment)?;
                *slot = Some(judgment);
            }
        }
    }
    let reused = judgments.iter().filter(|j| j.is_some()).count();
    events(PairwiseProgress::Started { pairs: pairs.len(), reused });
    let missing = pairs.len() - reused;
    let mut scoring = None;
    if missing > 0 {
        events(PairwiseProgress::LoadingJudge { model: request.judge_model.clone() });
        let mut judge = pairwise_judge(request.spec.clone(), &request.judge_model, request.device)?;
        scoring = Some(judge.scoring());
        let mut done = 0;
        for ((question, a, b), slot) in pairs.iter().zip(judgments.iter_mut()).filter(|(_, slot)| slot.is_none()) {
            if request.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(PairwiseError::Cancelled { judged: done, missing });
            }
            let judgment = judge.judge_pair(question, a, b);
            store.record_pairwise(&key, &answers_sha256(question, a, b), &judgment)?;
            done += 1;
            events(PairwiseProgress::Judged { question_id: question.id.clone(), done, missing, error: judgment.error.clone() });
            *slot = Some(judgment);
        }
    }
    let source = PairwiseSource {
        run_a: request.run_a.id.clone(),
        name_a: request.run_a.name.clone(),
        run_b: request.run_b.id.clone(),
        name_b: request.run_b.name.clone(),
        judge: request.spec.name().to_string(),
        judge_sha256,
        judge_model: request.judge_model.clone(),
        scoring,
        excluded,
        reused,
        judged: missing,
    };
    Ok(pairwise_outcome(source, judgments.into_iter().flatten().collect()))
}

/// Each pair's stored judgment (None where there is none, or its answers have changed since),
/// its preference combined again from the two orders' stored distributions, so a judgment
/// stored before a change to how orders are combined reads as one made now.
fn stored_for(store: &Store, key: &PairwiseKey<'_>, pairs: &[(Question, Answer, Answer)]) -> Result<Vec<Option<PairwiseJudgment>>, StoreError> {
    let stored = store.pairwise_judgments(key)?;
    Ok(pairs
        .iter()
        .map(|(question, a, b)| {
            let entry = stored.get(&question.id)?;
            let expected = if entry.reversed { answers_sha256(question, b, a) } else { answers_sha256(question, a, b) };
            (entry.answers_sha256 == expected).then(|| recombined(entry.judgment.clone()))
        })
        .collect())
}

/// The pairwise comparison of two runs from stored judgments alone (nothing is judged): the
/// judge and judge model used most recently for them, either way round, with the judgments
/// whose answers are unchanged. `judge_model` picks the judgments of that judge model instead
/// (the most recent judge used with it), to set several judge models side by side. None when
/// no judgment is stored for the two runs (by that model). The judge is named by finding its
/// spec among the built-ins and `judges_dir`; one no longer found is named by its hash.
pub fn stored_pairwise(
    store: &Store,
    run_a: &RunRecord,
    run_b: &RunRecord,
    judge_model: Option<&str>,
    judges_dir: Option<&Path>,
) -> Result<Option<PairwiseOutcome>, PairwiseError> {
    let judges = store.pairwise_judges(&run_a.id, &run_b.id)?;
    let Some(latest) = judges.into_iter().find(|j| judge_model.is_none_or(|m| j.judge_model == m)) else { return Ok(None) };
    let key = PairwiseKey { run_a: &run_a.id, run_b: &run_b.id, judge_sha256: &latest.judge_sha256, judge_model: &latest.judge_model };
    let (pairs, excluded) = answered_by_both(&store.items(&run_a.id)?, &store.items(&run_b.id)?);
    let judgments: Vec<PairwiseJudgment> = stored_for(store, &key, &pairs)?.into_iter().flatten().collect();
    if judgments.is_empty() {
        return Ok(None);
    }
    // A judge spec that no longer loads is no reason to hide the judgments made with it.
    let judge = spec::load_all(judges_dir)
        .ok()
        .and_then(|specs| specs.keys().find(|name| judge_sha256_of(&specs, name).as_deref() == Some(latest.judge_sha256.as_str())).cloned())
        .unwrap_or_else(|| format!("judge {}", &latest.judge_sha256[..latest.judge_sha256.len().min(12)]));
    let reused = judgments.len();
    let source = PairwiseSource {
        run_a: run_a.id.clone(),
        name_a: run_a.name.clone(),
        run_b: run_b.id.clone(),
        name_b: run_b.name.clone(),
        judge,
        judge_sha256: latest.judge_sha256,
        judge_model: latest.judge_model,
        scoring: None,
        // Questions both runs answered but not judged with this judge are left out too.
        excluded: excluded + (pairs.len() - reused),
        reused,
        judged: 0,
    };
    Ok(Some(pairwise_outcome(source, judgments)))
}

/// What `compare_pairwise` would show for `order` without judging anything: the two runs found
/// by name and their stored judgments (the judge most recently used for them), or None when
/// none is stored. The app shows this before anyone presses "Judge pairwise".
pub fn stored_pairwise_of(order: &PairwiseOrder) -> Result<Option<PairwiseOutcome>, PairwiseError> {
    let store = Store::open_existing(&order.database)?;
    let (run_a, run_b) = (store.find_run(&order.run_a)?, store.find_run(&order.run_b)?);
    stored_pairwise(&store, &run_a, &run_b, None, order.judges_dir.as_deref())
}

/// The stored pairwise comparisons a report of `reports` shows: each later run against the
/// first (the pairs the report compares), where judgments are stored for them. Nothing is
/// judged; the judges are named from the built-ins.
pub fn stored_pairwise_for_report(database: &Path, reports: &[RunReport]) -> Result<Vec<PairwiseOutcome>, PairwiseError> {
    let Some((first, rest)) = reports.split_first() else { return Ok(Vec::new()) };
    let store = Store::open_existing(database)?;
    let mut found = Vec::new();
    for other in rest {
        if let Some(outcome) = stored_pairwise(&store, &first.run, &other.run, None, None)? {
            found.push(outcome);
        }
    }
    Ok(found)
}

/// The questions both runs answered (question from run A's snapshot, A's answer, B's answer),
/// in A's order, and how many questions of either run are left out (unanswered or failed in
/// one of them).
fn answered_by_both(items_a: &[ItemRecord], items_b: &[ItemRecord]) -> (Vec<(Question, Answer, Answer)>, usize) {
    let mut all_ids: BTreeSet<&str> = items_a.iter().map(|i| i.question.id.as_str()).collect();
    all_ids.extend(items_b.iter().map(|i| i.question.id.as_str()));
    let answered_b: BTreeMap<&str, &Answer> =
        items_b.iter().filter(|i| i.error.is_none()).filter_map(|i| Some((i.question.id.as_str(), i.answer.as_ref()?))).collect();
    let pairs: Vec<(Question, Answer, Answer)> = items_a
        .iter()
        .filter(|i| i.error.is_none())
        .filter_map(|i| {
            let b = answered_b.get(i.question.id.as_str())?;
            Some((i.question.clone(), i.answer.clone()?, (*b).clone()))
        })
        .collect();
    let excluded = all_ids.len() - pairs.len();
    (pairs, excluded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_is_side_by_side_only_when_its_spec_is_pairwise_and_a_jury_is_keyed_by_every_member() {
        let better = pairwise_spec(Some("better"), None).expect("built-in better");
        assert!(matches!(better, PairwiseJudgeSpec::SideBySide(_)));
        let correct = pairwise_spec(None, None).expect("the default");
        let PairwiseJudgeSpec::EachAlone { name, specs } = &correct else { panic!("{correct:?}") };
        assert_eq!((name.as_str(), specs.len()), (DEFAULT_PAIRWISE_JUDGE, 1));
        assert_eq!(correct.content_sha256(), specs[0].content_sha256());
        // A jury reads its members too: its key changes with any of them, not with their order.
        let facts = pairwise_spec(Some("facts"), None).expect("built-in facts");
        let PairwiseJudgeSpec::EachAlone { specs, .. } = &facts else { panic!("{facts:?}") };
        assert!(specs.len() > 1, "{specs:?}");
        let mut reversed = specs.clone();
        reversed.reverse();
        let key = facts.content_sha256();
        assert_eq!(PairwiseJudgeSpec::EachAlone { name: "facts".into(), specs: reversed.clone() }.content_sha256(), key);
        reversed[0].description.push_str(" (edited)");
        assert_ne!(PairwiseJudgeSpec::EachAlone { name: "facts".into(), specs: reversed }.content_sha256(), key);
        let all = spec::load_all(None).expect("built-ins");
        assert_eq!(judge_sha256_of(&all, "facts"), Some(key));
        assert!(matches!(pairwise_spec(Some("no-such-judge"), None), Err(PairwiseError::Judge(_))));
    }
}
