//! The judges a run may name, as both faces list and show them: the built-ins plus the user's
//! judges folder (`--judges-dir`, `$ASSAY_JUDGES_DIR`, else the default folder).

use crate::judge::spec::{default_judges_dir, load_all, select};
use crate::judge::spec::{JudgeSpec, SpecError};
use std::collections::BTreeMap;
use std::path::Path;

/// Every judge by name; a user spec replaces the built-in of the same name.
pub fn judge_catalog(dir: Option<&Path>) -> Result<BTreeMap<String, JudgeSpec>, SpecError> {
    let default_dir = default_judges_dir();
    load_all(dir.or(default_dir.as_deref()))
}

/// One judge by name; an unknown name is an error listing the known ones. A jury is checked
/// as a run would check it (its members exist) and is itself what is returned: `select` puts
/// its members first.
pub fn judge_spec(name: &str, dir: Option<&Path>) -> Result<JudgeSpec, SpecError> {
    let specs = judge_catalog(dir)?;
    let selected = select(&specs, &[name.to_string()])?;
    selected.into_iter().find(|s| s.name == name).ok_or_else(|| SpecError::Unknown {
        name: name.to_string(),
        known: specs.keys().cloned().collect::<Vec<_>>().join(", "),
    })
}
