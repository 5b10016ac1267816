//! One input, read on a thread of its own: cut into records ([`super::split`]), each record read by `planrun
//! report`'s reader ([`crate::report::results`], through a [`Pipe`]) and put in order in its [`Window`]; what
//! comes out goes to the merge in batches over a bounded channel.

use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use super::error::{MergeError, Warning};
use super::pipe::Pipe;
use super::split::{Framing, Raw, Splitter};
use super::window::{Row, Window};
use crate::report::results::{sniff, Format, Record, ResultsError, ResultsReader};

/// Rows sent at a time.
pub const BATCH: usize = 512;

/// Batches waiting in the channel of each input, at most.
pub const QUEUED: usize = 2;

/// What an input's thread says, in this order: warnings, then its [`Head`] (none for a skipped input), then
/// rows and warnings, then [`Msg::End`]; or an error at any point, after which it says nothing more.
#[derive(Debug)]
pub enum Msg {
    /// The format and header, before any row.
    Head(Head),
    /// Rows in order (but for those that came too late for the window).
    Rows(Vec<Row>),
    /// Something to tell the user.
    Warning(Warning),
    /// Every row was sent.
    End,
    /// The input cannot be read.
    Error(MergeError),
}

/// What the file is.
#[derive(Debug)]
pub struct Head {
    /// JTL (with its delimiter) or JSON lines.
    pub format: Format,
    /// A JTL's header line.
    pub header: Option<Header>,
}

/// A JTL's header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// As it is in the file, line end included.
    pub bytes: Vec<u8>,
    /// Its column names.
    pub columns: Vec<String>,
}

/// What the thread needs.
#[derive(Debug)]
pub struct Job {
    /// The file, opened (a regular file).
    pub file: File,
    pub path: PathBuf,
    /// The window's budget, bytes.
    pub budget: usize,
    /// With `--plan`: the labels the plan can write, and the plan's name for messages.
    pub labels: Option<Arc<(HashSet<String>, String)>>,
}

/// Reads the input and sends what it finds until the end, an error, or the merge hanging up.
pub fn read(job: Job, tx: &SyncSender<Msg>) {
    let Job { file, path, budget, labels } = job;
    let reader = Reader { name: path.display().to_string(), path, budget, labels, tx };
    if let Err(Stop::Failed(e)) = reader.run(file) {
        let _ = tx.send(Msg::Error(e));
    }
}

/// Why reading stopped before the end.
enum Stop {
    /// The merge is no longer listening (it failed elsewhere, or was interrupted): stop quietly.
    HungUp,
    /// This input cannot be read.
    Failed(MergeError),
}

impl From<MergeError> for Stop {
    fn from(e: MergeError) -> Self {
        Stop::Failed(e)
    }
}

impl From<ResultsError> for Stop {
    fn from(e: ResultsError) -> Self {
        Stop::Failed(e.into())
    }
}

struct Reader<'a> {
    path: PathBuf,
    name: String,
    budget: usize,
    labels: Option<Arc<(HashSet<String>, String)>>,
    tx: &'a SyncSender<Msg>,
}

