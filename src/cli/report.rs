//! `planrun report RESULTS [-o DIR]`: the summary table on stdout; `index.html` and `summary.json` in DIR.

use std::path::{Path, PathBuf};

use super::args::ReportArgs;
use super::exit;
use super::print::{errln, outln};
use crate::report::analysis::Analysis;
use crate::report::results::{Format, ResultsReader};
use crate::report::spreadsheet::TooManyRows;
use crate::report::summary::render_table;
use crate::session::{Judged, SummaryFiles, SummaryPaths, Written};

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
    let paths = SummaryPaths {
        summary_json: a.summary.summary_json.as_deref(),
        summary_csv: a.summary.summary_csv.as_deref(),
        report_dir: Some(&dir),
        ..SummaryPaths::default()
    };
    let opened = SummaryFiles::claim_and_open(&[], paths);
    let outputs = match opened {
        Ok((_, outputs)) => outputs,
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
    if print_written(&outputs.write(&summary, Some(Ok(data)), &Judged::default())) {
        exit::ABORTED
    } else {
        exit::OK
    }
}

/// Says when a JTL has more rows than a spreadsheet holds.
fn warn_too_many_rows(jtl: &str, rows: u64) {
    if let Some(over) = TooManyRows::check(jtl, rows) {
        errln!("planrun: warning: {over}");
    }
}

/// `results/run.jtl` -> `results/run-report`.
fn default_dir(results: &Path) -> PathBuf {
    let stem = results.file_stem().map_or_else(|| "results".into(), |s| s.to_string_lossy().into_owned());
    results.with_file_name(format!("{stem}-report"))
}

/// Says where the report is and what could not be written; true when something could not.
pub(super) fn print_written(written: &Written) -> bool {
    if let Some(page) = &written.report {
        errln!("planrun: report in {}", page.display());
    }
    for e in &written.errors {
        errln!("error: {e}");
    }
    !written.errors.is_empty()
}
