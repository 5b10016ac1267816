//! The files a command reads and the files it writes, told apart by device and inode with links followed
//! (a symbolic link, a hard link or another spelling of a path is the same file). Every output goes through
//! here before a byte is written to it:
//!
//! - an output that is an input (noted by [`note_input`]: the file readers in `files.rs` note the plan, its
//!   data, body, TLS and stub files and an import's source as they are read; the commands note the result
//!   files they read) is refused: writing it would destroy what is being read;
//! - an output that is already another output of this process is refused;
//! - a regular file is locked (an exclusive advisory lock, `flock`, never waited for) for the rest of the
//!   process's life, so a second planrun writing it at the same time is refused instead of interleaving its
//!   rows. The lock is released when the process ends, however it ends.
//!
//! [`claim`] does this for a file that exists without writing it, so a command can claim all its outputs
//! before it opens (truncates) the first; [`open`] opens an output (claiming it if it was not) and truncates
//! a regular file. Devices, FIFOs and terminals are written as they are: neither checked, locked nor
//! truncated. A file open as planrun's stdout or stderr (`-o /dev/stdout` with stdout redirected to a file)
//! is written through that open file, at its offset, never truncated: what planrun prints there and the
//! rows stay in order.

pub mod temp;

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// A file as the file system knows it: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The file `meta` describes; `None` where the platform does not say.
    pub fn of(meta: &Metadata) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileId { dev: meta.dev(), ino: meta.ino() })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }

    /// The file at `path`, links followed; `None` when there is none.
    pub fn at(path: &Path) -> Option<Self> {
        fs::metadata(path).ok().as_ref().and_then(Self::of)
    }
}

/// Why an output is refused. Inside the [`io::Error`] that [`claim`] and [`open`] return.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The output is a file the command reads.
    #[error("it is the input {input} (one file, links followed): writing it would destroy what is read")]
    IsInput {
        /// The input, as it was named when read.
        input: String,
    },
    /// The output is already another output of this command.
    #[error("it is also another output ({other}); give each output its own file")]
    TwoOutputs {
        /// The other output, as it was named.
        other: String,
    },
    /// `--append` to a file whose rows cannot be followed by this run's.
    #[error("cannot add rows to it: {why}")]
    CannotAppend {
        /// What in the file stops the append: its header, or a last row cut short.
        why: String,
    },
    /// Another process holds the file's lock.
    #[error("another process is writing it (it holds a lock on it: another planrun with the same output?)")]
    Busy,
}

impl Refused {
    /// The refusal inside `e`, if that is why it failed.
    pub fn of(e: &io::Error) -> Option<&Refused> {
        e.get_ref().and_then(|inner| inner.downcast_ref::<Refused>())
    }

    /// True when the command line is at fault (an input or one file given as output twice), false when
    /// another process is.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Refused::Busy)
    }

    fn into_error(self) -> io::Error {
        let kind = if self.is_usage() { io::ErrorKind::InvalidInput } else { io::ErrorKind::ResourceBusy };
        io::Error::new(kind, self)
    }
}

/// Where an output stands in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Claimed by [`claim`], not opened yet.
    Claimed,
    /// Open for writing.
    Open,
    /// Written and closed (its lock still held).
    Closed,
}

/// A regular file this process writes.
#[derive(Debug)]
struct Output {
    id: FileId,
    name: String,
    state: State,
    /// A descriptor of the locked open file, kept until the process ends so the lock is held that long.
    _lock: Option<File>,
}

/// The files read and written so far.
#[derive(Debug)]
struct Registry {
    inputs: Vec<(FileId, PathBuf)>,
    outputs: Vec<Output>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { inputs: Vec::new(), outputs: Vec::new() });

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Notes that the file `meta` describes, read as `path`, is an input. Only regular files are noted.
pub fn note_input(path: &Path, meta: &Metadata) {
    let Some(id) = FileId::of(meta).filter(|_| meta.is_file()) else { return };
    let mut registry = registry();
    if !registry.inputs.iter().any(|(known, _)| *known == id) {
        registry.inputs.push((id, path.to_path_buf()));
    }
}

/// Notes the file at `path` (links followed) as an input, when there is one.
pub fn note_input_path(path: &Path) {
    if let Ok(meta) = fs::metadata(path) {
        note_input(path, &meta);
    }
}

