//! `planrun schema`: the plan format's JSON Schema on stdout.

use std::io::Write;

use super::exit;
use super::print::errln;

pub(super) fn schema() -> i32 {
    let text = serde_json::to_string_pretty(&crate::plan::plan_schema()).expect("a JSON value always serializes");
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        // `planrun schema | head` closes the pipe early; that is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            errln!("error: cannot write the schema: {e}");
            exit::ABORTED
        }
    }
}
