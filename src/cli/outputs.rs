//! A command's inputs noted and its outputs claimed, all of them before the first output is opened (and a
//! regular file truncated): an output that is an input, one file given as two outputs, or a file another
//! process is writing stops the command before it writes anything ([`crate::claim`]).

use std::io;
use std::path::{Path, PathBuf};

use super::exit;
use crate::claim::{self, Refused};
use crate::sink::SinkError;

/// Notes the files a command reads that do not go through [`crate::files`] (result files).
pub(super) fn note_inputs<'a>(paths: impl IntoIterator<Item = &'a Path>) {
    for path in paths {
        claim::note_input_path(path);
    }
}

/// Claims every output given; for each, the length of the regular file it will replace (`None`: a new file,
/// or not a regular file).
pub(super) fn claim_all<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<Vec<Option<u64>>, SinkError> {
    paths
        .into_iter()
        .map(|path| claim::claim(path).map_err(|source| SinkError::Io { path: path.display().to_string(), source }))
        .collect()
}

/// The files `--report DIR` writes.
pub(super) fn report_files(dir: &Path) -> [PathBuf; 2] {
    [dir.join("index.html"), dir.join("summary.json")]
}

/// The exit code of an output that cannot be written: 2 when the command line is at fault (an output that
/// is an input, one file as two outputs), 3 otherwise.
pub(super) fn exit_code(e: &io::Error) -> i32 {
    match Refused::of(e) {
        Some(refused) if refused.is_usage() => exit::BAD_INPUT,
        _ => exit::ABORTED,
    }
}

/// [`exit_code`] of a sink's error.
pub(super) fn sink_exit_code(e: &SinkError) -> i32 {
    match e {
        SinkError::Io { source, .. } => exit_code(source),
    }
}
