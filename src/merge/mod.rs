//! `planrun merge`: result files of one test (the segments of a plan run on several machines or cores) made
//! into one, as if one run had written it.
//!
//! - **Streaming.** Each input is read on a thread of its own, one record at a time, by the reader of `planrun
//!   report` ([`crate::report::results`]); a k-way merge writes the rows in `timeStamp` order. Memory does not
//!   grow with the files: each input holds at most its share of the look-behind window, plus a few batches.
//! - **Verbatim.** Every row is copied byte for byte, quoted multi-line fields and line ends included; a
//!   JTL's header line is written once (the first input's). JSON lines merge as lines.
//! - **Order.** Rows are written earliest `timeStamp` first; ties keep the order of the inputs on the command
//!   line, then the order of the rows in their file. A JTL is written as samples end, so a row may start
//!   before rows written above it (by less than its own elapsed time): each input holds a look-behind
//!   [`window`] (its share of `--window-mib`) and gives out the earliest row it holds. A row that comes
//!   after more than a window's worth of rows that started after it is written as soon as it is read, out of
//!   order, and counted in a [`Warning::Late`]. No row is ever dropped or changed.
//! - **Statistics.** The merged rows feed the same statistics, timeline and failure table as `planrun report`,
//!   in the order written, so the summary is the one `planrun report` gives for the merged file.
//! - **Bad input.** Inputs must be regular files of one format (JTL with one header line, or JSON lines); an
//!   empty input is skipped, and a last row cut off (no line end: the run writing it was stopped) is left out,
//!   each with a [`Warning`]; anything else unreadable is an error naming the file and line, and then no
//!   output is left behind ([`output`]).

pub mod error;
pub mod header;
pub mod input;
pub mod labels;
pub mod output;
pub mod pipe;
pub mod split;
pub mod stream;
pub mod window;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use error::{MergeError, Warning};

use crate::claim::FileId;
use crate::report::analysis::Analysis;
use crate::report::failures::Failures;
use crate::report::results::{Format, ResultsError};
use crate::report::timeline::{LabelTimelines, Timeline, MAX_POINTS};
use crate::sink::stats::Stats;
use input::{Head, Job};
use output::Output;
use stream::Stream;

/// The look-behind window of all inputs together, by default: 64 MiB.
pub const DEFAULT_WINDOW_MIB: u64 = 64;

/// Each input's share of the window is at least this.
const MIN_SHARE: usize = 256 * 1024;

/// How often (in rows) the merge looks whether it was asked to stop.
const CANCEL_EVERY: u64 = 8192;

/// How to merge.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The look-behind window of all inputs together, bytes.
    pub window_bytes: usize,
    /// With `--plan`: the labels its rows can have, and the plan's name for messages.
    pub plan_labels: Option<(HashSet<String>, String)>,
    /// Set (by a signal) to stop: the merge ends with [`MergeError::Interrupted`] and writes nothing.
    pub cancel: Arc<AtomicBool>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions { window_bytes: (DEFAULT_WINDOW_MIB << 20) as usize, plan_labels: None, cancel: Arc::default() }
    }
}

/// What one input gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputCount {
    pub path: PathBuf,
    /// Its rows in the merged file.
    pub rows: u64,
    /// How many of them were written out of order (too late for the window).
    pub late: u64,
    /// False when it was skipped (empty).
    pub merged: bool,
}

/// A merge done.
#[derive(Debug)]
pub struct Merged {
    /// The merged rows' statistics, timeline and failures, as `planrun report` reads the merged file.
    pub analysis: Analysis,
    /// Rows written.
    pub rows: u64,
    /// Per input, in the order given.
    pub inputs: Vec<InputCount>,
}

/// Merges `inputs` into `output`. Warnings (skipped inputs, rows cut off, rows out of order) go to
/// `on_warning` as they come.
pub fn merge(
    inputs: &[PathBuf],
    output: &Path,
    options: &MergeOptions,
    on_warning: &mut dyn FnMut(&Warning),
) -> Result<Merged, MergeError> {
    // One open file per input: many inputs may need more than the soft limit.
    crate::limits::raise_open_files();
    let files = open_inputs(inputs, output)?;
    let share = (options.window_bytes / inputs.len().max(1)).max(MIN_SHARE);
    let labels = options.plan_labels.clone().map(Arc::new);
    let mut streams = Vec::with_capacity(files.len());
    for (number, (path, file)) in inputs.iter().zip(files).enumerate() {
        let job = Job { file, path: path.clone(), budget: share, labels: labels.clone() };
        streams.push(Stream::start(job, number)?);
    }
    let mut first: Option<(String, Head)> = None;
    let mut merged = vec![false; streams.len()];
    for (i, stream) in streams.iter_mut().enumerate() {
        let Some(head) = stream.head(on_warning)? else { continue };
        let name = stream.path.display().to_string();
        match &first {
            Some((first_name, first_head)) => header::check(first_name, first_head, &name, &head)?,
            None => first = Some((name, head)),
        }
        merged[i] = true;
    }
    let Some((_, head)) = first else { return Err(MergeError::NothingToMerge) };
    let mut out = Output::create(output)?;
    if let Some(header) = &head.header {
        out.write(&header.bytes)?;
    }
    let mut merge = Kway::new(output, head.format, streams.len());
    merge.run(&mut streams, &merged, &mut out, &options.cancel, on_warning)?;
    let window_mib = (options.window_bytes as u64) >> 20;
    for (i, stream) in streams.iter().enumerate() {
        if merge.late[i] > 0 {
            let path = stream.path.display().to_string();
            on_warning(&Warning::Late { path, rows: merge.late[i], max_ms: merge.max_late_ms[i], window_mib });
        }
    }
    // A signal that came during the last rows: the merge is complete, but it was asked to stop.
    if options.cancel.load(Ordering::Relaxed) {
        return Err(MergeError::Interrupted { path: output.display().to_string() });
    }
    out.finish()?;
    let counts = (0..streams.len())
        .map(|i| InputCount { path: inputs[i].clone(), rows: merge.rows[i], late: merge.late[i], merged: merged[i] })
        .collect();
    Ok(Merged { rows: merge.rows.iter().sum(), analysis: merge.analysis, inputs: counts })
}

