//! The merged file. A regular file is written under a temporary name beside it ([`Temp`]) and renamed into
//! place once complete, so a merge that fails or is interrupted leaves no partial file (and an earlier merged
//! file stays as it was). Symbolic links are followed: the file a link names is replaced, the link stays.
//! A device, a FIFO, or a file open as stdout (`-o /dev/stdout`, a `/proc/self/fd` link) is written in
//! place, as it is.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::error::MergeError;
use crate::claim::temp::Temp;
use crate::claim::{self, FileId, Held};
use crate::sink::file::sync_file;

/// Write buffer.
const BUFFER: usize = 1 << 20;

/// The merged file being written.
#[derive(Debug)]
pub struct Output {
    /// The path as given, for messages.
    path: PathBuf,
    out: BufWriter<Writer>,
    /// The file written or replaced, claimed (locked) as an output.
    held: Option<Held>,
    /// The file being replaced, when there is one.
    replaced: Option<FileId>,
}

/// Where the bytes go.
#[derive(Debug)]
enum Writer {
    /// In place.
    Direct(File),
    /// A temporary file, renamed to `target` once complete.
    Temp { temp: Temp, target: PathBuf },
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Writer::Direct(file) => file.write(buf),
            Writer::Temp { temp, .. } => temp.file_mut().write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Writer::Direct(file) => file.flush(),
            Writer::Temp { temp, .. } => temp.file_mut().flush(),
        }
    }
}

impl Output {
    /// Creates the file (its missing parent directories too).
    pub fn create(path: &Path) -> Result<Self, MergeError> {
        let err = |source| MergeError::Output { path: path.display().to_string(), source };
        let in_place = fs::metadata(path).is_ok_and(|m| !m.is_file() || claim::is_stdio(&m));
        let target = if in_place { None } else { claim::replaced_path(path).map_err(err)? };
        let Some(target) = target else {
            let opened = claim::open(path).map_err(err)?;
            let out = BufWriter::with_capacity(BUFFER, Writer::Direct(opened.file));
            return Ok(Output { path: path.to_path_buf(), out, held: Some(opened.held), replaced: None });
        };
        let (replaced, held) = claim_replaced(&target).map_err(err)?.unzip();
        claim::make_parent(&target).map_err(err)?;
        let temp = Temp::beside(&target).map_err(err)?;
        let out = BufWriter::with_capacity(BUFFER, Writer::Temp { temp, target });
        Ok(Output { path: path.to_path_buf(), out, held, replaced })
    }

    /// Appends bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), MergeError> {
        self.out.write_all(bytes).map_err(|e| self.error(e))
    }

    /// Writes what is buffered, syncs a regular file and moves it into place.
    pub fn finish(mut self) -> Result<(), MergeError> {
        self.out.flush().map_err(|e| self.error(e))?;
        let name = self.path.display().to_string();
        let writer =
            self.out.into_inner().map_err(|e| MergeError::Output { path: name.clone(), source: e.into_error() })?;
        let Writer::Temp { temp, target } = writer else { return Ok(()) };
        let err = |source| MergeError::Output { path: name.clone(), source };
        sync_file(temp.file()).map_err(err)?;
        // The file the merge replaces may have been created, or replaced, since the merge began: it is
        // claimed (its lock taken) now, so that a run writing it is refused rather than cut off.
        let _now = match FileId::at(&target) {
            Some(now) if Some(now) != self.replaced => claim_replaced(&target).map_err(err)?,
            _ => None,
        };
        temp.rename_to(&target).map_err(err)?;
        drop(self.held);
        Ok(())
    }

    fn error(&self, source: io::Error) -> MergeError {
        MergeError::Output { path: self.path.display().to_string(), source }
    }
}

/// Claims the regular file at `target` that the merged file will replace, when there is one.
fn claim_replaced(target: &Path) -> io::Result<Option<(FileId, Held)>> {
    let Ok(file) = claim::options_nonblocking().write(true).open(target) else { return Ok(None) };
    let meta = file.metadata()?;
    let Some(id) = FileId::of(&meta).filter(|_| meta.is_file()) else { return Ok(None) };
    Ok(Some((id, claim::take_existing(&file, target)?)))
}
