//! Rows per second of the result path alone: samples through the drain loop into statistics and a JTL
//! file, with no HTTP. `cargo bench --bench sink_rate [-- ROWS]` (default 2,000,000 rows).
//!
//! The generator makes at most tens of thousands of samples per second per core; the sink must be far
//! faster so it is never what limits a run.

use std::sync::Arc;
use std::time::Instant;

use planrun::sample::{DataType, Outcome, Sample, ThreadId};
use planrun::sink::jtl::JtlSink;
use planrun::sink::{drain, Sink, SinkSet};

fn sample(i: u64, group: &Arc<str>, label: &Arc<str>) -> Sample {
    Sample {
        start_ms: 1_764_547_200_000 + i / 10,
        elapsed_us: 1_000 + (i * 7919) % 50_000,
        latency_us: 900,
        connect_us: if i.is_multiple_of(100) { 150 } else { 0 },
        idle_us: 0,
        label: label.clone(),
        outcome: Outcome::Response { status: 202, reason: "Accepted".into() },
        thread: ThreadId { group: group.clone(), group_no: 1, vu: (i % 200) as u32 + 1 },
        data_type: DataType::Text,
        success: !i.is_multiple_of(97),
        failure: None,
        bytes: 213,
        sent_bytes: 187,
        grp_threads: 200,
        all_threads: 200,
        url: Some(format!("http://127.0.0.1:13013/cgi-bin/sendsms?username=tester&to=2547{i:08}&text=hello").into()),
        protocol: Some(http::Version::HTTP_11),
        detail: None,
    }
}

fn main() {
    let rows: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2_000_000);
    let path = std::env::temp_dir().join(format!("planrun-sink-rate-{}.jtl", std::process::id()));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (group, label): (Arc<str>, Arc<str>) = (Arc::from("senders"), Arc::from("sendsms"));
    let samples: Vec<Sample> = (0..rows).map(|i| sample(i, &group, &label)).collect();
    let started = Instant::now();
    let cpu_before = cpu_seconds();
    runtime.block_on(async {
        let jtl: Box<dyn Sink> = Box::new(JtlSink::create(&path).expect("create the JTL"));
        let (tx, rx) = tokio::sync::mpsc::channel(16 * 1024);
        let (_hurry, never) = tokio::sync::watch::channel(false);
        let sink = tokio::spawn(drain(rx, SinkSet::new(vec![jtl]), never));
        for s in samples {
            tx.send(s).await.expect("the sink is running");
        }
        drop(tx);
        let drained = sink.await.expect("the sink finished");
        assert!(drained.outputs.iter().all(|o| o.error.is_none() && o.unwritten() == 0), "rows written");
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&path);
    println!(
        "sink: {rows} rows in {wall:.2} s wall, {cpu:.2} s CPU: {:.0} rows/s, {:.2} µs CPU per row, {:.1} MB written",
        rows as f64 / wall,
        cpu * 1e6 / rows as f64,
        size as f64 / 1e6
    );
}

/// User + system CPU seconds of this process so far, from /proc (0 where there is none).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
    ticks / 100.0
}
