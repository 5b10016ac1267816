//! Per-second, per-label figures: samples are counted into the second in which the drain took them in, so
//! each (second, label) is closed once and written once (a database keeps one point per series and instant).

use std::collections::HashMap;
use std::sync::Arc;

use hdrhistogram::Histogram;

use crate::sample::{Outcome, Sample};

/// The percentiles every output carries.
pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// Longest responseMessage kept as a tag of an error point.
const MESSAGE_CAP: usize = 100;

/// Response times of one second: count, mean, min, max and [`PERCENTILES`], in ms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Samples.
    pub count: u64,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Fastest, ms.
    pub min_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
    /// [`PERCENTILES`], ms.
    pub pct_ms: [f64; 4],
}

/// Running totals since the run started (counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Samples.
    pub requests: u64,
    /// Failed samples.
    pub errors: u64,
    /// Bytes received.
    pub received: u64,
    /// Bytes sent.
    pub sent: u64,
}

/// One label (or `all`) in one second.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSecond {
    /// The label; `all` for every request (transactions left out, as in the summary's TOTAL).
    pub label: Arc<str>,
    /// Every sample of the second.
    pub all: Figures,
    /// The successful ones.
    pub ok: Figures,
    /// The failed ones.
    pub ko: Figures,
    /// Bytes received in the second.
    pub received: u64,
    /// Bytes sent in the second.
    pub sent: u64,
    /// Totals up to the end of this second.
    pub totals: Totals,
}

/// Failed samples of one label with one responseCode and responseMessage, in one second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCount {
    pub label: Arc<str>,
    /// JTL responseCode.
    pub code: String,
    /// JTL responseMessage, cut at 100 characters.
    pub message: String,
    /// How many.
    pub count: u64,
}

/// Active virtual users over one second, seen at each batch of samples and each tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Users {
    /// Fewest.
    pub min: u32,
    /// Most.
    pub max: u32,
    /// Mean of what was seen.
    pub mean: f64,
}

/// One closed second.
#[derive(Debug, Clone, PartialEq)]
pub struct Second {
    /// Seconds since the Unix epoch.
    pub at_s: u64,
    /// Every label seen so far, in order of first appearance; `all.count == 0` when it had no sample then.
    pub labels: Vec<LabelSecond>,
    /// Every request (transactions left out).
    pub total: LabelSecond,
    /// Failed samples by label, code and message.
    pub errors: Vec<ErrorCount>,
    /// Active users.
    pub users: Users,
    /// Iterations dropped in this second (open model, every thread busy).
    pub dropped: u64,
    /// Iterations dropped since the run started.
    pub dropped_total: u64,
}

impl Second {
    /// Samples of the second (transactions left out).
    pub fn samples(&self) -> u64 {
        self.total.all.count
    }
}

#[derive(Debug, Clone)]
struct Part {
    count: u64,
    sum_us: u128,
    min_us: u64,
    max_us: u64,
    hist: Histogram<u64>,
}

impl Default for Part {
    fn default() -> Self {
        Part {
            count: 0,
            sum_us: 0,
            min_us: u64::MAX,
            max_us: 0,
            hist: Histogram::new(2).expect("2 significant digits are supported"),
        }
    }
}

impl Part {
    fn record(&mut self, us: u64) {
        self.count += 1;
        self.sum_us += u128::from(us);
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        // `record` grows the histogram; `saturating_record` alone clamps to its current (at first tiny) range.
        if self.hist.record(us.max(1)).is_err() {
            self.hist.saturating_record(us.max(1));
        }
    }

