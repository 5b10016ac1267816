//! Files a plan names (CSV data sets, multipart parts): only regular files are read, and a CSV row is read
//! only up to [`MAX_ROW`] bytes, so no file can make planrun wait forever or hold more than a row in memory.
//! Every regular file read here is noted as an input ([`crate::claim::note_input`]): no output may be one.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest CSV row (record) planrun reads: 1 MiB. A row is usually one line; a quoted field may hold
/// line breaks, and then the row is all of its lines.
pub const MAX_ROW: u64 = 1 << 20;

/// [`MAX_ROW`] as messages and the documentation write it.
pub const MAX_ROW_TEXT: &str = "1 MiB (1048576 bytes)";

/// The largest plan or stub file planrun reads: 16 MiB, far beyond any plan written by hand.
pub const MAX_PLAN: u64 = 16 << 20;

/// Reads a plan or stub file as text, refusing one larger than [`MAX_PLAN`]. Any readable file is accepted
/// (`planrun run <(generate-plan)` reads a pipe), but an endless one (`/dev/zero`) ends at the limit.
pub fn read_plan_text(path: &Path) -> io::Result<String> {
    let mut bytes = Vec::new();
    let file = File::open(path)?;
    crate::claim::note_input(path, &file.metadata()?);
    file.take(MAX_PLAN + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PLAN {
        let why = format!("{} is larger than the limit of 16 MiB for a plan or stub file", path.display());
        return Err(io::Error::new(io::ErrorKind::InvalidData, why));
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// Why `path` cannot be read as a file a plan names: `not found`, or what it is instead of a regular file.
pub fn why_unreadable(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            crate::claim::note_input(path, &m);
            None
        }
        Ok(m) => Some(format!("is {}, not a regular file", describe(m.file_type()))),
        Err(_) => Some("not found".to_string()),
    }
}

/// A path that names something other than a regular file.
#[derive(Debug, thiserror::Error)]
#[error("{} is {what}, not a regular file", path.display())]
pub struct NotAFile {
    /// The path as given.
    pub path: std::path::PathBuf,
    /// What it is: "a directory", "a FIFO (named pipe)", "a character device"...
    pub what: &'static str,
}

/// Opens `path` for reading if it is a regular file. A FIFO, a device (`/dev/zero`), a socket or a
/// directory is refused: reading one can block forever or never end. The type is checked on the opened file,
/// so it cannot change between the check and the reads; on unix the file is opened non-blocking, so that
/// opening a FIFO nobody writes to does not block either (the flag changes nothing for a regular file).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_file() {
        crate::claim::note_input(path, &meta);
        return Ok(file);
    }
    let what = describe(kind);
    Err(io::Error::new(io::ErrorKind::InvalidInput, NotAFile { path: path.to_path_buf(), what }))
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// A CSV row longer than [`MAX_ROW`].
#[derive(Debug, thiserror::Error)]
#[error("a row is longer than the limit of {MAX_ROW_TEXT}")]
pub struct RowTooLong;

impl RowTooLong {
    /// True when `e` (from a csv reader over a [`RowLimit`]) is this error.
    pub fn is(e: &csv::Error) -> bool {
        matches!(e.kind(), csv::ErrorKind::Io(io) if io.get_ref().is_some_and(|inner| inner.is::<RowTooLong>()))
    }
}

/// A reader under a csv reader that refuses to go on once the row being read passes [`MAX_ROW`] bytes.
///
/// Call [`start_row`](Self::start_row) before each record is read. The csv reader asks for more bytes only
/// when it has used up those it has, so every byte handed over since then belongs to the row being read: once
/// they pass the limit, the row does, and the read fails with [`RowTooLong`] instead of growing the row further.
/// No row within the limit is refused; a row is refused at the latest when it passes the limit by two buffers
/// of the csv reader (the part of it buffered before it started, and the last read), which bounds the memory
/// a row takes. For an exact limit, compare the csv reader's positions before and after each row too.
#[derive(Debug)]
pub struct RowLimit<R> {
    inner: R,
    /// Bytes handed to the csv reader so far.
    given: u64,
    /// `given` when the current row started.
    row_start: u64,
}

impl<R> RowLimit<R> {
    /// Wraps a reader.
    pub fn new(inner: R) -> Self {
        Self { inner, given: 0, row_start: 0 }
    }

    /// A row starts: the bytes read from now on count towards it.
    pub fn start_row(&mut self) {
        self.row_start = self.given;
    }

    /// The wrapped reader.
    #[cfg(test)]
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: Read> Read for RowLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.given - self.row_start > MAX_ROW {
            return Err(io::Error::new(io::ErrorKind::InvalidData, RowTooLong));
        }
        let n = self.inner.read(buf)?;
        self.given += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for RowLimit<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(to)?;
        self.row_start = self.given;
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_over_the_limit_stops_the_reader_and_says_so() {
        // Past the limit by more than the csv reader's buffer: the reader itself stops (the slack below one
        // buffer is for whoever reads to check with the row's position, as validation does).
        let long = "x".repeat(MAX_ROW as usize + (24 << 10));
        let text = format!("a,b\n1,2\n3,{long}\n5,6\n");
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .buffer_capacity(8 << 10)
            .from_reader(RowLimit::new(text.as_bytes()));
        let mut record = csv::ByteRecord::new();
        let mut rows = 0;
        let err = loop {
            reader.get_mut().start_row();
            match reader.read_byte_record(&mut record) {
                Ok(true) => rows += 1,
                Ok(false) => panic!("the long row was read"),
                Err(e) => break e,
            }
        };
        assert_eq!(rows, 2, "the rows before it are read");
        assert!(RowTooLong::is(&err), "{err}");
        assert!(err.to_string().contains("1 MiB"), "{err}");
        assert!(record.as_slice().len() as u64 <= MAX_ROW + (8 << 10), "the row in memory stayed bounded");
    }

    #[test]
    fn rows_up_to_the_limit_are_read() {
        let row = "y".repeat(MAX_ROW as usize - 1);
        let text = format!("{row}\n{row}\n");
        let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(RowLimit::new(text.as_bytes()));
        let mut record = csv::ByteRecord::new();
        for _ in 0..2 {
            reader.get_mut().start_row();
            assert!(reader.read_byte_record(&mut record).expect("a row within the limit"));
        }
    }

    #[test]
    fn only_regular_files_open() {
        let dir = std::env::temp_dir().join(format!("planrun-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let file = dir.join("f.csv");
        std::fs::write(&file, "a\n1\n").expect("write");
        assert!(open_regular(&file).is_ok());
        let err = open_regular(&dir).expect_err("a directory");
        assert!(err.to_string().contains("is a directory, not a regular file"), "{err}");
        if Path::new("/dev/zero").exists() {
            let err = open_regular(Path::new("/dev/zero")).expect_err("a device");
            assert!(err.to_string().contains("a character device"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
