//! One sample as the raw InfluxDB output writes it: the few columns it needs, copied off the batch.

use std::sync::Arc;

use crate::sample::Sample;

/// What `--out-raw` writes of a sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSample {
    /// Start, ms since the epoch.
    pub start_ms: u64,
    /// JTL elapsed, µs.
    pub elapsed_us: u64,
    /// JTL Latency, µs.
    pub latency_us: u64,
    /// JTL Connect, µs.
    pub connect_us: u64,
    /// Passed.
    pub success: bool,
    pub label: Arc<str>,
    /// The thread group's name.
    pub group: Arc<str>,
    /// The group's number, from 1.
    pub group_no: u32,
    /// The virtual user, from 1.
    pub vu: u32,
}

impl RawSample {
    /// The sample's raw columns.
    pub fn of(s: &Sample) -> Self {
        RawSample {
            start_ms: s.start_ms,
            elapsed_us: s.elapsed_us,
            latency_us: s.latency_us,
            connect_us: s.connect_us,
            success: s.success,
            label: s.label.clone(),
            group: s.thread.group.clone(),
            group_no: s.thread.group_no,
            vu: s.thread.vu,
        }
    }

    /// JTL threadName: `senders 1-17`.
    pub fn thread_name(&self) -> String {
        format!("{} {}-{}", self.group, self.group_no, self.vu)
    }
}
