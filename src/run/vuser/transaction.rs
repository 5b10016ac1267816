//! Transactions: parent samples that sum their children, like JMeter's Transaction Controller.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::run::Active;
use crate::sample::{DataType, Outcome, Sample, ThreadId};

/// A transaction being timed.
#[derive(Debug)]
struct Open {
    name: Arc<str>,
    started: Instant,
    children: u32,
    failed: u32,
    bytes: u64,
    sent: u64,
    latency_us: u64,
    connect_us: u64,
    idle: Duration,
}

/// The transactions a user is inside, innermost last.
#[derive(Debug, Default)]
pub struct Transactions(Vec<Open>);

impl Transactions {
    /// Starts timing a transaction.
    pub fn open(&mut self, name: Arc<str>) {
        self.0.push(Open {
            name,
            started: Instant::now(),
            children: 0,
            failed: 0,
            bytes: 0,
            sent: 0,
            latency_us: 0,
            connect_us: 0,
            idle: Duration::ZERO,
        });
    }

    /// Counts a request sample in every open transaction.
    pub fn add(&mut self, s: &Sample) {
        for t in &mut self.0 {
            t.children += 1;
            t.failed += u32::from(!s.success);
            t.bytes += s.bytes;
            t.sent += s.sent_bytes;
            t.latency_us += s.latency_us;
            t.connect_us += s.connect_us;
        }
    }

    /// Counts a pause as idle time of every open transaction.
    pub fn idle(&mut self, d: Duration) {
        for t in &mut self.0 {
            t.idle += d;
        }
    }

    /// Ends the innermost transaction and makes its sample (none when it ran no request).
    pub fn close(&mut self, thread: ThreadId, active: &Active, group: usize) -> Option<Sample> {
        let t = self.0.pop()?;
        if t.children == 0 {
            return None;
        }
        let elapsed = t.started.elapsed().saturating_sub(t.idle);
        Some(Sample {
            start_ms: crate::clock::epoch_ms(t.started),
            elapsed_us: elapsed.as_micros() as u64,
            latency_us: t.latency_us,
            connect_us: t.connect_us,
            idle_us: t.idle.as_micros() as u64,
            label: t.name,
            outcome: Outcome::Transaction { children: t.children, failed: t.failed },
            thread,
            data_type: DataType::None,
            success: t.failed == 0,
            failure: None,
            bytes: t.bytes,
            sent_bytes: t.sent,
            grp_threads: active.groups[group].load(Ordering::Relaxed),
            all_threads: active.all.load(Ordering::Relaxed),
            url: None,
            protocol: None,
            detail: None,
        })
    }
}
