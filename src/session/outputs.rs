//! A run's outputs: claimed, then opened, all of them before anything is sent (an output that is an input,
//! one file given as two outputs, or a file another process is writing stops the run before it writes
//! anything: see `claim`); the results written as the run goes; the summary files, the JUnit XML, the Markdown
//! summary and the report written from its statistics at its end. `planrun report` and `planrun merge` write
//! the same summary files.

use std::path::{Path, PathBuf};

use crate::claim;
use crate::report::analysis::{Analysis, ReportData};
use crate::report::html::report_html;
use crate::report::junit::{threshold_cases, Suite};
use crate::report::results::{read_back, ResultsError, ResultsReader, DATE_FORMATS};
use crate::report::summary::render_table;
use crate::report::summary_csv::summary_csv;
use crate::report::summary_json::{Connections, SummaryFile};
use crate::report::summary_md::run_md;
use crate::report::thresholds::{render as render_thresholds, Verdict};
use crate::sink::bodies::BodyFiles;
use crate::sink::jsonl::JsonlSink;
use crate::sink::jtl::JtlSink;
use crate::sink::stats::{Stats, Summary};
use crate::sink::timestamp::TimestampFormat;
use crate::sink::{Sink, SinkError, WholeFile};

/// Notes the files a command reads that do not go through `files` (result files).
pub fn note_inputs<'a>(paths: impl IntoIterator<Item = &'a Path>) {
    for path in paths {
        claim::note_input_path(path);
    }
}

/// Claims every output given; for each, the length of the regular file it will replace (`None`: a new file,
/// or not a regular file).
pub fn claim_all<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<Vec<Option<u64>>, SinkError> {
    paths
        .into_iter()
        .map(|path| claim::claim(path).map_err(|source| SinkError::Io { path: path.display().to_string(), source }))
        .collect()
}

/// The files a report written into `dir` is made of.
pub fn report_files(dir: &Path) -> [PathBuf; 2] {
    [dir.join("index.html"), dir.join("summary.json")]
}

/// `results/<plan name>-<UTC yyyymmdd-HHMMSS>.jtl`: the JTL of a run that names none.
pub fn default_results_path(name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    PathBuf::from("results").join(format!("{safe}-{stamp}.jtl"))
}

/// The JTL, and the JSON lines and failed bodies' directory when asked for; with `append`, the JTL and the
/// JSON lines keep what they hold.
pub(super) fn open_results(
    jtl: &Path,
    json: Option<&Path>,
    json_failed_bodies: bool,
    failed_bodies: Option<&Path>,
    time: &TimestampFormat,
    append: bool,
) -> Result<Vec<Box<dyn Sink>>, SinkError> {
    let jtl = JtlSink::open(jtl, append)?.with_timestamp_format(time.clone());
    let mut outputs: Vec<Box<dyn Sink>> = vec![Box::new(jtl)];
    if let Some(json) = json {
        outputs.push(Box::new(JsonlSink::open(json, append)?.with_bodies(json_failed_bodies)));
    }
    if let Some(dir) = failed_bodies {
        outputs.push(Box::new(BodyFiles::create(dir)?));
    }
    Ok(outputs)
}

/// A timeStamp pattern whose dates planrun's readers cannot read back.
#[derive(Debug, thiserror::Error)]
#[error("planrun report and compare cannot read back timeStamp written as `{pattern}` (`{text}`): they read ms or {DATE_FORMATS}")]
pub struct UnreadableTimestamps {
    pattern: String,
    /// How a date written with it reads.
    text: String,
}

/// Whether planrun's readers can read back the dates of a timeStamp pattern.
pub fn check_timestamp_format(format: &TimestampFormat) -> Result<(), UnreadableTimestamps> {
    read_back(format).map_err(|text| UnreadableTimestamps { pattern: format.pattern().to_string(), text })
}

/// The files written from the statistics at the end of a run, report or merge, each opened before the run
/// sends anything (or the report reads its file), so a path that cannot be written stops it at once.
pub struct SummaryFiles {
    summary_json: Option<WholeFile>,
    summary_csv: Option<WholeFile>,
    /// The report's `index.html` and `summary.json`.
    report: Option<(WholeFile, WholeFile)>,
    junit: Option<WholeFile>,
    summary_md: Option<WholeFile>,
}

/// Where the files written at the end go: each one asked for.
#[derive(Debug, Default, Clone, Copy)]
pub struct SummaryPaths<'a> {
    /// `--summary-json`.
    pub summary_json: Option<&'a Path>,
    /// `--summary-csv`.
    pub summary_csv: Option<&'a Path>,
    /// `--report`'s directory.
    pub report_dir: Option<&'a Path>,
    /// `--junit`.
    pub junit: Option<&'a Path>,
    /// `--summary-md`.
    pub summary_md: Option<&'a Path>,
}

impl SummaryPaths<'_> {
    /// Every file, the report's two included, in the order they are claimed.
    fn files(&self) -> Vec<PathBuf> {
        let report = self.report_dir.map(report_files).into_iter().flatten();
        [self.summary_json, self.summary_csv, self.junit, self.summary_md]
            .into_iter()
            .flatten()
            .map(Path::to_path_buf)
            .chain(report)
            .collect()
    }
}

/// What the JUnit XML and the Markdown summary say besides the statistics: the thresholds judged, and the
/// facts around them.
#[derive(Debug, Default)]
pub struct Judged<'a> {
    /// The plan's name: the test suite's and the heading's.
    pub name: &'a str,
    /// The plan file, as the thresholds' lines name it.
    pub plan_file: &'a str,
    /// The thresholds judged.
    pub verdicts: &'a [Verdict],
    /// How long what was judged took, s.
    pub time_s: f64,
    /// Facts about it (`plan`, `results`, `seed`): JUnit properties.
    pub properties: Vec<(String, String)>,
    /// Lines under the table (samples and time, where the results are, why the run stopped early).
    pub notes: Vec<String>,
}

