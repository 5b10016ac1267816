//! `planrun report RESULTS [-o DIR]`: the summary table on stdout; `index.html` and `summary.json` in DIR.
//! Also what `planrun run --report DIR --summary-json FILE --summary-csv FILE` writes at the end of a run
//! (opened before it starts), and what a run checks of its JTL for the readers: the timeStamp format, the rows.

use std::path::{Path, PathBuf};

use super::args::ReportArgs;
use super::exit;
use super::print::{errln, outln};
use crate::report::analysis::{Analysis, ReportData};
use crate::report::html::report_html;
use crate::report::results::{read_back, Format, ResultsError, ResultsReader, DATE_FORMATS};
use crate::report::spreadsheet::TooManyRows;
use crate::report::summary::render_table;
use crate::report::summary_csv::summary_csv;
use crate::report::summary_json::{Connections, SummaryFile};
use crate::sink::stats::Stats;
use crate::sink::timestamp::TimestampFormat;
use crate::sink::{SinkError, WholeFile};

pub(super) fn report(a: ReportArgs) -> i32 {
    let mut reader = match ResultsReader::open(&a.results) {
        Ok(reader) => reader,
        Err(e) => {
            errln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let dir = a.output.unwrap_or_else(|| default_dir(&a.results));
    // Every output is claimed, then opened, before the file is read, which can take a while.
    super::outputs::note_inputs([a.results.as_path()]);
    let report_files = super::outputs::report_files(&dir);
    let side = [a.summary_json.as_deref(), a.summary_csv.as_deref()].into_iter().flatten();
    let opened = super::outputs::claim_all(side.chain(report_files.iter().map(PathBuf::as_path)))
        .and_then(|_| Outputs::open(a.summary_json.as_deref(), a.summary_csv.as_deref(), Some(&dir)));
    let outputs = match opened {
        Ok(outputs) => outputs,
        Err(e) => {
            errln!("error: {e}");
            return super::outputs::sink_exit_code(&e);
        }
    };
    let analysis = match Analysis::read(&mut reader) {
        Ok(analysis) => analysis,
        Err(e) => {
            errln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let data = analysis.data();
    outln!("{}", render_table(&data.summary.summary()));
    errln!(
        "planrun: {} samples read from {} ({})",
        data.summary.labels.iter().map(|r| r.samples).sum::<u64>(),
        data.source,
        data.source_format
    );
    if matches!(reader.format(), Format::Jtl { .. }) {
        warn_too_many_rows(&data.source, reader.rows());
    }
    let summary = data.summary.clone();
    let errors = outputs.write(&summary, Some(Ok(data)));
    for e in &errors {
        errln!("error: {e}");
    }
    if errors.is_empty() {
        exit::OK
    } else {
        exit::ABORTED
    }
}

/// Says when a JTL has more rows than a spreadsheet holds.
pub(super) fn warn_too_many_rows(jtl: &str, rows: u64) {
    if let Some(over) = TooManyRows::check(jtl, rows) {
        errln!("planrun: warning: {over}");
    }
}

/// A timeStamp pattern whose dates planrun's readers cannot read back.
#[derive(Debug, thiserror::Error)]
#[error("planrun report and compare cannot read back timeStamp written as `{pattern}` (`{text}`): they read ms or {DATE_FORMATS}")]
pub(super) struct UnreadableTimestamps {
    pattern: String,
    /// How a date written with it reads.
    text: String,
}

/// Refuses a timeStamp pattern planrun's readers cannot read back with `--report`, which reads the JTL back
/// (exit 2); without it, a warning.
pub(super) fn check_timestamp_format(format: &TimestampFormat, report: bool) -> Result<(), UnreadableTimestamps> {
    let Err(text) = read_back(format) else {
        return Ok(());
    };
    let unreadable = UnreadableTimestamps { pattern: format.pattern().to_string(), text };
    if report {
        return Err(unreadable);
    }
    errln!("planrun: warning: {unreadable}");
    Ok(())
}

/// `results/run.jtl` -> `results/run-report`.
fn default_dir(results: &Path) -> PathBuf {
    let stem = results.file_stem().map_or_else(|| "results".into(), |s| s.to_string_lossy().into_owned());
    results.with_file_name(format!("{stem}-report"))
}

/// The files written from the statistics at the end of a run or report, each opened before the run sends
/// anything (or the report reads its file), so a path that cannot be written stops it at once.
pub(super) struct Outputs {
    summary_json: Option<WholeFile>,
    summary_csv: Option<WholeFile>,
    /// The report's `index.html` and `summary.json`.
    report: Option<(WholeFile, WholeFile)>,
}

impl Outputs {
    /// Opens (creates or truncates) every file given; the report's directory is made.
    pub(super) fn open(
        summary_json: Option<&Path>,
        summary_csv: Option<&Path>,
        report_dir: Option<&Path>,
    ) -> Result<Self, SinkError> {
        let open = |path: Option<&Path>| path.map(WholeFile::open).transpose();
        let report = match report_dir {
            Some(dir) => Some((WholeFile::open(&dir.join("index.html"))?, WholeFile::open(&dir.join("summary.json"))?)),
            None => None,
        };
        Ok(Outputs { summary_json: open(summary_json)?, summary_csv: open(summary_csv)?, report })
    }

    /// Writes every file; returns what went wrong. `summary` is the summary JSON's and CSV's content, `report`
    /// the report's data (needed when a report is to be written), or why it could not be had.
    /// Whether a report is to be written (its data is worth computing).
    pub(super) fn wants_report(&self) -> bool {
        self.report.is_some()
    }

    pub(super) fn write(self, summary: &SummaryFile, report: Option<Result<ReportData, ResultsError>>) -> Vec<String> {
        let mut errors = Vec::new();
        let mut keep = |written: Result<(), SinkError>| match written {
            Ok(()) => true,
            Err(e) => {
                errors.push(e.to_string());
                false
            }
        };
        if let Some(file) = self.summary_json {
            keep(file.write(summary.to_json().as_bytes()));
        }
        if let Some(file) = self.summary_csv {
            keep(file.write(summary_csv(&summary.summary()).as_bytes()));
        }
        match (self.report, report) {
            (Some((index, json)), Some(Ok(data))) => {
                let page = index.path().to_path_buf();
                let html = keep(index.write(report_html(&data).as_bytes()));
                if keep(json.write(data.summary.to_json().as_bytes())) && html {
                    errln!("planrun: report in {}", page.display());
                }
            }
            (Some(_), Some(Err(e))) => errors.push(e.to_string()),
            _ => {}
        }
        errors
    }
}

/// At the end of a run: the summary JSON and CSV from the run's own statistics (µs precision), and the report
/// read back from the JTL just written, so it is the report `planrun report` of that JTL gives. Returns what
/// could not be written. The summary JSON also has the run's dropped iterations and connection counts.
pub(super) fn after_run(
    stats: &Stats,
    jtl: &Path,
    outputs: Outputs,
    (dropped, connections): (Option<crate::report::dropped::DroppedIterations>, Connections),
) -> Vec<String> {
    let report = outputs.report.is_some().then(|| read(jtl).map(|a| a.data()));
    let file = SummaryFile { dropped_iterations: dropped, connections: Some(connections), ..SummaryFile::new(stats) };
    outputs.write(&file, report)
}

/// The HTML report of a results file, when it can be read back.
pub(super) fn report_html_of(path: &Path) -> Option<String> {
    read(path).ok().map(|a| report_html(&a.data()))
}

/// Reads a results file in one pass.
fn read(path: &Path) -> Result<Analysis, ResultsError> {
    let mut reader = ResultsReader::open(path)?;
    Analysis::read(&mut reader)
}
