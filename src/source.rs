//! A plan file as read from disk, and positions inside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One source file: its path as the user named it and its text.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as given on the command line (or resolved relative to a plan).
    pub path: PathBuf,
    /// The whole text of the file.
    pub text: Arc<str>,
}

impl Source {
    /// A source from a path and its text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        Self { path: path.into(), text: text.into() }
    }

    /// The display name of the file.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The text of line `line` (1-based), without its line ending.
    pub fn line(&self, line: u32) -> Option<&str> {
        self.text.lines().nth(line.checked_sub(1)? as usize)
    }

    /// The directory the file lives in, for resolving relative paths in it.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// A position in a source: 1-based line and column (in characters), with the length to underline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Span {
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 1-based column in characters; 0 when unknown.
    pub col: u32,
    /// How many characters to underline (at least 1 when rendered).
    pub len: u32,
}

impl Span {
    /// A span at `line:col` covering `len` characters.
    pub const fn new(line: u32, col: u32, len: u32) -> Self {
        Self { line, col, len }
    }

    /// The same position, underlining `len` characters.
    pub const fn with_len(self, len: u32) -> Self {
        Self { len, ..self }
    }

    /// The span moved `chars` characters to the right on the same line.
    pub const fn shifted(self, chars: u32) -> Self {
        Self { col: self.col + chars, ..self }
    }
}