impl Judged<'_> {
    /// The JUnit test suite: a case per threshold, the summary table, the notes and the thresholds' lines as
    /// the suite's output. Its timestamp is the first sample's start (`start_ms`), else now.
    pub fn junit(&self, summary: &Summary, start_ms: Option<u64>) -> Suite {
        let mut out = render_table(summary);
        for note in &self.notes {
            out.push_str(note);
            out.push('\n');
        }
        if !self.verdicts.is_empty() {
            out.push_str(&render_thresholds(self.verdicts, self.plan_file));
        }
        let start = start_ms
            .and_then(|ms| chrono::DateTime::from_timestamp_millis(i64::try_from(ms).ok()?))
            .unwrap_or_else(chrono::Utc::now);
        Suite {
            name: self.name.to_string(),
            time_s: self.time_s,
            timestamp: start.format("%Y-%m-%dT%H:%M:%S").to_string(),
            properties: self.properties.clone(),
            cases: threshold_cases(self.verdicts, self.name, self.plan_file),
            system_out: out,
        }
    }

    /// The Markdown summary.
    pub fn markdown(&self, summary: &Summary) -> String {
        run_md(self.name, summary, self.verdicts, self.plan_file, &self.notes)
    }
}

/// What writing the summary files did.
#[derive(Debug, Default)]
pub struct Written {
    /// The report's page, when the report was written whole.
    pub report: Option<PathBuf>,
    /// What could not be written.
    pub errors: Vec<String>,
}

impl SummaryFiles {
    /// Opens (creates or truncates) every file given; the report's directory is made.
    pub fn open(paths: SummaryPaths<'_>) -> Result<Self, SinkError> {
        let open = |path: Option<&Path>| path.map(WholeFile::open).transpose();
        let report = match paths.report_dir.map(report_files) {
            Some([page, summary]) => Some((WholeFile::open(&page)?, WholeFile::open(&summary)?)),
            None => None,
        };
        Ok(SummaryFiles {
            summary_json: open(paths.summary_json)?,
            summary_csv: open(paths.summary_csv)?,
            report,
            junit: open(paths.junit)?,
            summary_md: open(paths.summary_md)?,
        })
    }

    /// Claims `results`, then the summary files and the report's files, and only then opens the summary
    /// files: a refused output stops the command before any output is truncated. Returns how many bytes each
    /// of `results` held (see [`claim_all`]) and the opened files.
    pub fn claim_and_open(results: &[&Path], paths: SummaryPaths<'_>) -> Result<(Vec<Option<u64>>, Self), SinkError> {
        let side = paths.files();
        let mut claimed = claim_all(results.iter().copied().chain(side.iter().map(PathBuf::as_path)))?;
        claimed.truncate(results.len());
        Ok((claimed, Self::open(paths)?))
    }

    /// Whether a report is to be written (its data is worth computing).
    pub fn wants_report(&self) -> bool {
        self.report.is_some()
    }

    /// Writes every file. `summary` is the summary JSON's and CSV's content, `report` the report's data
    /// (needed when a report is to be written), or why it could not be had; `judged` what the JUnit XML and
    /// the Markdown summary say besides the statistics.
    pub fn write(
        self,
        summary: &SummaryFile,
        report: Option<Result<ReportData, ResultsError>>,
        judged: &Judged<'_>,
    ) -> Written {
        let mut written = Written::default();
        let mut keep = |done: Result<(), SinkError>| match done {
            Ok(()) => true,
            Err(e) => {
                written.errors.push(e.to_string());
                false
            }
        };
        if let Some(file) = self.summary_json {
            keep(file.write(summary.to_json().as_bytes()));
        }
        if let Some(file) = self.summary_csv {
            keep(file.write(summary_csv(&summary.summary()).as_bytes()));
        }
        if let Some(file) = self.junit {
            keep(file.write(judged.junit(&summary.summary(), summary.start_ms).to_xml().as_bytes()));
        }
        if let Some(file) = self.summary_md {
            keep(file.write(judged.markdown(&summary.summary()).as_bytes()));
        }
        let mut page = None;
        match (self.report, report) {
            (Some((index, json)), Some(Ok(data))) => {
                let path = index.path().to_path_buf();
                let html = keep(index.write(report_html(&data).as_bytes()));
                if keep(json.write(data.summary.to_json().as_bytes())) && html {
                    page = Some(path);
                }
            }
            (Some(_), Some(Err(e))) => written.errors.push(e.to_string()),
            _ => {}
        }
        written.report = page;
        written
    }
}

/// At the end of a run: the summary JSON and CSV from the run's own statistics (µs precision), and the report
/// read back from the JTL just written, so it is the report `planrun report` of that JTL gives. The summary
/// JSON also has the run's dropped iterations and connection counts.
pub(super) fn after_run(
    stats: &Stats,
    jtl: &Path,
    files: SummaryFiles,
    (dropped, connections): (Option<crate::report::dropped::DroppedIterations>, Connections),
    judged: &Judged<'_>,
) -> Written {
    let report = files.report.is_some().then(|| read(jtl).map(|a| a.data()));
    let file = SummaryFile { dropped_iterations: dropped, connections: Some(connections), ..SummaryFile::new(stats) };
    files.write(&file, report, judged)
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
