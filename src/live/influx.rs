//! InfluxDB 1.x line protocol, with the measurement, tags and fields of JMeter's InfluxDB backend listener
//! (docs/outputs.md): timestamps in µs (`precision=u`), every number a float as JMeter writes them.

use std::fmt::Write as _;

use super::aggregate::{Figures, LabelSecond, Second, PERCENTILES};
use super::raw::RawSample;

/// The measurement of every point, as JMeter's.
pub const MEASUREMENT: &str = "jmeter";

/// Tags every point of a run carries: `application=...` and any others (`segment=...`), escaped once.
#[derive(Debug, Clone, Default)]
pub struct Tags(String);

impl Tags {
    /// `application` and the extra tags, in that order.
    pub fn new(application: &str, extra: &[(String, String)]) -> Self {
        let mut t = String::new();
        tag(&mut t, "application", application);
        for (k, v) in extra {
            tag(&mut t, k, v);
        }
        Tags(t)
    }
}

/// Appends the lines of a closed second; returns how many.
pub fn second(out: &mut String, tags: &Tags, s: &Second) -> u64 {
    let ts = s.at_s.saturating_mul(1_000_000);
    let mut lines = 0;
    for l in s.labels.iter().filter(|l| l.all.count > 0) {
        lines += label(out, tags, l, ts);
    }
    if s.total.all.count > 0 {
        out.push_str(MEASUREMENT);
        out.push_str(&tags.0);
        out.push_str(",transaction=all,statut=all ");
        figures(out, &s.total.all, &s.total);
        let _ = write!(out, ",countError={}", s.total.ko.count);
        let _ = writeln!(out, " {ts}");
        lines += 1;
    }
    for e in &s.errors {
        out.push_str(MEASUREMENT);
        out.push_str(&tags.0);
        tag(out, "transaction", &e.label);
        tag(out, "responseCode", &e.code);
        tag(out, "responseMessage", &e.message);
        let _ = writeln!(out, " count={} {ts}", e.count);
        lines += 1;
    }
    out.push_str(MEASUREMENT);
    out.push_str(&tags.0);
    let u = &s.users;
    let _ = writeln!(
        out,
        ",transaction=internal minAT={},maxAT={},meanAT={},dropped={},droppedTotal={} {ts}",
        u.min, u.max, u.mean, s.dropped, s.dropped_total
    );
    lines + 1
}

/// A label's `statut=all`, `ok` and `ko` lines (those with samples).
fn label(out: &mut String, tags: &Tags, l: &LabelSecond, ts: u64) -> u64 {
    let mut lines = 0;
    for (statut, f) in [("all", &l.all), ("ok", &l.ok), ("ko", &l.ko)] {
        if f.count == 0 {
            continue;
        }
        out.push_str(MEASUREMENT);
        out.push_str(&tags.0);
        tag(out, "transaction", &l.label);
        tag(out, "statut", statut);
        out.push(' ');
        figures(out, f, l);
        if statut == "all" {
            let _ = write!(out, ",countError={}", l.ko.count);
        }
        let _ = writeln!(out, " {ts}");
        lines += 1;
    }
    lines
}

fn figures(out: &mut String, f: &Figures, l: &LabelSecond) {
    let _ = write!(
        out,
        "count={},avg={},min={},max={},hit={},sb={},rb={}",
        f.count, f.mean_ms, f.min_ms, f.max_ms, f.count, l.sent, l.received
    );
    for (p, v) in PERCENTILES.iter().zip(f.pct_ms) {
        let _ = write!(out, ",pct{p:.1}={v}");
    }
}

/// Appends one sample's line, as JMeter's raw listener writes it (plus `application`); the µs digits of the
/// timestamp are `seq % 1000`, so two samples of one thread and label in the same ms stay two points.
pub fn raw(out: &mut String, tags: &Tags, s: &RawSample, seq: u64) {
    out.push_str(MEASUREMENT);
    out.push_str(&tags.0);
    tag(out, "status", if s.success { "ok" } else { "ko" });
    tag(out, "transaction", &s.label);
    let thread: String = s.thread_name().chars().filter(|c| !c.is_whitespace()).collect();
    tag(out, "threadName", &thread);
    let ms = |us: u64| us as f64 / 1000.0;
    let ts = s.start_ms.saturating_mul(1000) + seq % 1000;
    let _ =
        writeln!(out, " duration={},ttfb={},connectTime={} {ts}", ms(s.elapsed_us), ms(s.latency_us), ms(s.connect_us));
}

/// Appends `,key=value`, the value escaped as line protocol wants it; an empty value leaves the tag out.
fn tag(out: &mut String, key: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    out.push(',');
    escape(out, key);
    out.push('=');
    escape(out, value);
}

fn escape(out: &mut String, text: &str) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ',' | '=' | ' ' => {
                out.push('\\');
                out.push(c);
            }
            // A backslash before the separator that follows would escape it.
            '\\' if chars.peek().is_none() => out.push('/'),
            c if c.is_control() => out.push_str("\\ "),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::aggregate::Aggregator;
    use super::*;
    use crate::sample::tests::sample;

    #[test]
    fn a_second_is_written_as_jmeter_writes_it() {
        let mut agg = Aggregator::new(1_700_000_000);
        let fail = crate::sample::Sample { success: false, ..sample("get home") };
        agg.record(&[sample("get home"), fail], 1_700_000_000, 2, 0);
        agg.close_all(2, 0);
        let mut out = String::new();
        let lines = second(&mut out, &Tags::new("my plan", &[]), &agg.take()[0]);
        assert_eq!(lines as usize, out.lines().count());
        let first = out.lines().next().unwrap();
        assert!(
            first.starts_with("jmeter,application=my\\ plan,transaction=get\\ home,statut=all count=2,avg="),
            "{out}"
        );
        assert!(first.contains(",pct90.0=") && first.contains(",countError=1 1700000000000000"), "{first}");
        assert!(out.contains("transaction=get\\ home,statut=ko count=1,"), "{out}");
        assert!(out.contains(",transaction=all,statut=all count=2,"), "{out}");
        assert!(out.contains(",responseCode=202,responseMessage=Accepted count=1 "), "{out}");
        assert!(out.contains(",transaction=internal minAT=2,maxAT=2,meanAT=2,dropped=0,droppedTotal=0 "), "{out}");
    }

    #[test]
    fn tag_values_are_escaped() {
        let mut out = String::new();
        tag(&mut out, "transaction", "a,b=c d\\");
        tag(&mut out, "empty", "");
        assert_eq!(out, ",transaction=a\\,b\\=c\\ d/");
    }
}
