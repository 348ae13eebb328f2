//! The models `assay generate` (and any face that generates test sets) works with: the
//! generator, and the support check (`generate::SUPPORT_JUDGE`) on the judge model, loaded once
//! when both are the same model. Loaded here so a face never builds a judge panel itself.

use super::execute::RunError;
use super::request::DEFAULT_JUDGE_MODEL;
use crate::generate::SUPPORT_JUDGE;
use crate::judge::spec::select;
use crate::judge::choice::JudgePanel;
use crate::llm::device::DeviceChoice;
use crate::llm::model::LanguageModel;
use crate::models::registry::Registry;
use crate::targets::DEFAULT_GENERATOR;
use std::path::Path;
use std::sync::Arc;

/// The generator (`model`, else the rag target's default generator) and the support check on
/// `judge_model` (else the judge default: models under 1B cannot tell supported from
/// unsupported, DESIGN.md), with the judges of `judges_dir` (a `faithfulness` there replaces
/// the built-in check).
pub fn pair_generator(
    model: Option<&str>,
    judge_model: Option<&str>,
    judges_dir: Option<&Path>,
    device: DeviceChoice,
) -> Result<(Arc<LanguageModel>, JudgePanel), RunError> {
    let failed = |e: &dyn std::fmt::Display| RunError::Experiment(e.to_string());
    let registry = Registry::load().map_err(|e| failed(&e))?;
    let model_id = model.unwrap_or(DEFAULT_GENERATOR);
    let generator = LanguageModel::by_id(&registry, model_id, device).map_err(|e| failed(&e))?;
    let judge_id = judge_model.unwrap_or(DEFAULT_JUDGE_MODEL);
    let checker_model = if judge_id == model_id {
        Arc::clone(&generator)
    } else {
        LanguageModel::by_id(&registry, judge_id, device).map_err(|e| failed(&e))?
    };
    let specs = super::judge_catalog(judges_dir).map_err(|e| RunError::Judge(e.to_string()))?;
    let chosen = select(&specs, &[SUPPORT_JUDGE.to_string()]).map_err(|e| RunError::Judge(e.to_string()))?;
    let checker = JudgePanel::new(chosen, checker_model).map_err(|e| RunError::Judge(e.to_string()))?;
    Ok((generator, checker))
}
