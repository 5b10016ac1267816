//! `--out KIND=URL` and `--out-raw`: the live outputs of a run, started before it and reported after it.

use std::sync::Arc;

use clap::Args;

use super::print::errln;
use crate::compile::Graph;
use crate::live::{Delivery, Live, OutputKind, OutputSpec, RunTags, SecondWatcher, CLOSE_GRACE};
use crate::run::Active;
use crate::segment::Segment;

/// Live outputs asked for on the command line.
#[derive(Debug, Args)]
pub(crate) struct LiveArgs {
    /// Stream the run's figures each second to a database while it runs (repeatable):
    /// influxdb=http://HOST:8086/DATABASE or prometheus=http://HOST:9090/api/v1/write (see docs/outputs.md).
    #[arg(long = "out", value_name = "KIND=URL", value_parser = parse_out)]
    pub out: Vec<OutputSpec>,
    /// Also write one point per sample to every InfluxDB output (JMeter's raw mode).
    #[arg(long)]
    pub out_raw: bool,
}

fn parse_out(text: &str) -> Result<OutputSpec, String> {
    OutputSpec::parse(text).map_err(|e| e.0)
}

/// The plan's outputs and the command line's; `--out-raw` turns raw points on for every InfluxDB one.
pub(super) fn specs(args: &LiveArgs, graph: &Graph) -> Vec<OutputSpec> {
    let mut all: Vec<OutputSpec> = graph.outputs.iter().chain(&args.out).cloned().collect();
    for s in all.iter_mut().filter(|s| s.kind == OutputKind::Influxdb) {
        s.raw |= args.out_raw;
    }
    all
}

/// Starts the outputs; an unreachable database is a warning. `Err` when one cannot be started at all.
pub(super) async fn start(
    specs: &[OutputSpec],
    graph: &Graph,
    segment: Option<Segment>,
    active: Arc<Active>,
    quiet: bool,
    watchers: Vec<Arc<dyn SecondWatcher>>,
) -> Result<Option<Live>, String> {
    if specs.is_empty() && watchers.is_empty() {
        return Ok(None);
    }
    let extra = segment.map(|s| vec![("segment".to_string(), s.to_string())]).unwrap_or_default();
    let tags = RunTags { application: graph.name.clone(), extra };
    let (live, warnings) = Live::start(specs, &tags, active, watchers).await.map_err(|e| e.0)?;
    for w in warnings {
        errln!("planrun: warning: {w}");
    }
    if !quiet {
        for s in specs {
            let raw = if s.raw { " (and one point per sample)" } else { "" };
            errln!("planrun: live output -> {}{raw}", s.endpoint().map(|e| e.name).unwrap_or_default());
        }
    }
    Ok(Some(live))
}

/// Lets the outputs finish and says what each delivered.
pub(super) async fn finish(live: Live) {
    let deliveries = tokio::task::spawn_blocking(move || live.finish(CLOSE_GRACE)).await.unwrap_or_default();
    for d in &deliveries {
        errln!("planrun: {}", line(d));
    }
}

/// One output's delivery, in a line.
fn line(d: &Delivery) -> String {
    let mut text = format!(
        "{}: {} points delivered in {} requests, covering {} of {} samples",
        d.name, d.delivered, d.requests, d.samples, d.samples_offered
    );
    if d.retries > 0 {
        text.push_str(&format!("; {} requests sent again", d.retries));
    }
    if d.dropped > 0 {
        text.push_str(&format!("; {} points dropped (its queue was full)", d.dropped));
    }
    if d.failed > 0 {
        text.push_str(&format!("; {} points lost", d.failed));
    }
    if d.unfinished {
        text.push_str(&format!("; still sending after {} s, the rest is lost", CLOSE_GRACE.as_secs()));
    }
    if let Some(e) = d.last_error.as_ref().filter(|_| d.failed > 0 || d.retries > 0) {
        text.push_str(&format!(" (last error: {e})"));
    }
    text
}
