//! Preparing a plan (read, validated, compiled, its stub started) for validate, dry-run, merge and run: its
//! warnings printed on stderr the same way for each, then the plan, or why it cannot run.

use std::path::Path;

use super::exit;
use super::print::{err, errln};
use crate::diag::Warnings;
use crate::pipeline::{prepare, PrepareError, ReadyPlan, StubMode};
use crate::plan::{PlanError, PlanOptions};

/// The plan ready to run, or the exit code to return (why it cannot run printed).
pub(super) async fn plan(path: &Path, opts: PlanOptions, mode: StubMode) -> Result<ReadyPlan, i32> {
    plan_or_error(path, opts, mode).await.map_err(|e| report_prepare_error(&e))
}

/// The plan ready to run, or why it cannot run; its warnings are printed either way.
pub(super) async fn plan_or_error(path: &Path, opts: PlanOptions, mode: StubMode) -> Result<ReadyPlan, PrepareError> {
    let mut warnings = Warnings::default();
    let ready = prepare(path, opts, mode, &mut warnings).await;
    if !warnings.is_empty() {
        err!("{warnings}");
    }
    ready
}

/// Prints why a plan cannot run and returns the exit code.
pub(super) fn report_prepare_error(e: &PrepareError) -> i32 {
    match e {
        PrepareError::Plan(PlanError::Invalid { rendered, .. }) => {
            err!("{rendered}");
            exit::BAD_INPUT
        }
        PrepareError::Stub(crate::stub::StubError::Bind { .. }) => {
            errln!("error: {e}");
            exit::ABORTED
        }
        _ => {
            errln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}
