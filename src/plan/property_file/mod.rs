//! Property files given on the command line, whose values `-D` could set: environment files (`--env-file`,
//! docker's rules) and Java properties files (`-p`, JMeter's `-q`, `java.util.Properties.load`'s rules). A
//! file is read whole before the plan, within bounds (a file, not a stream without end), and a mistake is
//! named by file and line without showing the value, which may be a password.

mod env;
mod java;

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most a property file may hold.
pub const MAX_FILE: u64 = 16 << 20;
/// The most one line may hold (a logical line of a properties file, continuations included).
pub const MAX_LINE: usize = 1 << 20;

/// Every `(line, (name, value))` of a file, or the line and what is wrong with it.
type Parsed = Result<Vec<(usize, (String, String))>, (usize, String)>;

/// How a property file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyFormat {
    /// `NAME=VALUE` lines, as docker's `--env-file` reads them.
    Env,
    /// A Java properties file, as `java.util.Properties.load` reads it.
    Java,
}

impl PropertyFormat {
    /// The option that gives such a file.
    pub fn option(self) -> &'static str {
        match self {
            Self::Env => "--env-file",
            Self::Java => "-p",
        }
    }
}

/// A property file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct PropertyFileError {
    /// The file, as given.
    pub path: PathBuf,
    /// The line (from 1) the problem is on, when it is on one.
    pub line: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
}

/// The `(name, value)` pairs of a property file, in the file's order (a name given twice is there twice:
/// the later one wins, as with `-D`).
pub fn read_property_file(path: &Path, format: PropertyFormat) -> Result<Vec<(String, String)>, PropertyFileError> {
    let fail = |line: Option<usize>, message: String| PropertyFileError { path: path.to_owned(), line, message };
    let bytes = read_bounded(path).map_err(|m| fail(None, m))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    if let Some(line) = long_line(bytes) {
        return Err(fail(
            Some(line),
            format!("the line is longer than {} MiB; expected NAME=VALUE lines", MAX_LINE >> 20),
        ));
    }
    let parsed = match format {
        PropertyFormat::Env => match std::str::from_utf8(bytes) {
            Ok(text) => env::parse(text, |name| std::env::var(name).ok()),
            Err(e) => {
                let line = bytes[..e.valid_up_to()].iter().filter(|b| **b == b'\n').count() + 1;
                Err((line, "the line is not UTF-8; expected UTF-8 text".to_string()))
            }
        },
        // As Properties.load(Reader) with a UTF-8 reader; a file that is not UTF-8 is read as
        // Properties.load(InputStream) reads every file, as ISO-8859-1 (JMeter's own properties files).
        PropertyFormat::Java => match std::str::from_utf8(bytes) {
            Ok(text) => java::parse(text),
            Err(_) => java::parse(&bytes.iter().map(|b| char::from(*b)).collect::<String>()),
        },
    };
    let pairs = parsed.map_err(|(line, message)| fail(Some(line), message))?;
    if let Some(line) = pairs.iter().find(|(_, (name, _))| name.is_empty()).map(|(line, _)| *line) {
        return Err(fail(Some(line), format!("a property without a name; expected {}", format.expected())));
    }
    Ok(pairs.into_iter().map(|(_, pair)| pair).collect())
}

impl PropertyFormat {
    fn expected(self) -> &'static str {
        match self {
            Self::Env => "NAME=VALUE",
            Self::Java => "name=value, name: value or name value",
        }
    }
}

/// The file's bytes, or why they cannot be had.
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err("is a directory; expected a file".to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("not found".to_string()),
        Err(e) => return Err(format!("cannot be read: {e}")),
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("holds more than {} MiB; a property file is smaller", MAX_FILE >> 20));
    }
    Ok(bytes)
}

/// The first line (from 1) longer than [`MAX_LINE`].
fn long_line(bytes: &[u8]) -> Option<usize> {
    bytes.split(|b| *b == b'\n').position(|l| l.len() > MAX_LINE).map(|i| i + 1)
}
