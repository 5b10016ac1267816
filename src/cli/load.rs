//! Loading a plan for validate, dry-run and run: its warnings printed on stderr the same way for each, then
//! the plan, or the exit code of why it cannot run (its problems printed).

use std::path::Path;

use super::exit;
use super::print::{err, errln};
use crate::diag::Warnings;
use crate::pipeline::{load, LoadError, Loaded, StubMode};
use crate::plan::{LoadOptions, PlanError};

/// The loaded plan, or the exit code to return (why it cannot run printed).
pub(super) async fn plan(path: &Path, opts: LoadOptions, mode: StubMode) -> Result<Loaded, i32> {
    plan_or_error(path, opts, mode).await.map_err(|e| report_load_error(&e))
}

/// The loaded plan, or why it cannot run; its warnings are printed either way.
pub(super) async fn plan_or_error(path: &Path, opts: LoadOptions, mode: StubMode) -> Result<Loaded, LoadError> {
    let mut warnings = Warnings::default();
    let loaded = load(path, opts, mode, &mut warnings).await;
    if !warnings.is_empty() {
        err!("{warnings}");
    }
    loaded
}

/// Prints why a plan cannot run and returns the exit code.
pub(super) fn report_load_error(e: &LoadError) -> i32 {
    match e {
        LoadError::Plan(PlanError::Invalid { rendered, .. }) => {
            err!("{rendered}");
            exit::BAD_INPUT
        }
        LoadError::Stub(crate::stub::StubError::Bind { .. }) => {
            errln!("error: {e}");
            exit::ABORTED
        }
        _ => {
            errln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}