/// Claims the output at `path` before anything is written: when it is a regular file that exists, refuses
/// it if it is an input, another output, or locked by another process, and locks it. Returns the length it
/// has (what writing it will replace). Nothing to claim (`Ok(None)`) when there is no such file yet, or it
/// is not a regular file, or it cannot be opened: [`open`] then says why.
pub fn claim(path: &Path) -> io::Result<Option<u64>> {
    // Non-blocking: a FIFO without a reader is not waited for here.
    let Ok(file) = options_nonblocking().write(true).open(path) else { return Ok(None) };
    let meta = file.metadata()?;
    if !meta.is_file() || shares_stdio(&meta).is_some() {
        return Ok(None);
    }
    take(&file, &meta, path, State::Claimed)?;
    Ok(Some(meta.len()))
}

/// An output opened by [`open`] or [`take_existing`]: while it is held, the same file cannot be opened as
/// another output.
#[derive(Debug)]
pub struct Held(Option<FileId>);

impl Drop for Held {
    fn drop(&mut self) {
        let Some(id) = self.0 else { return };
        if let Some(out) = registry().outputs.iter_mut().find(|o| o.id == id && o.state == State::Open) {
            out.state = State::Closed;
        }
    }
}

/// An output, open for writing.
#[derive(Debug)]
pub struct Opened {
    /// The file.
    pub file: File,
    /// A regular file of its own: truncated, locked, synced at the end and cut back after a failed write.
    /// False for a device, a FIFO, a terminal or planrun's own stdout or stderr.
    pub owned: bool,
    /// Keeps the output claimed while it is written.
    pub held: Held,
    /// The bytes it holds, kept: with [`open_appending`], a regular file's length; else 0.
    pub kept: u64,
}

/// Opens `path` for writing results, its missing parent directories made. A regular file is claimed (as
/// [`claim`] does, unless it was) and truncated; anything else that exists is opened as it is (a FIFO waits
/// for its reader); a file open as stdout or stderr is written through it.
pub fn open(path: &Path) -> io::Result<Opened> {
    open_with(path, false)
}

/// [`open`], but a regular file keeps what it holds (also opened for reading, so it can be checked): the
/// caller writes after it.
pub fn open_appending(path: &Path) -> io::Result<Opened> {
    open_with(path, true)
}

fn open_with(path: &Path, append: bool) -> io::Result<Opened> {
    make_parent(path)?;
    // Not truncated on open: only a regular file is, once it is known to be one and claimed.
    let file = OpenOptions::new().read(append).write(true).create(true).truncate(false).open(path)?;
    let meta = file.metadata()?;
    if let Some(stdio) = shares_stdio(&meta) {
        return Ok(Opened { file: stdio, owned: false, held: Held(None), kept: 0 });
    }
    if !meta.is_file() {
        return Ok(Opened { file, owned: false, held: Held(None), kept: 0 });
    }
    let held = take(&file, &meta, path, State::Open)?;
    // The length once claimed: no other planrun changes it now.
    let kept = if append { file.metadata()?.len() } else { 0 };
    if !append {
        file.set_len(0)?;
    }
    Ok(Opened { file, owned: true, held, kept })
}

/// Refuses to append to the file, for `why`.
pub fn cannot_append(why: String) -> io::Error {
    Refused::CannotAppend { why }.into_error()
}

/// Claims and holds the regular file `file` (opened from `path`) as an output that will be replaced whole
/// rather than written (a merge's output): the checks and the lock of [`open`], without truncating it.
pub fn take_existing(file: &File, path: &Path) -> io::Result<Held> {
    take(file, &file.metadata()?, path, State::Open)
}

/// True when `meta` is the file open as this process's stdout or stderr.
pub fn is_stdio(meta: &Metadata) -> bool {
    meta.is_file() && shares_stdio(meta).is_some()
}

