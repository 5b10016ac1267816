//! `planrun run PLAN` (and `planrun PLAN`): run the load, stream results, print the summary.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use super::args::RunArgs;
use super::guard::{Aborted, Guard};
use super::progress::Progress;
use super::{exit, signals};
use crate::pipeline::{load, LoadError, StubMode};
use crate::plan::{LoadOptions, PlanError};
use crate::report::summary::render_table;
use crate::report::thresholds::{evaluate, render as render_thresholds};
use crate::sink::jsonl::JsonlSink;
use crate::sink::jtl::JtlSink;
use crate::sink::{Sink, SinkSet};

pub(super) async fn run(a: RunArgs) -> i32 {
    let opts = LoadOptions { overrides: a.plan.define, seed: a.plan.seed, stub_url: None };
    let loaded = match load(&a.plan.plan, opts, StubMode::Start).await {
        Ok(l) => l,
        Err(e) => return report_load_error(&e),
    };
    let graph = loaded.graph.clone();
    let jtl_path = a.output.unwrap_or_else(|| default_results_path(&graph.name));
    let mut outputs: Vec<Box<dyn Sink>> = Vec::new();
    match JtlSink::create(&jtl_path) {
        Ok(s) => outputs.push(Box::new(s)),
        Err(e) => {
            eprintln!("error: {e}");
            return exit::ABORTED;
        }
    }
    if let Some(json) = &a.json {
        match JsonlSink::create(json) {
            Ok(s) => outputs.push(Box::new(s)),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::ABORTED;
            }
        }
    }
    let peak: u64 = graph.groups.iter().map(|g| u64::from(g.threads)).sum();
    // The in-process stub holds the other end of every connection.
    let sockets = if loaded.stub.is_some() { peak * 2 } else { peak };
    if let Err(e) = crate::limits::ensure_open_files(sockets) {
        eprintln!("error: {e}");
        return exit::ABORTED;
    }
    if !a.quiet {
        let threads = peak;
        eprintln!("planrun: plan `{}`: {} group(s), {threads} thread(s)", graph.name, graph.groups.len());
        if graph.seed_drawn {
            eprintln!("planrun: seed {} (replay with --seed {})", graph.seed, graph.seed);
        }
        if let Some(stub) = &loaded.stub {
            eprintln!("planrun: stub listening on {}", stub.url());
        }
        eprintln!("planrun: results -> {}", jtl_path.display());
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let stopped = signals::install(stop_tx.clone());
    let aborted = Aborted::default();
    let mut sinks = SinkSet::new(outputs);
    sinks.observers.push(Box::new(Guard::new(&graph.thresholds, stop_tx.clone(), aborted.clone())));
    if !a.quiet {
        sinks.observers.push(Box::new(Progress::new(&graph)));
    }
    let result = match crate::run::execute(Arc::clone(&graph), sinks, stop_rx).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::ABORTED;
        }
    };
    if let Some(stub) = loaded.stub {
        stub.shutdown().await;
    }
    let summary = result.sinks.stats.summary();
    println!("{}", render_table(&summary));
    eprintln!(
        "planrun: {} samples in {:.1}s; results in {}",
        summary.total.samples,
        result.wall.as_secs_f64(),
        jtl_path.display()
    );
    if graph.seed_drawn {
        eprintln!("planrun: seed {}", graph.seed);
    }
    if result.waited > 0 {
        println!(
            "Results writer fell behind: {} samples waited for it (users were slowed down; no sample was dropped)",
            result.waited
        );
    }
    let internal = summary.internal_errors();
    if internal > 0 {
        println!(
            "Internal errors: {internal} (planrun failed inside these samples: a bug, please report it with their \
             responseMessage; the run went on)"
        );
    }
    if let Some(why) = &result.data_stop {
        eprintln!("planrun: the run stopped early: {why}");
    }
    for (g, dropped) in graph.groups.iter().zip(&result.dropped).filter(|(_, d)| **d > 0) {
        println!(
            "Dropped iterations: {dropped} in group `{}` (every one of its {} threads was busy; raise max_threads)",
            g.name, g.threads
        );
    }
    let verdicts = evaluate(&graph.thresholds, &summary);
    if !verdicts.is_empty() {
        println!("{}", render_thresholds(&verdicts, &a.plan.plan.display().to_string()));
    }
    let (summary_json, report) = (a.summary_json.as_deref(), a.report.as_deref());
    if let Err(e) = super::report::after_run(&result.sinks.stats, &jtl_path, summary_json, report) {
        eprintln!("error: {e}");
        return exit::ABORTED;
    }
    if let Some(e) = result.sink_error {
        eprintln!("error: {e}");
        return exit::ABORTED;
    }
    if let Some(code) = stopped.code().filter(|_| result.interrupted) {
        return code;
    }
    if let Some(code) = aborted.code() {
        return code;
    }
    if internal > 0 {
        return exit::INTERNAL_ERROR;
    }
    if verdicts.iter().any(|v| !v.passed) {
        return exit::THRESHOLD_FAILED;
    }
    exit::OK
}

/// Prints why a plan cannot run and returns the exit code.
pub(super) fn report_load_error(e: &LoadError) -> i32 {
    match e {
        LoadError::Plan(PlanError::Invalid { rendered, .. }) => {
            eprint!("{rendered}");
            exit::BAD_INPUT
        }
        LoadError::Stub(crate::stub::StubError::Bind { .. }) => {
            eprintln!("error: {e}");
            exit::ABORTED
        }
        _ => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

fn default_results_path(name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    PathBuf::from("results").join(format!("{safe}-{stamp}.jtl"))
}
