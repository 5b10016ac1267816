//! A stub file: its routes, its worker limit and its seed.

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::MessageFormatter;

use super::error::StubError;
use super::route::Route;

/// A stub target as written in its YAML file, checked while it is read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StubConfig {
    /// The routes, tried in order; a request no route matches answers 404 `Not found`.
    pub routes: Vec<Route>,
    /// How many requests are served at a time: 0 serves all at once, N queues the rest like a blocking server.
    #[serde(default, deserialize_with = "workers")]
    pub workers: usize,
    /// The seed of the stub's randomness (latency, errors); `None` draws one from the OS.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Latencies kept to within about 0.1 ms: each waiting request sleeps on a thread of its own instead of
    /// the async runtime's timer, which rounds every delay up to the next whole millisecond. For latency
    /// benchmarks (a thread per waiting request), not for embedding in big plans.
    #[serde(default)]
    pub precise_delays: bool,
}

/// The most `workers` a stub may have: far more requests at a time than one process can serve.
pub const MAX_WORKERS: usize = 1_000_000;

fn workers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = u64::deserialize(d)?;
    usize::try_from(n).ok().filter(|n| *n <= MAX_WORKERS).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "workers {n} is above the limit of {MAX_WORKERS}; 0 serves every request at once"
        ))
    })
}

/// Reads and checks the stub file at `path`.
pub fn load(path: &Path) -> Result<StubConfig, StubError> {
    let text = crate::files::read_plan_text(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => StubError::NotFound { path: path.to_path_buf() },
        _ => StubError::Read { path: path.to_path_buf(), source },
    })?;
    parse(&text, path)
}

/// Parses stub YAML `text`; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<StubConfig, StubError> {
    serde_saphyr::from_str::<StubConfig>(text).map_err(|e| {
        let e = e.without_snippet();
        let message = serde_saphyr::UserMessageFormatter.format_message(e);
        StubError::Parse {
            path: path.to_path_buf(),
            location: e.location().map(|l| (l.line(), l.column())),
            message: message.lines().next().unwrap_or("invalid stub file").trim().to_string(),
        }
    })
}