/// The checks and the lock, for a regular file, and its new state.
fn take(file: &File, meta: &Metadata, path: &Path, to: State) -> io::Result<Held> {
    let Some(id) = FileId::of(meta) else { return Ok(Held(None)) };
    let mut registry = registry();
    if let Some(out) = registry.outputs.iter_mut().find(|o| o.id == id) {
        // A file claimed first is opened once; one written and closed may be written again.
        let again = matches!((out.state, to), (State::Claimed, State::Open) | (State::Closed, _));
        if !again {
            return Err(Refused::TwoOutputs { other: out.name.clone() }.into_error());
        }
        out.state = to;
        return Ok(Held((to == State::Open).then_some(id)));
    }
    // An input still there: one deleted since it was read may have left its inode to a new file.
    if let Some((_, input)) = registry.inputs.iter().find(|(known, name)| *known == id && FileId::at(name) == Some(id))
    {
        return Err(Refused::IsInput { input: input.display().to_string() }.into_error());
    }
    let lock = match file.try_lock() {
        Ok(()) => file.try_clone().ok(),
        Err(std::fs::TryLockError::WouldBlock) => return Err(Refused::Busy.into_error()),
        // A file system without locks: written unlocked (see docs/results.md).
        Err(std::fs::TryLockError::Error(_)) => None,
    };
    registry.outputs.push(Output { id, name: path.display().to_string(), state: to, _lock: lock });
    Ok(Held((to == State::Open).then_some(id)))
}

/// Opening options that never block on a FIFO (where the platform has the flag).
pub(crate) fn options_nonblocking() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options
}

/// The file open as stdout or stderr (a descriptor of its own sharing the offset) when it is `meta`'s.
fn shares_stdio(meta: &Metadata) -> Option<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let id = FileId::of(meta)?;
        let streams = [io::stdout().as_fd().try_clone_to_owned(), io::stderr().as_fd().try_clone_to_owned()];
        streams
            .into_iter()
            .flatten()
            .map(File::from)
            .find(|f| f.metadata().ok().is_some_and(|m| m.is_file() && FileId::of(&m) == Some(id)))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Makes the missing directories above `path`.
pub fn make_parent(path: &Path) -> io::Result<()> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else { return Ok(()) };
    fs::create_dir_all(dir).map_err(|e| match e.kind() {
        // What mkdir says when the directory's path names a file: "File exists" would mislead.
        io::ErrorKind::AlreadyExists => {
            io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a directory", dir.display()))
        }
        _ => e,
    })
}

/// The path a file replacing `path` must take so that symbolic links stay links: the last link's target,
/// links to links followed. `None` when the path goes through `/proc` (`/dev/stdout`, `/dev/fd/3`): those
/// links name open files, not places, and are written in place.
pub fn replaced_path(path: &Path) -> io::Result<Option<PathBuf>> {
    let mut at = path.to_path_buf();
    // As many links as Linux follows (its ELOOP limit).
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                if at.starts_with("/proc") {
                    return Ok(None);
                }
                let to = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok((!at.starts_with("/proc")).then_some(at)),
        }
    }
    Err(io::Error::other(format!("{}: too many levels of symbolic links", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("planrun-claim-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_input_hard_linked_is_refused_as_an_output() {
        let dir = dir("input");
        let input = dir.join("in.csv");
        fs::write(&input, "a\n").unwrap();
        note_input_path(&input);
        let link = dir.join("link.csv");
        fs::hard_link(&input, &link).unwrap();
        let err = open(&link).unwrap_err();
        assert!(matches!(Refused::of(&err), Some(Refused::IsInput { .. })), "{err}");
        assert_eq!(fs::read_to_string(&input).unwrap(), "a\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn one_file_is_one_output_at_a_time_and_may_be_written_again() {
        let dir = dir("twice");
        let out = dir.join("out.txt");
        fs::write(&out, "old").unwrap();
        assert_eq!(claim(&out).unwrap(), Some(3));
        let first = open(&out).unwrap();
        let err = open(&dir.join(".").join("out.txt")).unwrap_err();
        assert!(matches!(Refused::of(&err), Some(Refused::TwoOutputs { .. })), "{err}");
        drop(first);
        assert!(open(&out).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn links_resolve_to_the_file_they_name_and_proc_links_stay_in_place() {
        let dir = dir("links");
        let target = dir.join("target.jtl");
        std::os::unix::fs::symlink("target.jtl", dir.join("a")).unwrap();
        std::os::unix::fs::symlink(dir.join("a"), dir.join("b")).unwrap();
        assert_eq!(replaced_path(&dir.join("b")).unwrap(), Some(target.clone()));
        assert_eq!(replaced_path(&target).unwrap(), Some(target));
        assert_eq!(replaced_path(Path::new("/proc/self/fd/1")).unwrap(), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
