//! Prometheus remote write 1.0: each closed second as samples of counters and gauges (docs/outputs.md),
//! encoded as the protobuf `WriteRequest` and compressed with snappy's block format.
//!
//! The four messages involved have five scalar fields between them, so they are encoded here by hand
//! rather than generated: `WriteRequest { repeated TimeSeries timeseries = 1; }`,
//! `TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }`,
//! `Label { string name = 1; string value = 2; }`, `Sample { double value = 1; int64 timestamp = 2; }`.
//! A `WriteRequest` is nothing but its `timeseries` entries one after the other, so batches of seconds are
//! made by appending entries.

use super::aggregate::{LabelSecond, Second, PERCENTILES};

/// Labels every series of a run carries (`application`, perhaps `segment`), sorted by name with the others.
#[derive(Debug, Clone, Default)]
pub struct Common(Vec<(String, String)>);

impl Common {
    /// `application` and the extra labels.
    pub fn new(application: &str, extra: &[(String, String)]) -> Self {
        let mut labels = vec![("application".to_string(), application.to_string())];
        labels.extend(extra.iter().cloned());
        Common(labels)
    }
}

/// Appends the series of a closed second to `out` (a `WriteRequest` under way); returns how many samples.
pub fn second(out: &mut Vec<u8>, common: &Common, s: &Second) -> u64 {
    let ts = i64::try_from(s.at_s.saturating_mul(1000)).unwrap_or(i64::MAX);
    let mut w = Writer { out, common, ts, scratch: Vec::new(), samples: 0 };
    for l in s.labels.iter().chain(std::iter::once(&s.total)) {
        w.label(l);
    }
    w.series("planrun_active_users", &[], s.users.mean);
    w.series("planrun_dropped_iterations_total", &[], s.dropped_total as f64);
    w.samples
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    common: &'a Common,
    ts: i64,
    scratch: Vec<u8>,
    samples: u64,
}

impl Writer<'_> {
    fn label(&mut self, l: &LabelSecond) {
        let t = [("transaction", &*l.label)];
        self.series("planrun_requests_total", &t, l.totals.requests as f64);
        self.series("planrun_errors_total", &t, l.totals.errors as f64);
        self.series("planrun_received_bytes_total", &t, l.totals.received as f64);
        self.series("planrun_sent_bytes_total", &t, l.totals.sent as f64);
        let f = &l.all;
        if f.count == 0 {
            return;
        }
        let s = |ms: f64| ms / 1000.0;
        for (p, v) in PERCENTILES.iter().zip(f.pct_ms) {
            let q = format!("{}", p / 100.0);
            self.series("planrun_response_time_seconds", &[("quantile", &q), ("transaction", &l.label)], s(v));
        }
        self.series("planrun_response_time_mean_seconds", &t, s(f.mean_ms));
        self.series("planrun_response_time_min_seconds", &t, s(f.min_ms));
        self.series("planrun_response_time_max_seconds", &t, s(f.max_ms));
    }

    /// One `timeseries` entry with one sample.
    fn series(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let mut all: Vec<(&str, &str)> = vec![("__name__", name)];
        all.extend(self.common.0.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        all.extend(labels.iter().copied());
        all.sort_by(|a, b| a.0.cmp(b.0));
        let scratch = &mut self.scratch;
        scratch.clear();
        for (k, v) in all {
            let mut label = Vec::with_capacity(k.len() + v.len() + 4);
            bytes_field(&mut label, 1, k.as_bytes());
            bytes_field(&mut label, 2, v.as_bytes());
            bytes_field(scratch, 1, &label);
        }
        let mut sample = Vec::with_capacity(20);
        sample.push(1 << 3 | 1);
        sample.extend_from_slice(&value.to_le_bytes());
        sample.push(2 << 3);
        varint(&mut sample, self.ts as u64);
        bytes_field(scratch, 2, &sample);
        bytes_field(self.out, 1, scratch);
        self.samples += 1;
    }
}

/// A length-delimited field.
fn bytes_field(out: &mut Vec<u8>, field: u8, bytes: &[u8]) {
    out.push(field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The request body: the entries, snappy-compressed (block format, as remote write wants).
pub fn body(request: &[u8]) -> Result<Vec<u8>, snap::Error> {
    snap::raw::Encoder::new().compress_vec(request)
}

#[cfg(test)]
mod tests {
    use super::super::aggregate::Aggregator;
    use super::*;
    use crate::sample::tests::sample;

    #[test]
    fn one_series_is_encoded_as_protobuf_does() {
        let mut out = Vec::new();
        let mut w = Writer { out: &mut out, common: &Common::new("p", &[]), ts: 1000, scratch: Vec::new(), samples: 0 };
        w.series("m", &[], 1.5);
        // timeseries { labels { "__name__" "m" } labels { "application" "p" } samples { 1.5, 1000 } }
        let mut want = vec![0x0a, 47, 0x0a, 13, 0x0a, 8];
        want.extend_from_slice(b"__name__");
        want.extend_from_slice(&[0x12, 1, b'm', 0x0a, 16, 0x0a, 11]);
        want.extend_from_slice(b"application");
        want.extend_from_slice(&[0x12, 1, b'p', 0x12, 12, 0x09]);
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&[0x10, 0xe8, 0x07]);
        assert_eq!(out, want);
    }

    #[test]
    fn a_second_gives_counters_for_every_label_and_gauges_for_busy_ones() {
        let mut agg = Aggregator::new(10);
        agg.record(&[sample("a")], 10, 1, 0);
        agg.close_all(1, 0);
        let mut out = Vec::new();
        let n = second(&mut out, &Common::new("p", &[("segment".into(), "0".into())]), &agg.take()[0]);
        // (4 counters + 4 quantiles + mean, min, max) for `a` and for `all`, then users and dropped.
        assert_eq!(n, 2 * 11 + 2);
        let body = body(&out).unwrap();
        assert_eq!(snap::raw::Decoder::new().decompress_vec(&body).unwrap(), out);
    }
}
