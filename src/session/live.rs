//! The live outputs of a run (the plan's `outputs` and those the caller adds), started before it and
//! finished after it.

use std::sync::Arc;

use crate::compile::Graph;
use crate::live::{Delivery, Live, OutputKind, OutputSpec, RunTags, SecondWatcher, CLOSE_GRACE};
use crate::run::Active;
use crate::segment::Segment;

/// The plan's outputs and the caller's; `raw` turns raw points on for every InfluxDB one.
pub(super) fn specs(extra: &[OutputSpec], raw: bool, graph: &Graph) -> Vec<OutputSpec> {
    let mut all: Vec<OutputSpec> = graph.outputs.iter().chain(extra).cloned().collect();
    for s in all.iter_mut().filter(|s| s.kind == OutputKind::Influxdb) {
        s.raw |= raw;
    }
    all
}

/// Starts the outputs, with the warnings of each database that could not be reached (the run goes on).
/// `Err` when one cannot be started at all.
pub(super) async fn start(
    specs: &[OutputSpec],
    graph: &Graph,
    segment: Option<Segment>,
    active: Arc<Active>,
    watchers: Vec<Arc<dyn SecondWatcher>>,
) -> Result<Option<(Live, Vec<String>)>, String> {
    if specs.is_empty() && watchers.is_empty() {
        return Ok(None);
    }
    let extra = segment.map(|s| vec![("segment".to_string(), s.to_string())]).unwrap_or_default();
    let tags = RunTags { application: graph.name.clone(), extra };
    Live::start(specs, &tags, active, watchers).await.map(Some).map_err(|e| e.0)
}

/// Lets the outputs finish; what each delivered.
pub(super) async fn finish(live: Live) -> Vec<Delivery> {
    tokio::task::spawn_blocking(move || live.finish(CLOSE_GRACE)).await.unwrap_or_default()
}