    /// The figures, and the part emptied for the next second (its histogram's memory kept).
    fn close(&mut self) -> Figures {
        if self.count == 0 {
            return Figures::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let mut pct_ms = [0.0; 4];
        for (p, q) in pct_ms.iter_mut().zip(PERCENTILES) {
            *p = ms(self.hist.value_at_quantile(q / 100.0));
        }
        let f = Figures {
            count: self.count,
            mean_ms: self.sum_us as f64 / self.count as f64 / 1000.0,
            min_ms: ms(self.min_us),
            max_ms: ms(self.max_us),
            pct_ms,
        };
        self.count = 0;
        self.sum_us = 0;
        self.min_us = u64::MAX;
        self.max_us = 0;
        self.hist.reset();
        f
    }
}

#[derive(Debug, Clone, Default)]
struct Label {
    all: Part,
    ok: Part,
    ko: Part,
    received: u64,
    sent: u64,
    totals: Totals,
}

impl Label {
    fn record(&mut self, s: &Sample) {
        let part = if s.success { &mut self.ok } else { &mut self.ko };
        part.record(s.elapsed_us);
        self.all.record(s.elapsed_us);
        self.received += s.bytes;
        self.sent += s.sent_bytes;
        self.totals.requests += 1;
        self.totals.errors += u64::from(!s.success);
        self.totals.received += s.bytes;
        self.totals.sent += s.sent_bytes;
    }

    fn close(&mut self, label: &Arc<str>) -> LabelSecond {
        let second = LabelSecond {
            label: label.clone(),
            all: self.all.close(),
            ok: self.ok.close(),
            ko: self.ko.close(),
            received: self.received,
            sent: self.sent,
            totals: self.totals,
        };
        self.received = 0;
        self.sent = 0;
        second
    }
}

/// The figures of the second under way, closed as the clock passes each second.
#[derive(Debug)]
pub struct Aggregator {
    /// The second being filled.
    second: u64,
    labels: Vec<(Arc<str>, Label)>,
    index: HashMap<Arc<str>, usize>,
    total: Label,
    errors: HashMap<(usize, String, String), u64>,
    users: (u32, u32, u64, u64),
    dropped_seen: u64,
    done: Vec<Second>,
}

impl Aggregator {
    /// Starts counting at `now_s` (seconds since the epoch).
    pub fn new(now_s: u64) -> Self {
        Aggregator {
            second: now_s,
            labels: Vec::new(),
            index: HashMap::new(),
            total: Label::default(),
            errors: HashMap::new(),
            users: (u32::MAX, 0, 0, 0),
            dropped_seen: 0,
            done: Vec::new(),
        }
    }

    /// Counts a batch taken in at `now_s`; `active` users at that moment.
    pub fn record(&mut self, batch: &[Sample], now_s: u64, active: u32, dropped_total: u64) {
        self.advance(now_s, dropped_total);
        self.see_users(active);
        for s in batch {
            let i = match self.index.get(&s.label) {
                Some(&i) => i,
                None => {
                    self.labels.push((s.label.clone(), Label::default()));
                    self.index.insert(s.label.clone(), self.labels.len() - 1);
                    self.labels.len() - 1
                }
            };
            self.labels[i].1.record(s);
            let transaction = matches!(s.outcome, Outcome::Transaction { .. });
            if !transaction {
                self.total.record(s);
            }
            if !s.success {
                let mut message = s.response_message();
                if message.len() > MESSAGE_CAP {
                    let mut cut = MESSAGE_CAP;
                    while !message.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    message.truncate(cut);
                }
                *self.errors.entry((i, s.response_code(), message)).or_default() += 1;
            }
        }
    }

    /// The clock reached `now_s`: the second under way closes when it is earlier.
    pub fn tick(&mut self, now_s: u64, active: u32, dropped_total: u64) {
        self.see_users(active);
        self.advance(now_s, dropped_total);
    }

    /// Closes the second under way whatever the clock says (the run is over).
    pub fn close_all(&mut self, active: u32, dropped_total: u64) {
        self.see_users(active);
        let next = self.second + 1;
        self.advance(next, dropped_total);
    }

    /// The seconds closed since the last call, oldest first.
    pub fn take(&mut self) -> Vec<Second> {
        std::mem::take(&mut self.done)
    }

