//! Why a merge cannot be done, and what it says while it goes on.

use std::fmt;
use std::io;

use crate::report::results::ResultsError;

/// Why the inputs cannot be merged, or the merged file cannot be written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// An input does not exist.
    #[error("{path}: no such file")]
    Missing { path: String },
    /// An input is a directory, a FIFO, a device...: merge reads regular files.
    #[error("{path} is not a regular file (it is {kind}); merge reads result files")]
    NotRegular {
        path: String,
        /// What it is, for the message ("a directory").
        kind: &'static str,
    },
    /// The same file given twice.
    #[error("{path} is given twice (as {first}); each file's rows would be counted twice")]
    Twice {
        /// The second mention.
        path: String,
        /// The first mention.
        first: String,
    },
    /// The output is one of the inputs.
    #[error("the output {path} is also an input; write the merged rows to another file")]
    OutputIsInput { path: String },
    /// An input cannot be read, or holds a record that cannot be read.
    #[error(transparent)]
    Read(#[from] ResultsError),
    /// JTL and JSON lines inputs together.
    #[error("{other} is {other_format} but {first} is {first_format}: merge files of one format (all JTL, or all JSON lines)")]
    MixedFormats {
        /// The first input read.
        first: String,
        /// Its format.
        first_format: &'static str,
        /// The input that differs.
        other: String,
        /// Its format.
        other_format: &'static str,
    },
    /// JTL inputs whose header lines differ: rows are copied as they are, so their columns must be the same.
    #[error("{other}: {what} (rows are copied as they are, so every JTL must have the same header line)")]
    Header {
        /// The input that differs from the first.
        other: String,
        /// How it differs, naming the first.
        what: String,
    },
    /// Every input was empty.
    #[error("nothing to merge: no input holds a header or a row")]
    NothingToMerge,
    /// With `--plan`: a row whose label the plan cannot have written.
    #[error(
        "{path}:{line}: label `{label}` is no step, transaction or group of {plan}: this file comes from another \
         plan (or another version of it)"
    )]
    ForeignLabel {
        path: String,
        /// The row's line.
        line: u64,
        label: String,
        /// The plan file.
        plan: String,
    },
    /// The merged file cannot be written.
    #[error("cannot write {path}: {source}")]
    Output {
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Stopped by a signal; nothing was written.
    #[error("interrupted: {path} was not written")]
    Interrupted { path: String },
    /// planrun failed inside the merge (a bug).
    #[error("planrun failed while merging {path}: {what} (a bug, please report it)")]
    Internal {
        path: String,
        /// What happened.
        what: String,
    },
}

/// Something merge dealt with and says so: the merge goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// An input without a byte of content: skipped.
    Empty { path: String },
    /// The file ends inside its header line: it holds no row. Skipped.
    CutHeader { path: String },
    /// The file ends inside its last row (the run writing it was cut off): that row is left out.
    CutRow {
        path: String,
        /// The line the row starts on.
        line: u64,
    },
    /// Rows that came too far behind rows that started after them to be put in order (see [`super`]).
    Late {
        path: String,
        /// How many.
        rows: u64,
        /// The most any of them started before a row already written, ms.
        max_ms: u64,
        /// The look-behind window, MiB.
        window_mib: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Empty { path } => write!(f, "{path} is empty: skipped"),
            Warning::CutHeader { path } => write!(f, "{path} ends inside its header line, so it holds no row: skipped"),
            Warning::CutRow { path, line } => write!(
                f,
                "{path}:{line}: the last row is cut off (the file ends before its line end): left out; the rows \
                 before it are merged"
            ),
            Warning::Late { path, rows, max_ms, window_mib } => write!(
                f,
                "{path}: {rows} row(s) came more than the look-behind window ({window_mib} MiB) after rows that \
                 started later, and were written out of timeStamp order (by up to {max_ms} ms); a larger \
                 --window-mib puts them in order"
            ),
        }
    }
}
