//! Finding the test model: SmolLM2-135M through the registry (`$ASSAY_MODELS` or the default
//! models dir). Tests that need it skip, loudly, only when it is not installed; install it with
//! `assay models pull smollm2-135m-instruct` (CI does so first).

use std::sync::Arc;

use assay::llm::device::DeviceChoice;
use assay::llm::error::LlmError;
use assay::llm::model::LanguageModel;
use assay::models::error::ModelsError;
use assay::models::registry::Registry;

pub const TEST_MODEL: &str = "smollm2-135m-instruct";

pub fn smollm2() -> Option<Arc<LanguageModel>> {
    installed(TEST_MODEL)
}

/// Model `id` from the registry on the CPU; None (with a loud note) when it is not installed.
pub fn installed(id: &str) -> Option<Arc<LanguageModel>> {
    let registry = Registry::load().expect("the built-in registry loads");
    match LanguageModel::by_id(&registry, id, DeviceChoice::Cpu) {
        Ok(model) => Some(model),
        Err(LlmError::Models(ModelsError::NotInstalled { .. })) => {
            eprintln!(
                "\n*** SKIPPED: model {id} is not installed in {}.\n*** Run `assay models pull {id}` (or set ASSAY_MODELS) to run this test.\n",
                registry.models_dir.display()
            );
            None
        }
        Err(e) => panic!("loading {id}: {e}"),
    }
}
