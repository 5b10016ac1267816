//! The merged file. A regular file is written under a temporary name next to it and renamed into place once
//! complete, so a merge that fails or is interrupted leaves no partial file (and an earlier merged file stays
//! as it was); a device or FIFO (`-o /dev/stdout`) is written as it is.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::error::MergeError;
use crate::sink::file::{open_output, sync_file};

/// Write buffer.
const BUFFER: usize = 1 << 20;

/// The merged file being written.
#[derive(Debug)]
pub struct Output {
    path: PathBuf,
    out: BufWriter<File>,
    /// Where a regular file is written until it is complete.
    temp: Option<PathBuf>,
}

impl Output {
    /// Creates the file (its missing parent directories too).
    pub fn create(path: &Path) -> Result<Self, MergeError> {
        let err = |source| MergeError::Output { path: path.display().to_string(), source };
        if fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            let (file, _) = open_output(path).map_err(err)?;
            return Ok(Output { path: path.to_path_buf(), out: BufWriter::with_capacity(BUFFER, file), temp: None });
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(err)?;
        let name = path.file_name().map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned());
        let temp = dir.join(format!(".{name}.planrun-merge-{}", std::process::id()));
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(&temp).map_err(err)?;
        Ok(Output { path: path.to_path_buf(), out: BufWriter::with_capacity(BUFFER, file), temp: Some(temp) })
    }

    /// Appends bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), MergeError> {
        self.out.write_all(bytes).map_err(|e| self.error(e))
    }

    /// Writes what is buffered, syncs a regular file and moves it into place.
    pub fn finish(mut self) -> Result<(), MergeError> {
        self.out.flush().map_err(|e| self.error(e))?;
        if let Some(temp) = self.temp.take() {
            let done = sync_file(self.out.get_ref()).and_then(|()| fs::rename(&temp, &self.path));
            if let Err(e) = done {
                let _ = fs::remove_file(&temp);
                return Err(self.error(e));
            }
        }
        Ok(())
    }

    fn error(&self, source: io::Error) -> MergeError {
        MergeError::Output { path: self.path.display().to_string(), source }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            let _ = fs::remove_file(temp);
        }
    }
}
