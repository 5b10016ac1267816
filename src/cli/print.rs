//! Every line the command line prints goes through here. A closed pipe (`planrun run PLAN | head -1`), a
//! closed terminal (SIGHUP) or a full disk behind stdout or stderr is no reason to stop or panic: what cannot
//! be printed is dropped, and the command goes on to write its files and return its exit code.

use std::fmt;
use std::io::Write;

/// Writes to stdout and flushes; errors are ignored.
pub(crate) fn stdout(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| out.flush());
}

/// Writes to stderr; errors are ignored.
pub(crate) fn stderr(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// A writer that drops what it cannot write, as the macros below do, for library calls that write to stdout.
pub(crate) struct Lossy<W>(pub W);

impl<W: Write> Write for Lossy<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

/// `println!` that never panics: see the module.
macro_rules! outln {
    () => { $crate::cli::print::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::print::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that never panics.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::print::stdout(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::cli::print::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::print::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::print::stderr(format_args!($($arg)*)) };
}

pub(crate) use {err, errln, out, outln};