    fn see_users(&mut self, active: u32) {
        let (min, max, sum, n) = &mut self.users;
        *min = (*min).min(active);
        *max = (*max).max(active);
        *sum += u64::from(active);
        *n += 1;
    }

    fn advance(&mut self, now_s: u64, dropped_total: u64) {
        // A clock that went back counts into the second under way.
        if now_s <= self.second {
            return;
        }
        let labels = self.labels.iter_mut().map(|(name, l)| l.close(name)).collect();
        let all: Arc<str> = Arc::from("all");
        let total = self.total.close(&all);
        let mut errors: Vec<ErrorCount> = self
            .errors
            .drain()
            .map(|((i, code, message), count)| ErrorCount { label: self.labels[i].0.clone(), code, message, count })
            .collect();
        errors.sort_by(|a, b| (&a.label, &a.code, &a.message).cmp(&(&b.label, &b.code, &b.message)));
        let (min, max, sum, n) = self.users;
        let users =
            Users { min: if n == 0 { 0 } else { min }, max, mean: if n == 0 { 0.0 } else { sum as f64 / n as f64 } };
        self.users = (u32::MAX, 0, 0, 0);
        let dropped = dropped_total.saturating_sub(self.dropped_seen);
        self.dropped_seen = self.dropped_seen.max(dropped_total);
        self.done.push(Second {
            at_s: self.second,
            labels,
            total,
            errors,
            users,
            dropped,
            dropped_total: self.dropped_seen,
        });
        self.second = now_s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::tests::sample;

    fn timed(label: &str, ms: u64, ok: bool) -> Sample {
        Sample { elapsed_us: ms * 1000, success: ok, ..sample(label) }
    }

    #[test]
    fn each_second_closes_once_with_its_own_samples() {
        let mut agg = Aggregator::new(100);
        agg.record(&[timed("a", 10, true), timed("a", 30, false), timed("b", 5, true)], 100, 3, 0);
        agg.tick(100, 4, 0);
        assert!(agg.take().is_empty(), "the second is still under way");
        agg.record(&[timed("a", 20, true)], 101, 2, 7);
        let first = agg.take();
        assert_eq!(first.len(), 1);
        let s = &first[0];
        assert_eq!((s.at_s, s.samples()), (100, 3));
        let a = &s.labels[0];
        assert_eq!((a.all.count, a.ok.count, a.ko.count, a.totals.errors), (2, 1, 1, 1));
        assert_eq!((a.all.min_ms, a.all.max_ms, a.all.mean_ms), (10.0, 30.0, 20.0));
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.users, Users { min: 3, max: 4, mean: 3.5 });
        assert_eq!((s.dropped, s.dropped_total), (7, 7), "drops seen when the second closes are its own");
        agg.close_all(0, 7);
        let last = agg.take();
        assert_eq!(last[0].at_s, 101);
        assert_eq!((last[0].labels[0].all.count, last[0].labels[0].totals.requests), (1, 3));
        assert_eq!(last[0].labels[1].all.count, 0, "b had nothing in this second but keeps its totals");
        assert_eq!((last[0].dropped, last[0].dropped_total), (0, 7));
    }

    #[test]
    fn percentiles_are_the_samples_not_the_histograms_first_range() {
        let mut agg = Aggregator::new(100);
        agg.record(&[timed("a", 40, false), timed("a", 40, false)], 100, 1, 0);
        agg.close_all(0, 0);
        let a = &agg.take()[0].labels[0];
        assert_eq!(a.all.count, 2);
        assert!((a.all.pct_ms[0] - 40.0).abs() < 1.0, "{:?}", a.all);
        assert_eq!(a.all.pct_ms, a.ko.pct_ms, "failed samples count in `all`");
        agg.record(&[timed("b", 250, true)], 101, 1, 0);
        agg.close_all(0, 0);
        let b = &agg.take()[0].labels[1];
        assert!((b.ok.pct_ms[3] - 250.0).abs() < 3.0, "{:?}", b.ok);
    }
}
