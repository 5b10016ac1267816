//! The summary JSON (`--summary-json FILE`): the end-of-run statistics, per label and TOTAL, for CI and for
//! `planrun compare`. The format is documented in `docs/results.md` and `schemas/summary.schema.json`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::results::ResultsError;
use crate::sink::stats::{Stats, Summary, SummaryRow};

/// The value of the `format` field.
pub const FORMAT: &str = "planrun-summary";

/// The value of the `version` field; bumped when a field changes meaning or goes away (not when one is added).
pub const VERSION: u32 = 1;

/// The file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The first request's start, ms since the Unix epoch; `null` when there was none.
    pub start_ms: Option<u64>,
    /// The last request's end, ms since the Unix epoch; `null` when there was none.
    pub end_ms: Option<u64>,
    /// One row per label, in order of first appearance.
    pub labels: Vec<SummaryRow>,
    /// All requests (transactions left out).
    pub total: SummaryRow,
    /// The open model's dropped iterations, when a run of a plan with open-model groups counted them (not
    /// `report` or `merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_iterations: Option<super::dropped::DroppedIterations>,
    /// What the run counted about its connections (`planrun run` only: a JTL does not hold it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
}

/// What a run counted about its connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connections {
    /// Kept-alive connections closed because the server sent bytes no request asked for (docs/faults.md).
    pub out_of_step: u64,
}

impl SummaryFile {
    /// The statistics' summary.
    pub fn new(stats: &Stats) -> Self {
        let summary = stats.summary();
        let window = stats.window_ms();
        SummaryFile {
            format: FORMAT.to_string(),
            version: VERSION,
            start_ms: window.map(|w| w.0),
            end_ms: window.map(|w| w.1),
            labels: summary.rows,
            total: summary.total,
            dropped_iterations: None,
            connections: None,
        }
    }

    /// The rows as a [`Summary`], for the table.
    pub fn summary(&self) -> Summary {
        Summary { rows: self.labels.clone(), total: self.total.clone() }
    }

    /// Pretty-printed JSON, ending with a newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a summary always serializes");
        text.push('\n');
        text
    }

    /// Writes the file, creating its parent directories.
    #[cfg(test)]
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::sink::file::write_whole(path, self.to_json().as_bytes())
    }

    /// Reads a summary JSON file.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Io { path: name.clone(), source })?;
        let bad = |line, message| ResultsError::BadRow { path: name.clone(), line, message };
        let file: SummaryFile = serde_json::from_str(&text)
            .map_err(|e| bad(e.line() as u64, format!("not a planrun summary JSON: {e}")))?;
        if file.format != FORMAT || file.version != VERSION {
            let message = format!(
                "format `{}` version {}: this planrun reads `{FORMAT}` version {VERSION}",
                file.format, file.version
            );
            return Err(bad(1, message));
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::tests::sample;

    #[test]
    fn round_trips() {
        let mut stats = Stats::new();
        stats.record(&sample("a"));
        let file = SummaryFile::new(&stats);
        assert_eq!((file.start_ms, file.end_ms), (Some(1_764_547_200_123), Some(1_764_547_200_127)));
        let path = std::env::temp_dir().join(format!("planrun-summary-json-{}/s.json", std::process::id()));
        file.write(&path).unwrap();
        assert_eq!(SummaryFile::read(&path).unwrap(), file);
        std::fs::write(&path, "{\"format\": \"x\"}").unwrap();
        let err = SummaryFile::read(&path).unwrap_err().to_string();
        assert!(err.contains("not a planrun summary JSON: missing field"), "{err}");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
