//! The file under the JTL and JSON lines sinks: records formatted in memory, handed to the file a batch at a
//! time, counted as they land, and cut back to the last whole record when a write fails.
//!
//! Any writable path is an output: a regular file (created or truncated, synced at the end, cut back after a
//! failed write), or a device, FIFO or terminal that already exists (opened as it is, never truncated nor
//! synced; a torn record there cannot be taken back).

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use super::SinkError;
use crate::claim::{Held, Opened};

/// How far an output got: its whole records so far (raised while a write is under way, so another thread
/// can tell how much of a stalled write landed), and whether the run gave up on it.
#[derive(Debug, Default)]
pub struct Landed {
    records: AtomicU64,
    abandoned: AtomicBool,
}

impl Landed {
    /// Whole records written so far.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Acquire)
    }

    /// Counts `n` more whole records.
    pub fn add(&self, n: u64) {
        if n > 0 {
            self.records.fetch_add(n, Ordering::AcqRel);
        }
    }

    /// The run gave up waiting: write nothing more (a write under way may still complete).
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    /// True once [`abandon`](Self::abandon) was called.
    pub fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }
}

/// Held while records go to a regular file, so that a process that exits at once (a second Ctrl-C) never
/// leaves half a record behind: see [`hold_writes`].
static WRITES: Mutex<()> = Mutex::new(());

