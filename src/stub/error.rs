//! What can go wrong while loading or starting a stub.

use std::net::SocketAddr;
use std::path::PathBuf;

/// An error from loading a stub file or starting its server.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// The stub file does not exist.
    #[error("stub file {} not found", path.display())]
    NotFound {
        /// The file that was asked for.
        path: PathBuf,
    },
    /// The stub file exists but could not be read.
    #[error("cannot read stub file {}: {source}", path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The stub file is not valid YAML or does not follow the stub format.
    #[error("{}: {message}", place(path, *location))]
    Parse {
        /// The file the problem is in.
        path: PathBuf,
        /// Line and column (both from 1) of the problem, when the parser knows them.
        location: Option<(u64, u64)>,
        /// What is wrong, in one line.
        message: String,
    },
    /// The server could not listen on the address it was given.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why listening failed.
        source: std::io::Error,
    },
}

/// `file:line:col`, or just `file` when the position is unknown.
fn place(path: &std::path::Path, location: Option<(u64, u64)>) -> String {
    match location {
        Some((line, column)) => format!("{}:{line}:{column}", path.display()),
        None => path.display().to_string(),
    }
}
