//! Loading a plan for validate, dry-run and run: its warnings printed on stderr the same way for each, then
//! the plan, or the exit code of why it cannot run (its problems printed).

use std::path::Path;

use super::print::err;
use crate::diag::Warnings;
use crate::pipeline::{load, Loaded, StubMode};
use crate::plan::LoadOptions;

/// The loaded plan, or the exit code to return.
pub(super) async fn plan(path: &Path, opts: LoadOptions, mode: StubMode) -> Result<Loaded, i32> {
    let mut warnings = Warnings::default();
    let loaded = load(path, opts, mode, &mut warnings).await;
    if !warnings.is_empty() {
        err!("{warnings}");
    }
    loaded.map_err(|e| super::run::report_load_error(&e))
}
