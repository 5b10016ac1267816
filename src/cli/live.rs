//! `--out KIND=URL` and `--out-raw`: the live outputs of a run, asked for here and reported after it.

use clap::Args;

use crate::live::{Delivery, OutputSpec, CLOSE_GRACE};

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

/// One output's delivery, in a line.
pub(super) fn line(d: &Delivery) -> String {
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
