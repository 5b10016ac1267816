//! The merge's end of an input's channel: its head, then its rows one at a time.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use super::error::{MergeError, Warning};
use super::input::{self, Head, Job, Msg, QUEUED};
use super::window::Row;

/// One input as the merge sees it.
#[derive(Debug)]
pub struct Stream {
    /// The input's path, for messages.
    pub path: PathBuf,
    rx: Receiver<Msg>,
    /// Rows received; those before `at` were taken.
    batch: Vec<Row>,
    at: usize,
    ended: bool,
    thread: Option<JoinHandle<()>>,
}

impl Stream {
    /// Starts reading the input on a thread of its own.
    pub fn start(job: Job, number: usize) -> Result<Self, MergeError> {
        let path = job.path.clone();
        let (tx, rx) = sync_channel(QUEUED);
        let thread = std::thread::Builder::new()
            .name(format!("merge-input-{number}"))
            .spawn(move || input::read(job, &tx))
            .map_err(|e| MergeError::Internal { path: path.display().to_string(), what: format!("no thread: {e}") })?;
        Ok(Stream { path, rx, batch: Vec::new(), at: 0, ended: false, thread: Some(thread) })
    }

    /// The input's format and header; `None` when it was skipped (empty, or cut inside its header).
    pub fn head(&mut self, on_warning: &mut dyn FnMut(&Warning)) -> Result<Option<Head>, MergeError> {
        loop {
            match self.recv()? {
                Msg::Head(head) => return Ok(Some(head)),
                Msg::Warning(w) => on_warning(&w),
                Msg::End => {
                    self.ended = true;
                    return Ok(None);
                }
                Msg::Error(e) => return Err(e),
                Msg::Rows(_) => return Err(self.internal("rows before the header")),
            }
        }
    }

    /// The next row (rows are looked at where they lie, not moved), `None` after the last.
    pub fn peek(&mut self, on_warning: &mut dyn FnMut(&Warning)) -> Result<Option<&Row>, MergeError> {
        while self.at == self.batch.len() {
            if self.ended {
                return Ok(None);
            }
            match self.recv()? {
                Msg::Rows(rows) => {
                    self.batch = rows;
                    self.at = 0;
                }
                Msg::Warning(w) => on_warning(&w),
                Msg::End => self.ended = true,
                Msg::Error(e) => return Err(e),
                Msg::Head(_) => return Err(self.internal("a second header")),
            }
        }
        Ok(self.batch.get(self.at))
    }

    /// Takes the row [`Stream::peek`] gave.
    pub fn advance(&mut self) {
        self.at += 1;
    }

    fn recv(&mut self) -> Result<Msg, MergeError> {
        self.rx.recv().map_err(|_| self.internal("its reader stopped before the end"))
    }

    fn internal(&self, what: &str) -> MergeError {
        MergeError::Internal { path: self.path.display().to_string(), what: what.to_string() }
    }
}

impl Drop for Stream {
    /// Hangs up (a reader waiting to send gives up) and waits for the reader to end.
    fn drop(&mut self) {
        let (_, rx) = sync_channel(0);
        drop(std::mem::replace(&mut self.rx, rx));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