/// Waits, at most `wait`, until no record is being written to a regular file, and returns a guard that keeps
/// it so; taken right before the process exits at once. `None` when a write did not end in time.
pub fn hold_writes(wait: Duration) -> Option<MutexGuard<'static, ()>> {
    let until = Instant::now() + wait;
    loop {
        match WRITES.try_lock() {
            Ok(held) => return Some(held),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// Opens `path` for writing results ([`crate::claim::open`]: a regular file is checked, locked and
/// truncated, its missing parent directories made; anything else that exists is opened as it is, a FIFO
/// waiting for its reader).
pub(crate) fn open_output(path: &Path) -> io::Result<Opened> {
    crate::claim::open(path)
}

/// Checks that records can follow the `kept` bytes of `file`: it starts with `header` (a JTL's, empty for
/// JSON lines) and ends with a line end, not inside a record a stopped writer left torn.
fn check_appendable(mut file: &File, header: &[u8], kept: u64) -> io::Result<()> {
    use std::io::Read;
    let mut first = vec![0; header.len()];
    let read = file.seek(SeekFrom::Start(0)).and_then(|_| file.read_exact(&mut first));
    if kept < header.len() as u64 || read.is_err() || first != header {
        let why = "its first line is not the header this run writes (another program's, or other columns)";
        return Err(crate::claim::cannot_append(why.into()));
    }
    let mut last = [0];
    file.seek(SeekFrom::Start(kept - 1)).and_then(|_| file.read_exact(&mut last))?;
    if last != *b"\n" {
        let why =
            "it ends inside a row (its writer was stopped part way); `planrun merge` reads it, leaving that row out";
        return Err(crate::claim::cannot_append(why.into()));
    }
    Ok(())
}

/// fsync, where the file system has it: a file that cannot be synced (EINVAL, ENOTSUP) is not an error.
pub(crate) fn sync_file(file: &File) -> io::Result<()> {
    match file.sync_all() {
        Err(e) if matches!(e.kind(), io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported) => Ok(()),
        other => other,
    }
}

/// Writes `bytes` to a new file at `path` (or any writable path, as [`open_output`]) and syncs it.
/// Bytes a pipe takes in one write whole or not at all (POSIX's PIPE_BUF: 4,096 on Linux).
const PIPE_BUF: usize = 4096;

pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut opened = open_output(path)?;
    opened.file.write_all(bytes)?;
    if opened.owned {
        sync_file(&opened.file)?;
    }
    Ok(())
}

/// A file written whole at the end (the summary JSON and CSV, the report's files), opened before: a path that
/// cannot be written is found before the run sends anything, not after it.
#[derive(Debug)]
pub struct WholeFile {
    file: Opened,
    path: PathBuf,
}

impl WholeFile {
    /// Opens `path` as [`open_output`] does (creating or truncating a regular file).
    pub fn open(path: &Path) -> Result<Self, SinkError> {
        let file = open_output(path).map_err(|source| SinkError::Io { path: name(path), source })?;
        Ok(WholeFile { file, path: path.to_path_buf() })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes`, and syncs a regular file.
    pub fn write(mut self, bytes: &[u8]) -> Result<(), SinkError> {
        let file = &mut self.file;
        let written = file.file.write_all(bytes).and_then(|()| if file.owned { sync_file(&file.file) } else { Ok(()) });
        written.map_err(|source| SinkError::Io { path: name(&self.path), source })
    }
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Cuts a regular file back to `len` bytes and goes on writing there.
fn cut_file(file: &File, len: u64) -> io::Result<()> {
    file.set_len(len)?;
    (&*file).seek(SeekFrom::Start(len)).map(drop)
}

/// Records written to `W` a batch at a time.
pub(crate) struct RecordFile<W: Write = File> {
    out: W,
    name: String,
    /// Syncs `out` (at the end).
    sync: fn(&W) -> io::Result<()>,
    /// Cuts `out` back to a length: only for regular files.
    cut: Option<fn(&W, u64) -> io::Result<()>>,
    /// Records formatted but not yet written.
    pending: Vec<u8>,
    /// Where each record in `pending` ends.
    ends: Vec<usize>,
    /// Bytes of whole records in `out`.
    whole: u64,
    landed: Arc<Landed>,
    /// Keeps the file claimed as an output while it is written.
    _held: Option<Held>,
}

/// Room for a batch of records, formatted before they go to the file in one write.
const BUFFER: usize = 256 * 1024;

impl RecordFile<File> {
    /// Opens `path` (as [`open_output`]) and writes `header` (which is not a record). With `append`, a
    /// regular file that holds records already keeps them (its header must be `header`) and the records
    /// go after them.
    pub fn create(path: &Path, header: &[u8], append: bool) -> Result<Self, SinkError> {
        let name = path.display().to_string();
        let error = |source| SinkError::Io { path: name.clone(), source };
        let opened = if append { crate::claim::open_appending(path) } else { open_output(path) };
        let Opened { file, owned, held, kept } = opened.map_err(error)?;
        let header = if kept > 0 {
            check_appendable(&file, header, kept).and_then(|()| (&file).seek(SeekFrom::End(0))).map_err(error)?;
            &b""[..]
        } else {
            header
        };
        let built = if owned {
            Self::build(file, name, sync_file, Some(cut_file), header)
        } else {
            Self::build(file, name, |_| Ok(()), None, header)
        };
        built.map(|file| RecordFile { _held: Some(held), whole: kept, ..file })
    }
}

impl<W: Write> RecordFile<W> {
    /// Any writer, never synced nor cut back; `name` names it in errors.
    pub fn new(out: W, name: String, header: &[u8]) -> Result<Self, SinkError> {
        Self::build(out, name, |_| Ok(()), None, header)
    }

    pub(crate) fn build(
        out: W,
        name: String,
        sync: fn(&W) -> io::Result<()>,
        cut: Option<fn(&W, u64) -> io::Result<()>>,
        header: &[u8],
    ) -> Result<Self, SinkError> {
        let mut pending = Vec::with_capacity(BUFFER);
        pending.extend_from_slice(header);
        let ends = if header.is_empty() { Vec::new() } else { vec![header.len()] };
        let landed = Arc::new(Landed::default());
        let mut file = RecordFile { out, name, sync, cut, pending, ends, whole: 0, landed, _held: None };
        file.commit()?;
        // The header is not a record.
        file.landed = Arc::new(Landed::default());
        Ok(file)
    }

    /// The buffer to format the next record into; end it with [`end_record`](Self::end_record).
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// The record formatted into [`buffer`](Self::buffer) is complete.
    pub fn end_record(&mut self) {
        self.ends.push(self.pending.len());
    }

    /// The count of whole records written, shared with other threads.
    pub fn landed(&self) -> Arc<Landed> {
        self.landed.clone()
    }

    /// What names the output in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes the records formatted so far, counting each as it lands. When a write fails, a regular file is
    /// cut back to its last whole record.
    pub fn commit(&mut self) -> Result<(), SinkError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let held = self.cut.is_some().then(|| WRITES.lock().unwrap_or_else(|p| p.into_inner()));
        let (mut done, mut landed) = (0, 0);
        let result = loop {
            if done == self.pending.len() {
                break self.out.flush();
            }
            if self.landed.is_abandoned() {
                break Err(io::Error::other("the run stopped waiting for this output"));
            }
            // Into a pipe, a write of at most PIPE_BUF bytes lands whole or not at all; a longer one that blocks
            // may have put part of its bytes in the pipe when the run gives up on it, and those rows would be
            // read but counted as unwritten.
            let end = if self.cut.is_some() { self.pending.len() } else { self.pending.len().min(done + PIPE_BUF) };
            match self.out.write(self.pending.get(done..end).unwrap_or_default()) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    done += n;
                    let before = landed;
                    landed += self.ends[landed..].iter().take_while(|&&end| end <= done).count();
                    self.landed.add((landed - before) as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let kept = match result {
            Ok(()) => self.pending.len(),
            Err(_) => landed.checked_sub(1).map_or(0, |last| self.ends[last]),
        };
        if let (Some(cut), true) = (self.cut, done > kept) {
            // Best effort: the write error is what gets reported.
            let _ = cut(&self.out, self.whole + kept as u64);
        }
        drop(held);
        self.whole += kept as u64;
        self.pending.clear();
        self.ends.clear();
        result.map_err(|source| self.error(source))
    }

    /// Writes what is pending and syncs a regular file.
    pub fn finish(&mut self) -> Result<(), SinkError> {
        self.commit()?;
        (self.sync)(&self.out).map_err(|source| self.error(source))
    }

    /// Writes what is pending and returns the writer.
    pub fn into_inner(mut self) -> Result<W, SinkError> {
        self.commit()?;
        Ok(self.out)
    }

    fn error(&self, source: io::Error) -> SinkError {
        SinkError::Io { path: self.name.clone(), source }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;
    use std::fs;

    use super::*;

    /// A writer that takes `budget` bytes, then writes part of the next buffer and fails, like a disk
    /// filling up; [`Filling::cut`] cuts it back as `File::set_len` would.
    pub(crate) struct Filling {
        pub data: RefCell<Vec<u8>>,
        pub budget: usize,
    }

    impl Filling {
        pub fn new(budget: usize) -> Self {
            Filling { data: RefCell::default(), budget }
        }

        pub fn cut(&self, len: u64) -> io::Result<()> {
            self.data.borrow_mut().truncate(len as usize);
            Ok(())
        }
    }

    impl Write for Filling {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let data = self.data.get_mut();
            let room = self.budget.saturating_sub(data.len());
            if room == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = room.min(buf.len());
            data.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn record(file: &mut RecordFile<impl Write>, text: &str) {
        file.buffer().extend_from_slice(text.as_bytes());
        file.end_record();
    }

    #[test]
    fn a_failed_write_keeps_the_records_that_landed_whole_and_counts_them() {
        let cut: fn(&Filling, u64) -> io::Result<()> = Filling::cut;
        let mut file =
            RecordFile::build(Filling::new(4 + 10), "full".into(), |_| Ok(()), Some(cut), b"h\nx\n").unwrap();
        assert_eq!(file.landed().records(), 0, "the header is not a record");
        record(&mut file, "aaaa\n");
        record(&mut file, "bbbb\n");
        record(&mut file, "cccc\n");
        let err = file.commit().unwrap_err().to_string();
        assert!(err.contains("cannot write full: disk full"), "{err}");
        assert_eq!(String::from_utf8(file.out.data.borrow().clone()).unwrap(), "h\nx\naaaa\nbbbb\n");
        assert_eq!(file.landed().records(), 2);
    }

    #[test]
    fn an_abandoned_output_writes_nothing_more() {
        let mut file = RecordFile::new(Vec::new(), "memory".into(), b"").unwrap();
        record(&mut file, "a\n");
        file.commit().unwrap();
        file.landed().abandon();
        record(&mut file, "b\n");
        assert!(file.commit().is_err());
        assert_eq!(file.out, b"a\n");
        assert_eq!(file.landed().records(), 1);
    }

    #[test]
    fn devices_are_outputs_that_are_neither_truncated_nor_synced() {
        let mut file = RecordFile::create(Path::new("/dev/null"), b"header\n", false).unwrap();
        record(&mut file, "a\n");
        file.finish().unwrap();
        assert_eq!(file.landed().records(), 1);
        write_whole(Path::new("/dev/null"), b"summary").unwrap();
    }

    #[test]
    fn a_regular_file_is_truncated_and_its_directories_made() {
        let dir = std::env::temp_dir().join(format!("planrun-file-{}", std::process::id()));
        let path = dir.join("a").join("b.txt");
        write_whole(&path, b"a longer text").unwrap();
        write_whole(&path, b"short").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "short");
        fs::remove_dir_all(&dir).unwrap();
    }
}
