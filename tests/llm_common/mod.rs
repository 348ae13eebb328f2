//! Finding the test model: SmolLM2-135M through the registry (`$ASSAY_MODELS` or the default
//! models dir). Tests that need it skip, loudly, only when it is not installed; install it with
//! `assay models pull smollm2-135m-instruct` (CI does so first).

use std::sync::Arc;

use assay::llm::{DeviceChoice, LanguageModel, LlmError, Registry};

pub const TEST_MODEL: &str = "smollm2-135m-instruct";

pub fn smollm2() -> Option<Arc<LanguageModel>> {
    let registry = Registry::load().expect("the built-in registry loads");
    match LanguageModel::by_id(&registry, TEST_MODEL, DeviceChoice::Cpu) {
        Ok(model) => Some(model),
        Err(LlmError::NotInstalled { .. }) => {
            eprintln!(
                "\n*** SKIPPED: model {TEST_MODEL} is not installed in {}.\n*** Run `assay models pull {TEST_MODEL}` (or set ASSAY_MODELS) to run this test.\n",
                registry.models_dir.display()
            );
            None
        }
        Err(e) => panic!("loading {TEST_MODEL}: {e}"),
    }
}
