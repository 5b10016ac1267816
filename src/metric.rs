//! The figures of a run's statistics that users name: what a plan's thresholds bound (`p95 < 500ms`), what
//! `planrun compare --metric` watches, and what the reports show a threshold measured.
//!
//! One vocabulary, with its aliases (`avg`, `average`, `median`, `p999`), for every place a metric is written;
//! it sits before the plan in the flow, so the plan, the reports and the command line all depend on it.

/// A figure of a label's (or the run's) statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Mean response time.
    Mean,
    /// Fastest response.
    Min,
    /// Slowest response.
    Max,
    /// Median response time.
    P50,
    /// 90th percentile of response times.
    P90,
    /// 95th percentile of response times.
    P95,
    /// 99th percentile of response times.
    P99,
    /// 99.9th percentile of response times.
    P999,
    /// Failed samples over all samples.
    ErrorRate,
    /// Samples per second.
    Throughput,
    /// Number of samples.
    Samples,
    /// Open-model iterations dropped (every thread of their group busy), counted.
    Dropped,
    /// Open-model iterations dropped, over the arrivals due: `dropped` with a percentage.
    DroppedRate,
}

/// What a metric's values are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds, written as a duration (`500ms`).
    Ms,
    /// A fraction, written as a percentage (`1%`).
    Fraction,
    /// Per second (`100/s`).
    PerSecond,
    /// A count (`1000`).
    Count,
}

impl Metric {
    /// Every metric a name stands for, in the order messages and documents list them (`DroppedRate` is
    /// `dropped` with a percentage, so it has no name of its own).
    pub const NAMED: [Metric; 12] = [
        Metric::Mean,
        Metric::Min,
        Metric::Max,
        Metric::P50,
        Metric::P90,
        Metric::P95,
        Metric::P99,
        Metric::P999,
        Metric::ErrorRate,
        Metric::Throughput,
        Metric::Samples,
        Metric::Dropped,
    ];

    /// The name it is written with.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean",
            Metric::Min => "min",
            Metric::Max => "max",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::ErrorRate => "error_rate",
            Metric::Throughput => "throughput",
            Metric::Samples => "samples",
            Metric::Dropped | Metric::DroppedRate => "dropped",
        }
    }

    /// Other names accepted for it.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Metric::Mean => &["avg", "average"],
            Metric::P50 => &["median"],
            Metric::P999 => &["p999"],
            _ => &[],
        }
    }

    /// The metric a name or an alias stands for (exact, lower case).
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::NAMED.into_iter().find(|m| m.name() == name || m.aliases().contains(&name))
    }

    /// Every name and alias, with the metric it stands for.
    pub fn words() -> impl Iterator<Item = (&'static str, Metric)> {
        Metric::NAMED
            .into_iter()
            .flat_map(|m| std::iter::once(m.name()).chain(m.aliases().iter().copied()).map(move |w| (w, m)))
    }

    /// The names, without aliases: for "one of" lists and did-you-mean hints.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Metric::NAMED.into_iter().map(Metric::name)
    }

    /// What its values are counted in.
    pub fn unit(self) -> Unit {
        match self {
            Metric::ErrorRate | Metric::DroppedRate => Unit::Fraction,
            Metric::Throughput => Unit::PerSecond,
            Metric::Samples | Metric::Dropped => Unit::Count,
            _ => Unit::Ms,
        }
    }

    /// True when a higher value is better (throughput); for the others, lower is better.
    pub fn higher_is_better(self) -> bool {
        self == Metric::Throughput
    }

    /// A value as users write it: `12.50ms`, `0.31%`, `95.0/s`, `1000`.
    pub fn show(self, value: f64) -> String {
        match self.unit() {
            Unit::Fraction => format!("{:.2}%", value * 100.0),
            Unit::PerSecond => format!("{value:.1}/s"),
            Unit::Count => format!("{value:.0}"),
            Unit::Ms => format!("{value:.2}ms"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_stand_for_one_metric_each() {
        assert_eq!(Metric::from_name("p99.9"), Some(Metric::P999));
        assert_eq!(Metric::from_name("p999"), Some(Metric::P999));
        assert_eq!(Metric::from_name("average"), Some(Metric::Mean));
        assert_eq!(Metric::from_name("median"), Some(Metric::P50));
        assert_eq!(Metric::from_name("P95"), None);
        assert_eq!(Metric::from_name("p96"), None);
        for (word, metric) in Metric::words() {
            assert_eq!(Metric::from_name(word), Some(metric), "{word}");
        }
        let words: Vec<&str> = Metric::words().map(|(w, _)| w).collect();
        let mut unique = words.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), words.len(), "a word names one metric");
    }
}