impl Reader<'_> {
    fn send(&self, msg: Msg) -> Result<(), Stop> {
        self.tx.send(msg).map_err(|_| Stop::HungUp)
    }

    fn io(&self, source: io::Error) -> Stop {
        ResultsError::Io { path: self.name.clone(), source }.into()
    }

    fn internal(&self, what: String) -> Stop {
        MergeError::Internal { path: self.name.clone(), what }.into()
    }

    fn run(&self, file: File) -> Result<(), Stop> {
        let format = match sniff(&self.path) {
            Ok(Format::SummaryJson) => return Err(ResultsError::SummaryOnly { path: self.name.clone() }.into()),
            Ok(f) => f,
            Err(ResultsError::Empty { .. }) => return self.skip(Warning::Empty { path: self.name.clone() }),
            Err(e) => return Err(e.into()),
        };
        let framing = match format {
            Format::Jtl { delimiter } => Framing::Csv(delimiter),
            _ => Framing::Lines,
        };
        let mut split = Splitter::new(file, framing);
        split.skip_leading_space().map_err(|e| self.io(e))?;
        let pipe = Pipe::default();
        // A JTL's reader starts with its header; a JSON lines reader with its first line, in `rows`.
        let (mut reader, header) = match framing {
            Framing::Lines => (None, None),
            Framing::Csv(delimiter) => match split.next_raw().map_err(|e| self.io(e))? {
                Some(raw) if raw.terminated => {
                    pipe.push(&raw.bytes);
                    let reader = ResultsReader::from_reader(self.name.clone(), pipe.clone())?;
                    let columns = columns(raw.record(), delimiter);
                    (Some(reader), Some(Header { bytes: raw.record().to_vec(), columns }))
                }
                None => return self.skip(Warning::Empty { path: self.name.clone() }),
                Some(_) => return self.skip(Warning::CutHeader { path: self.name.clone() }),
            },
        };
        self.send(Msg::Head(Head { format, header }))?;
        self.rows(&mut split, &pipe, &mut reader)?;
        // Everything given to the reader was read: it must see the end now.
        pipe.close();
        if let Some(r) = reader.as_mut().map(ResultsReader::next_record).transpose()?.flatten() {
            return Err(self.internal(format!("the reader found a record the splitter did not, line {}", r.line)));
        }
        self.send(Msg::End)
    }

    /// An input with nothing to merge.
    fn skip(&self, warning: Warning) -> Result<(), Stop> {
        self.send(Msg::Warning(warning))?;
        self.send(Msg::End)
    }

    /// Sends every row, in order through the window, in batches.
    fn rows(&self, split: &mut Splitter<File>, pipe: &Pipe, reader: &mut Option<ResultsReader>) -> Result<(), Stop> {
        let mut window = Window::new(self.budget);
        let mut batch = Vec::with_capacity(BATCH);
        let mut seq = 0;
        while let Some(raw) = split.next_raw().map_err(|e| self.io(e))? {
            if !raw.terminated {
                self.send(Msg::Warning(Warning::CutRow { path: self.name.clone(), line: raw.line }))?;
                break;
            }
            pipe.push(&raw.bytes);
            let reader = match reader {
                Some(r) => r,
                None => reader.insert(ResultsReader::from_reader(self.name.clone(), pipe.clone())?),
            };
            let Some(record) = reader.next_record()? else {
                return Err(self.internal(format!("the reader found no record at line {}", raw.line)));
            };
            self.check_label(&record, raw.line)?;
            let row = Row::new(seq, record_bytes(raw), &record);
            seq += 1;
            if let Some(out) = window.push(row) {
                batch.push(out);
                self.send_full(&mut batch)?;
            }
        }
        while let Some(out) = window.pop() {
            batch.push(out);
            self.send_full(&mut batch)?;
        }
        if !batch.is_empty() {
            self.send(Msg::Rows(batch))?;
        }
        Ok(())
    }

    /// Sends the batch when it is full.
    fn send_full(&self, batch: &mut Vec<Row>) -> Result<(), Stop> {
        if batch.len() < BATCH {
            return Ok(());
        }
        self.send(Msg::Rows(std::mem::replace(batch, Vec::with_capacity(BATCH))))
    }

    fn check_label(&self, record: &Record<'_>, line: u64) -> Result<(), Stop> {
        let Some(labels) = &self.labels else { return Ok(()) };
        let (known, plan) = &**labels;
        if known.contains(record.label.as_ref()) {
            return Ok(());
        }
        let (path, label, plan) = (self.name.clone(), record.label.to_string(), plan.clone());
        Err(MergeError::ForeignLabel { path, line, label, plan }.into())
    }
}

/// The record's own bytes, without the blank lines before it.
fn record_bytes(raw: Raw) -> Vec<u8> {
    if raw.start == 0 {
        raw.bytes
    } else {
        raw.record().to_vec()
    }
}

/// The column names of a header line, as `planrun report` reads them (trimmed).
fn columns(line: &[u8], delimiter: u8) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new().delimiter(delimiter).has_headers(false).flexible(true).from_reader(line);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => record.iter().map(|f| String::from_utf8_lossy(f).trim().to_string()).collect(),
        _ => Vec::new(),
    }
}
