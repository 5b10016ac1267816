//! One pass over a results file: the summary statistics, the timeline and the failure messages, and the
//! report's data built from them.

use serde::{Deserialize, Serialize};

use super::distribution::{distribution, Distribution};
use super::failures::{FailureData, Failures};
use super::results::{Format, Record, ResultsError, ResultsReader};
use super::summary_json::SummaryFile;
use super::timeline::{LabelTimelineData, LabelTimelines, Timeline, TimelineData};
use crate::sink::stats::Stats;

/// Failure messages listed in the report.
pub const TOP_FAILURES: usize = 25;

/// Everything the report needs, gathered one record at a time in bounded memory.
#[derive(Debug)]
pub struct Analysis {
    /// The file read, as named.
    pub source: String,
    pub format: Format,
    /// Per label and TOTAL, as the run's summary.
    pub stats: Stats,
    /// Per interval (transactions left out, as in TOTAL).
    pub timeline: Timeline,
    /// Per interval and label (transactions left out).
    pub labels: LabelTimelines,
    /// Failure messages of failed requests (transactions left out).
    pub failures: Failures,
}

/// The report's data: what the HTML shows, and embeds as JSON for other tools (and tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportData {
    /// The file read.
    pub source: String,
    /// Its format (`JTL`, `JSON lines`...).
    pub source_format: String,
    /// Per label and TOTAL, exactly as `--summary-json` writes them.
    pub summary: SummaryFile,
    /// Each label's response-time distribution, in the summary's label order.
    pub distributions: Vec<Distribution>,
    /// Samples, errors, percentiles and threads per interval.
    pub timeline: TimelineData,
    /// Samples, errors and percentiles per interval and label.
    #[serde(default)]
    pub label_timelines: LabelTimelineData,
    /// The most frequent failure messages.
    pub failures: FailureData,
}

impl Analysis {
    /// Reads every record of `reader`.
    pub fn read(reader: &mut ResultsReader) -> Result<Self, ResultsError> {
        let resolution = reader.resolution_us();
        let mut analysis = Analysis {
            source: reader.path().to_string(),
            format: reader.format(),
            stats: Stats::with_resolution_us(resolution),
            timeline: Timeline::with_limits(super::timeline::MAX_POINTS, resolution),
            labels: LabelTimelines::new(resolution),
            failures: Failures::new(),
        };
        while let Some(record) = reader.next_record()? {
            analysis.add(&record);
        }
        Ok(analysis)
    }

    /// Adds one record.
    pub fn add(&mut self, r: &Record<'_>) {
        self.stats.observe(&r.observation());
        if !r.transaction {
            self.timeline.record(r.start_ms, r.elapsed_us, r.success, r.all_threads);
            self.labels.record(&r.label, r.start_ms, r.elapsed_us, r.success);
            if !r.success {
                self.failures.record(&r.label, r.failure_text());
            }
        }
    }

    /// The report's data.
    pub fn data(&self) -> ReportData {
        let resolution = self.stats.resolution_us();
        ReportData {
            source: self.source.clone(),
            source_format: self.format.name().to_string(),
            summary: SummaryFile::new(&self.stats),
            distributions: self.stats.latencies().map(|(label, h)| distribution(label, h, resolution)).collect(),
            timeline: self.timeline.data(),
            label_timelines: self.labels.data(),
            failures: self.failures.top(TOP_FAILURES),
        }
    }
}
