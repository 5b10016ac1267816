//! `planrun report RESULTS [-o DIR]`: the summary table on stdout; `index.html` and `summary.json` in DIR.
//! Also what `planrun run --report DIR --summary-json FILE` writes at the end of a run.

use std::path::{Path, PathBuf};

use super::args::ReportArgs;
use super::exit;
use super::print::{errln, outln};
use crate::report::analysis::{Analysis, ReportData};
use crate::report::html::report_html;
use crate::report::results::{ResultsError, ResultsReader};
use crate::report::summary::render_table;
use crate::report::summary_json::{write_file, SummaryFile};
use crate::sink::stats::Stats;

pub(super) fn report(a: ReportArgs) -> i32 {
    let analysis = match read(&a.results) {
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
    let dir = a.output.unwrap_or_else(|| default_dir(&a.results));
    let written = write_report(&dir, &data).and_then(|()| match &a.summary_json {
        Some(path) => data.summary.write(path).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => Ok(()),
    });
    match written {
        Ok(()) => {
            errln!("planrun: report in {}", dir.join("index.html").display());
            exit::OK
        }
        Err(e) => {
            errln!("error: {e}");
            exit::ABORTED
        }
    }
}

/// Reads a results file in one pass.
fn read(path: &Path) -> Result<Analysis, ResultsError> {
    let mut reader = ResultsReader::open(path)?;
    Analysis::read(&mut reader)
}

/// `results/run.jtl` -> `results/run-report`.
fn default_dir(results: &Path) -> PathBuf {
    let stem = results.file_stem().map_or_else(|| "results".into(), |s| s.to_string_lossy().into_owned());
    results.with_file_name(format!("{stem}-report"))
}

/// Writes `index.html` and `summary.json` into `dir`, creating it.
pub(super) fn write_report(dir: &Path, data: &ReportData) -> Result<(), String> {
    let index = dir.join("index.html");
    write_file(&index, report_html(data).as_bytes()).map_err(|e| format!("cannot write {}: {e}", index.display()))?;
    let summary = dir.join("summary.json");
    data.summary.write(&summary).map_err(|e| format!("cannot write {}: {e}", summary.display()))
}

/// At the end of a run: the summary JSON from the run's own statistics (µs precision), and the report read
/// back from the JTL just written, so it is the report `planrun report` of that JTL gives.
pub(super) fn after_run(
    stats: &Stats,
    jtl: &Path,
    summary_json: Option<&Path>,
    report_dir: Option<&Path>,
) -> Result<(), String> {
    if let Some(path) = summary_json {
        SummaryFile::new(stats).write(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(dir) = report_dir {
        let data = read(jtl).map_err(|e| e.to_string())?.data();
        write_report(dir, &data)?;
        errln!("planrun: report in {}", dir.join("index.html").display());
    }
    Ok(())
}
