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
    /// The byte offset where each line starts, found once, so that a line is found in constant time however
    /// many problems point into the file.
    line_starts: Arc<[usize]>,
}

impl Source {
    /// A source from a path and its text.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Self { path: path.into(), text, line_starts }
    }

    /// The display name of the file.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The text of line `line` (1-based), without its line ending, as `str::lines` gives it.
    pub fn line(&self, line: u32) -> Option<&str> {
        let i = usize::try_from(line.checked_sub(1)?).ok()?;
        let start = *self.line_starts.get(i)?;
        if start >= self.text.len() {
            // The empty "line" after a final line break is not a line.
            return None;
        }
        let (end, broken) = match self.line_starts.get(i + 1) {
            Some(next) => (next - 1, true),
            None => (self.text.len(), false),
        };
        let text = &self.text[start..end];
        Some(if broken { text.strip_suffix('\r').unwrap_or(text) } else { text })
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

#[cfg(test)]
mod tests {
    use super::Source;
    use proptest::prelude::*;

    proptest! {
        /// Lines are found as `str::lines` finds them, whatever the line endings.
        #[test]
        fn lines_are_those_of_str_lines(text in "[a\r\n\u{e9}]{0,30}") {
            let source = Source::new("f.yaml", text.as_str());
            let lines: Vec<&str> = text.lines().collect();
            for n in 0..lines.len() as u32 + 3 {
                prop_assert_eq!(source.line(n), n.checked_sub(1).and_then(|i| lines.get(i as usize).copied()));
            }
        }
    }
}
