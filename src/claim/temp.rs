//! A file written under a temporary name beside the file it will replace (a merge's output), renamed into
//! place once complete.
//!
//! Its name is `.NAME.planrun-merge-` and 16 random hexadecimal digits: nobody can place anything there in
//! advance, and it is created only where nothing has that name (`O_CREAT | O_EXCL`: never through a symbolic
//! link, never over a file). It is locked while it is written, so the next merge beside the same output
//! tells a leftover of a killed merge (unlocked: removed) from one being written (locked: left alone).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::FileId;

/// What follows the output's name in a temporary file's name.
const MARK: &str = ".planrun-merge-";

/// A temporary file, removed when dropped unless it was renamed into place.
#[derive(Debug)]
pub struct Temp {
    path: Option<PathBuf>,
    file: File,
}

impl Temp {
    /// Creates the temporary file for `target` in its directory, after removing the leftovers of killed
    /// writers there.
    pub fn beside(target: &Path) -> io::Result<Temp> {
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = target.file_name().map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned());
        let prefix = format!(".{name}{MARK}");
        remove_leftovers(dir, &prefix);
        let mut last = None;
        for _ in 0..16 {
            let path = dir.join(format!("{prefix}{:016x}", rand::random::<u64>()));
            let file = match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            // Between its creation and this lock, another merge's clean-up may have taken it for a leftover:
            // then it is locked by that merge, or already gone. Either way, another name.
            if file.try_lock().is_ok() && FileId::of(&fs::symlink_metadata(&path)?) == FileId::of(&file.metadata()?) {
                return Ok(Temp { path: Some(path), file });
            }
            last = Some(io::Error::other("a temporary file was taken away"));
        }
        Err(last.unwrap_or_else(|| io::Error::other("no temporary file could be created")))
    }

    /// The file to write.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file to write.
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Renames the file to `target`, replacing what is there.
    pub fn rename_to(mut self, target: &Path) -> io::Result<()> {
        let Some(path) = self.path.take() else { return Ok(()) };
        match fs::rename(&path, target) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = fs::remove_file(&path);
                Err(e)
            }
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = fs::remove_file(path);
        }
    }
}

/// Removes the files in `dir` whose name starts with `prefix` and that no process holds locked: leftovers
/// of writers that were killed. Best effort: what cannot be removed stays.
fn remove_leftovers(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let path = entry.path();
        // For writing: where locks are byte-range locks underneath (NFS), an exclusive one needs it.
        let mut options = OpenOptions::new();
        options.write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOFOLLOW);
        let Ok(file) = options.open(&path) else { continue };
        let Ok(meta) = file.metadata() else { continue };
        if !meta.is_file() || file.try_lock().is_err() {
            continue;
        }
        // Still the file that was opened (not replaced since): removed while it is held locked.
        if fs::symlink_metadata(&path).ok().as_ref().and_then(FileId::of) == FileId::of(&meta) {
            let _ = fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_removed_and_a_temporary_file_being_written_is_not() {
        let dir = std::env::temp_dir().join(format!("planrun-temp-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("all.jtl");
        let leftover = dir.join(format!(".all.jtl{MARK}0123456789abcdef"));
        fs::write(&leftover, "rows of a killed merge").unwrap();
        let other = dir.join(".other.jtl.planrun-merge-0123456789abcdef");
        fs::write(&other, "another output's").unwrap();
        let first = Temp::beside(&target).unwrap();
        assert!(!leftover.exists(), "the leftover is removed");
        assert!(other.exists(), "another output's file is left alone");
        let second = Temp::beside(&target).unwrap();
        assert!(first.path.as_ref().unwrap().exists(), "a locked one is left alone");
        fs::write(&target, "old").unwrap();
        second.rename_to(&target).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "");
        let first_path = first.path.clone().unwrap();
        drop(first);
        assert!(!first_path.exists(), "removed when dropped");
        fs::remove_dir_all(&dir).unwrap();
    }
}
