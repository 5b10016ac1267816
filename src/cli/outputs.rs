//! A command's inputs noted and its outputs claimed, all of them before the first output is opened (and a
//! regular file truncated): an output that is an input, one file given as two outputs, or a file another
//! process is writing stops the command before it writes anything ([`crate::claim`]). Here: the exit code of
//! an output refused or that cannot be written.

use std::io;

use super::exit;
use crate::claim::Refused;
use crate::sink::SinkError;

pub(super) use crate::session::outputs::{claim_all, note_inputs};

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
