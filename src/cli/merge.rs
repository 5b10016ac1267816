//! `planrun merge RESULTS... -o FILE`: the merge ([`crate::merge`]), then the summary of the merged rows as a
//! run prints it, and with `--plan` the plan's thresholds judged on them, with a run's exit codes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::args::MergeArgs;
use super::print::{errln, outln};
use super::report::print_written;
use super::{exit, signals};
use crate::compile::Graph;
use crate::merge::labels::plan_labels;
use crate::merge::{merge as merge_files, MergeError, MergeOptions, Merged};
use crate::pipeline::StubMode;
use crate::plan::PlanOptions;
use crate::report::summary::render_table;
use crate::report::summary_json::SummaryFile;
use crate::report::thresholds::{evaluate, render as render_thresholds};
use crate::session::SummaryFiles;

pub(super) async fn merge(a: MergeArgs) -> i32 {
    let plan = match &a.plan {
        None => None,
        Some(path) => {
            let opts = PlanOptions { overrides: a.define.clone(), seed: None, stub_url: None, proxy: None };
            match super::prepare::plan(path, opts, StubMode::CheckOnly).await {
                Ok(ready) => Some(ready.graph),
                Err(code) => return code,
            }
        }
    };
    // Every output is claimed, then opened, before the merge, which can take a while.
    super::outputs::note_inputs(a.inputs.iter().map(PathBuf::as_path));
    let opened = SummaryFiles::claim_and_open(
        &[a.output.as_path()],
        a.summary.summary_json.as_deref(),
        a.summary.summary_csv.as_deref(),
        a.report.dir.as_deref(),
    );
    let outputs = match opened {
        Ok((_, outputs)) => outputs,
        Err(e) => {
            errln!("error: {e}");
            return super::outputs::sink_exit_code(&e);
        }
    };
    let plan_name = a.plan.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let cancel = Arc::new(AtomicBool::new(false));
    let options = MergeOptions {
        window_bytes: usize::try_from(a.window_mib << 20).unwrap_or(usize::MAX),
        plan_labels: plan.as_ref().map(|g| (plan_labels(g), plan_name.clone())),
        cancel: cancel.clone(),
    };
    let (inputs, output) = (a.inputs.clone(), a.output.clone());
    let mut task =
        tokio::task::spawn_blocking(move || merge_files(&inputs, &output, &options, &mut |w| errln!("warning: {w}")));
    let signal = signals::first();
    let mut stopped_by = None;
    let joined = tokio::select! {
        r = &mut task => r,
        code = signal => {
            cancel.store(true, Ordering::Relaxed);
            stopped_by = Some(code);
            task.await
        }
    };
    let merged = match joined {
        Ok(Ok(merged)) => merged,
        Ok(Err(e)) => {
            errln!("error: {e}");
            return match e {
                MergeError::Interrupted { .. } => stopped_by.unwrap_or(exit::INTERRUPTED),
                MergeError::Output { source, .. } => super::outputs::exit_code(&source),
                MergeError::Internal { .. } => exit::ABORTED,
                _ => exit::BAD_INPUT,
            };
        }
        Err(e) => {
            errln!("error: planrun failed while merging (a bug, please report it): {e}");
            return exit::ABORTED;
        }
    };
    conclude(&a, &merged, plan.as_deref(), &plan_name, outputs)
}

/// Prints the summary (and the thresholds), writes the summary JSON and the report; the exit code.
fn conclude(a: &MergeArgs, merged: &Merged, plan: Option<&Graph>, plan_name: &str, outputs: SummaryFiles) -> i32 {
    let stats = &merged.analysis.stats;
    let summary = stats.summary();
    outln!("{}", render_table(&summary));
    let files = merged.inputs.iter().filter(|i| i.merged).count();
    errln!("planrun: {} samples from {files} file(s) merged into {}", merged.rows, a.output.display());
    let internal = summary.internal_errors();
    if internal > 0 {
        outln!(
            "Internal errors: {internal} (planrun failed inside these samples: a bug, please report it with their \
             responseMessage; the run went on)"
        );
    }
    let verdicts = plan.map(|g| evaluate(&g.thresholds, &summary)).unwrap_or_default();
    if !verdicts.is_empty() {
        outln!("{}", render_thresholds(&verdicts, plan_name));
    }
    // From the merged rows' statistics: those `planrun report` reads from the merged file.
    let report = outputs.wants_report().then(|| Ok(merged.analysis.data()));
    if print_written(&outputs.write(&SummaryFile::new(stats), report)) {
        exit::ABORTED
    } else if internal > 0 {
        exit::INTERNAL_ERROR
    } else if verdicts.iter().any(|v| !v.passed) {
        exit::THRESHOLD_FAILED
    } else {
        exit::OK
    }
}
