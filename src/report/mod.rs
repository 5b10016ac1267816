//! Reports built from statistics and result files.
//!
//! [`results`] reads a JTL or JSON lines file back one record at a time; [`analysis`] gathers the summary
//! ([`crate::sink::stats::Stats`], the same code as a run's), the [`timeline`] and the [`failures`] in one pass;
//! [`html`] renders the self-contained report with [`svg`] charts; [`compare`] tests two results against each
//! other; [`dropped`] counts the open model's dropped iterations; [`summary_json`] is the `--summary-json` file, [`summary_csv`] the `--summary-csv` one, [`junit`] the `--junit` one, [`summary_md`] the `--summary-md` one, and
//! [`spreadsheet`] says when a JTL is too long for a spreadsheet.

pub mod analysis;
pub mod compare;
pub mod distribution;
pub mod dropped;
pub mod failures;
pub mod html;
pub mod junit;
pub mod mann_whitney;
pub mod reservoir;
pub mod results;
pub mod spreadsheet;
pub mod summary;
pub mod summary_csv;
pub mod summary_json;
pub mod summary_md;
pub mod svg;
pub mod thresholds;
pub mod timeline;
