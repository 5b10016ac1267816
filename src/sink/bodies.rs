//! Failed responses' bodies as files (`--failed-bodies DIR`): one file a failed sample whose body was kept,
//! named after the sample's JTL row, holding the body's first bytes with secrets masked.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Sink, SinkError};
use crate::sample::Sample;

/// Most characters of a label in a file name.
const LABEL_CHARS: usize = 80;

/// Most bytes of a file name's stem with its data rows (file systems allow 255 bytes a name).
const NAME_BYTES: usize = 200;

/// Names tried for one body before giving up (`NAME.body`, `NAME-2.body`, ...).
const ATTEMPTS: u32 = 1000;

/// Writes each failed sample's kept body to a file of its own in a directory.
///
/// The file is `<timeStamp>-<threadName>-<label>.body`, the three fields of the sample's JTL row, with each
/// character other than an ASCII letter, digit, `.`, `_` or `-` written as `_` (the label cut to 80); the
/// data rows the sample's iteration took follow the label as `-<set>.<row>` (`-recipients.7`), as many as fit
/// in [`NAME_BYTES`]; when that name is taken, `-2`, `-3`, ... is added before `.body`. Files already in the
/// directory are never overwritten.
pub struct BodyFiles {
    dir: PathBuf,
    name: String,
}

impl BodyFiles {
    /// Makes the directory (and its parents) and checks that files can be created in it.
    pub fn create(dir: &Path) -> Result<Self, SinkError> {
        let name = dir.display().to_string();
        let error = |source| SinkError::Io { path: name.clone(), source };
        fs::create_dir_all(dir).map_err(error)?;
        let probe = dir.join(format!(".planrun-probe-{}", std::process::id()));
        OpenOptions::new().write(true).create_new(true).open(&probe).map_err(error)?;
        fs::remove_file(&probe).map_err(error)?;
        Ok(BodyFiles { dir: dir.to_path_buf(), name })
    }

    fn write_one(&self, s: &Sample, body: &[u8], rows: &[(Arc<str>, u64)]) -> io::Result<()> {
        let t = &s.thread;
        let label: String = s.label.chars().take(LABEL_CHARS).collect();
        let mut stem = safe(&format!("{}-{} {}-{}-{label}", s.start_ms, t.group, t.group_no, t.vu));
        for (set, row) in rows {
            let part = safe(&format!("-{set}.{row}"));
            if stem.len() + part.len() > NAME_BYTES {
                break;
            }
            stem.push_str(&part);
        }
        for n in 1..=ATTEMPTS {
            let file = if n == 1 { format!("{stem}.body") } else { format!("{stem}-{n}.body") };
            match OpenOptions::new().write(true).create_new(true).open(self.dir.join(file)) {
                Ok(mut f) => return f.write_all(body).and_then(|()| f.flush()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!("every name for `{stem}.body` is taken")))
    }
}

/// `text` with each character other than an ASCII letter, digit, `.`, `_` or `-` as `_`.
fn safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect()
}

impl Sink for BodyFiles {
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError> {
        for s in batch {
            if let Some((body, rows)) = s.detail.as_ref().and_then(|d| Some((d.body.as_ref()?, &d.rows))) {
                self.write_one(s, &body.bytes, rows)
                    .map_err(|source| SinkError::Io { path: self.name.clone(), source })?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        // Each file was flushed when written; the directory itself is synced where it can be.
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}
