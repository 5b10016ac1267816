//! A plan run through the library, in this process, as an embedding program runs it: `planrun::session::run`
//! with its outputs, its events heard and an observer of its own, against a real server.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{read_jtl, Server, TempDir};
use planrun::sample::Sample;
use planrun::session::{self, Event, Listener, RunError, RunSpec, Start, Stop};
use planrun::sink::stats::Stats;
use planrun::sink::{Observer, SinkError};

const PLAN: &str = r#"
name: embedded
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: users
    threads: 2
    loops: 5
    steps:
      - name: get-ok
        request: { url: /ok }
      - name: post-accepted
        request: { method: POST, url: /accepted, body: "hi" }
thresholds:
  total: ["p95 < 30s"]
"#;

/// Hears the run's events by name and counts the samples its observer sees.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<&'static str>>,
    observed: Arc<AtomicU64>,
}

impl Listener for Recorder {
    fn event(&self, event: Event<'_>) {
        let name = match event {
            Event::Starting(_) => "starting",
            Event::Ran(_) => "ran",
            _ => "other",
        };
        self.events.lock().unwrap().push(name);
    }

    fn observers(&self, _start: &Start<'_>) -> Vec<Box<dyn Observer>> {
        vec![Box::new(Counter(self.observed.clone()))]
    }
}

struct Counter(Arc<AtomicU64>);

impl Observer for Counter {
    fn batch(&mut self, batch: &[Sample], _stats: &Stats) {
        self.0.fetch_add(batch.len() as u64, Ordering::Relaxed);
    }

    fn sink_failed(&mut self, _error: &SinkError) {}
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime")
}

#[test]
fn the_library_runs_a_plan_with_its_outputs_in_process() {
    let server = Server::start();
    let dir = TempDir::new("run_api");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let jtl = dir.join("out.jtl");
    let summary = dir.join("summary.json");
    let mut spec = RunSpec::new(&plan);
    spec.results = Some(jtl.clone());
    spec.summary_json = Some(summary.clone());
    spec.placement.cores = Some(1);
    let recorder = Arc::new(Recorder::default());

    let report = runtime()
        .block_on(session::run(spec, Stop::new(), recorder.clone()))
        .unwrap_or_else(|e| panic!("the run did not go through: {e}"));

    let rows = read_jtl(&jtl).rows;
    assert_eq!(server.count(), 20, "requests received");
    assert_eq!(rows.len(), server.count(), "JTL rows = requests received");
    assert_eq!(report.results, jtl);
    assert_eq!(report.result.outputs[0].written, 20, "rows the report says the JTL got");
    assert_eq!(report.result.stats.summary().total.samples, 20);
    assert_eq!(recorder.observed.load(Ordering::Relaxed), 20, "samples the caller's observer saw");
    assert_eq!(report.verdicts.len(), 1);
    assert!(!report.threshold_failed() && !report.results_lost() && !report.internal_errors());
    assert!(report.written.errors.is_empty(), "{:?}", report.written.errors);
    let json = std::fs::read_to_string(&summary).expect("the summary JSON");
    assert!(json.contains("\"samples\": 20") || json.contains("\"samples\":20"), "{json}");
    let events = recorder.events.lock().unwrap().clone();
    assert_eq!(events.iter().filter(|e| **e != "other").collect::<Vec<_>>(), [&"starting", &"ran"]);
}

#[test]
fn an_output_refused_is_an_error_and_nothing_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("run_api_refused");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let mut spec = RunSpec::new(&plan);
    // The plan as its own results: writing it would destroy what is read.
    spec.results = Some(plan.clone());
    spec.placement.cores = Some(1);

    let outcome = runtime().block_on(session::run(spec, Stop::new(), Arc::new(session::Silent)));

    assert!(matches!(outcome, Err(RunError::Output(_))), "{:?}", outcome.err());
    assert_eq!(server.count(), 0, "requests received");
    assert!(std::fs::read_to_string(&plan).expect("the plan").contains("name: embedded"), "the plan is intact");
}
