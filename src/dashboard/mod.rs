//! `--dashboard`: one page, served by planrun on loopback, that follows the run second by second (per label
//! requests/s, errors, p50/p95/p99, active users, dropped iterations, thresholds so far) and shows the final
//! summary and the HTML report to save when the run ends. Nothing is fetched from elsewhere.
//!
//! Everything the page is told is an event (server-sent events); a page that connects late gets every
//! event so far, so it draws the whole run. Publishing never waits: an event goes into the history that every
//! page reads at its own pace, and a page that falls behind is closed (see [`events`]).

mod events;
mod server;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::live::{LabelSecond, Second, SecondWatcher};
use crate::plan::model::Threshold;
use crate::report::summary_json::SummaryFile;
use crate::report::thresholds::{evaluate, measured_text};
use crate::sample::Sample;
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

pub use server::DashboardError;

/// The address `--dashboard` listens on when none is given.
pub const DEFAULT_ADDR: &str = "127.0.0.1:5665";

/// Seconds of history kept for pages that connect late (an hour).
const HISTORY: usize = 3600;

/// The dashboard of a run.
pub struct Dashboard {
    hub: Arc<events::Hub>,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
    refused: Arc<AtomicU64>,
}

/// What became of the connections to a dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DashboardCounts {
    /// Pages that asked for the events.
    pub pages: u64,
    /// Pages closed because they fell behind the events.
    pub dropped: u64,
    /// Connections turned away because [`MAX_CONNECTIONS`] were open.
    pub refused: u64,
}

/// Connections open at once; the next one is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = server::MAX_CONNECTIONS;

impl Dashboard {
    /// Listens on `addr` and serves the page on the current runtime.
    pub async fn start(addr: SocketAddr, plan: &str) -> Result<Dashboard, DashboardError> {
        let hub = Arc::new(events::Hub::new(HISTORY));
        hub.publish("plan", &json!({ "name": plan }));
        let refused = Arc::new(AtomicU64::new(0));
        let (addr, server) = server::serve(addr, hub.clone(), refused.clone()).await?;
        Ok(Dashboard { hub, addr, server, refused })
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Gets each closed second from the live figures.
    pub fn watcher(&self) -> Arc<dyn SecondWatcher> {
        self.hub.clone()
    }

    /// Judges `thresholds` once a second on the run so far, and publishes the final summary at its end.
    pub fn observer(&self, thresholds: Vec<Threshold>) -> DashboardObserver {
        DashboardObserver { hub: self.hub.clone(), thresholds, last: None }
    }

    /// The run is over: publishes the HTML report (when there is one) and the end, then stops serving.
    pub async fn finish(self, report_html: Option<String>) -> DashboardCounts {
        self.hub.publish("end", &json!({ "report": report_html }));
        self.hub.close();
        // Pages read what they were sent; the listener goes with the process.
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.server.abort();
        let pages = self.hub.counts();
        DashboardCounts { pages: pages.served, dropped: pages.dropped, refused: self.refused.load(Ordering::Relaxed) }
    }
}

impl SecondWatcher for events::Hub {
    fn second(&self, s: &Arc<Second>) {
        let labels: Vec<Value> = s.labels.iter().filter(|l| l.all.count > 0).map(label_json).collect();
        let event = json!({
            "at_s": s.at_s,
            "total": label_json(&s.total),
            "labels": labels,
            "users": s.users.max,
            "dropped": s.dropped,
            "dropped_total": s.dropped_total,
        });
        self.publish("second", &event);
    }
}

fn label_json(l: &LabelSecond) -> Value {
    json!({
        "label": &*l.label,
        "count": l.all.count,
        "errors": l.ko.count,
        "p50": l.all.pct_ms[0],
        "p95": l.all.pct_ms[2],
        "p99": l.all.pct_ms[3],
        "requests": l.totals.requests,
        "errors_total": l.totals.errors,
    })
}

/// Thresholds so far, and the final summary.
pub struct DashboardObserver {
    hub: Arc<events::Hub>,
    thresholds: Vec<Threshold>,
    last: Option<Instant>,
}

impl DashboardObserver {
    fn publish_thresholds(&self, stats: &Stats) {
        if self.thresholds.is_empty() {
            return;
        }
        let verdicts: Vec<Value> = evaluate(&self.thresholds, &stats.summary())
            .iter()
            .map(|v| {
                json!({
                    "label": v.threshold.label.as_deref().unwrap_or("TOTAL"),
                    "check": v.threshold.text,
                    "measured": measured_text(v),
                    "passed": v.passed,
                })
            })
            .collect();
        self.hub.publish("thresholds", &Value::Array(verdicts));
    }
}

impl Observer for DashboardObserver {
    fn batch(&mut self, _batch: &[Sample], stats: &Stats) {
        if self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            self.last = Some(Instant::now());
            self.publish_thresholds(stats);
        }
    }

    fn sink_failed(&mut self, _error: &SinkError) {}

    fn finish(&mut self, stats: &Stats) {
        self.publish_thresholds(stats);
        let summary: Value = serde_json::from_str(&SummaryFile::new(stats).to_json()).unwrap_or(Value::Null);
        self.hub.publish("summary", &summary);
    }
}