/// Opens every input (regular files only, each once) before anything is written. Files are told apart by
/// device and inode: a hard link, a symbolic link or another spelling of a path is the same file.
fn open_inputs(inputs: &[PathBuf], output: &Path) -> Result<Vec<std::fs::File>, MergeError> {
    let mut seen: Vec<(FileId, String)> = Vec::new();
    let output_id = FileId::at(output);
    let mut files = Vec::with_capacity(inputs.len());
    for path in inputs {
        let name = path.display().to_string();
        let file = crate::files::open_regular(path).map_err(|e| open_error(&name, e))?;
        if let Some(id) = file.metadata().ok().as_ref().and_then(FileId::of) {
            if output_id == Some(id) {
                return Err(MergeError::OutputIsInput { path: output.display().to_string() });
            }
            if let Some((_, first)) = seen.iter().find(|(known, _)| *known == id) {
                return Err(MergeError::Twice { path: name, first: first.clone() });
            }
            seen.push((id, name));
        }
        files.push(file);
    }
    Ok(files)
}

fn open_error(name: &str, e: std::io::Error) -> MergeError {
    if let Some(not_a_file) = e.get_ref().and_then(|inner| inner.downcast_ref::<crate::files::NotAFile>()) {
        return MergeError::NotRegular { path: name.to_string(), kind: not_a_file.what };
    }
    if e.kind() == std::io::ErrorKind::NotFound {
        return MergeError::Missing { path: name.to_string() };
    }
    MergeError::Read(ResultsError::Io { path: name.to_string(), source: e })
}

/// The k-way merge: the earliest head of all inputs goes next.
struct Kway {
    analysis: Analysis,
    rows: Vec<u64>,
    late: Vec<u64>,
    max_late_ms: Vec<u64>,
}

impl Kway {
    fn new(output: &Path, format: Format, inputs: usize) -> Self {
        let resolution = format.resolution_us();
        let analysis = Analysis {
            source: output.display().to_string(),
            format,
            stats: Stats::with_resolution_us(resolution),
            timeline: Timeline::with_limits(MAX_POINTS, resolution),
            labels: LabelTimelines::new(resolution),
            failures: Failures::new(),
        };
        Kway { analysis, rows: vec![0; inputs], late: vec![0; inputs], max_late_ms: vec![0; inputs] }
    }

    fn run(
        &mut self,
        streams: &mut [Stream],
        merged: &[bool],
        out: &mut Output,
        cancel: &AtomicBool,
        on_warning: &mut dyn FnMut(&Warning),
    ) -> Result<(), MergeError> {
        let mut order = BinaryHeap::with_capacity(streams.len());
        for (i, stream) in streams.iter_mut().enumerate() {
            if !merged[i] {
                continue;
            }
            if let Some(row) = stream.peek(on_warning)? {
                order.push(Reverse((row.ts, i, row.seq)));
            }
        }
        let mut last_ts = 0;
        let mut written = 0u64;
        while let Some(Reverse((ts, i, _))) = order.pop() {
            let stream = &mut streams[i];
            let Some(row) = stream.peek(on_warning)? else {
                return Err(MergeError::Internal { path: stream.path.display().to_string(), what: "no row".into() });
            };
            if ts < last_ts {
                self.late[i] += 1;
                self.max_late_ms[i] = self.max_late_ms[i].max(last_ts - ts);
            } else {
                last_ts = ts;
            }
            out.write(&row.bytes)?;
            self.analysis.add(&row.record());
            stream.advance();
            self.rows[i] += 1;
            written += 1;
            if written.is_multiple_of(CANCEL_EVERY) && cancel.load(Ordering::Relaxed) {
                return Err(MergeError::Interrupted { path: self.analysis.source.clone() });
            }
            if let Some(next) = stream.peek(on_warning)? {
                order.push(Reverse((next.ts, i, next.seq)));
            }
        }
        Ok(())
    }
}
