//! CSV data sets at run time: at the start of each iteration a virtual user takes the next row of every data
//! set its group reads (a set whose name a template of the group's steps reads, decided when the plan is
//! loaded), read in templates as `{{ recipients.phone }}`. A group that never reads a set takes none of its
//! rows, so a `unique` set's rows all go to the groups that use them.
//!
//! Rows are never loaded whole, so a data file may be larger than memory. Each set has one open file, shared
//! by every user and read with positional reads (`pread`: no lock, no shared file offset). Rows are parsed by
//! streaming csv readers (quoted fields, the set's delimiter, blank lines skipped) over that file:
//! - **shared sequential** and **unique**: one reader for the run, behind a mutex, so each row goes to exactly
//!   one user. At the end of the file a recycling set seeks back to its first row; the others end (unique
//!   always ends: each row is handed out once). A segment of a run (`--segment I/N`) takes its
//!   [`Turns`] of the whole run's rows and reads past the others, so no row goes to two segments.
//! - **per_thread sequential**: each user's own reader, created at its first [`DataSources::advance`]. Each
//!   running user holds one reader (a [`USER_BUFFER`] buffer) per `per_thread` set, but no file descriptor:
//!   the readers share the set's file, so 10,000 users do not need 10,000 more open files on top of their
//!   sockets (see [`crate::limits`]).
//! - **random**: the byte offset where each row starts, found by the load-time scan
//!   ([`crate::csv_scan::scan`]): 8 bytes a row, so a 1 GB file of 10 million rows costs 80 MB of index, not
//!   1 GB. Each draw picks a row with the user's seeded generator and reads it at its offset, with the user's
//!   own reader.
//!
//! Where the rows start (past the byte order mark and the header row) is what that scan found too: the run
//! does not read the file before its first row is needed.
//!
//! Sequential modes therefore hold a fixed buffer per reader whatever the size of the file; the operating
//! system's page cache does the rest. A row is read up to [`MAX_ROW`](crate::files::MAX_ROW) bytes and no
//! further (validation refused longer ones; a file changed since fails its read, and one shorter than when
//! it was scanned is refused when the run starts), and only a regular file is opened: a FIFO or a device
//! named after validation is refused when the run starts.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use rand::Rng;

use crate::csv_scan::rows_reader;
use crate::files::{open_regular, RowLimit};
use crate::plan::model::{DataMode, DataScope, DataSet, OnEof};
use crate::segment::Turns;
use crate::template::Scope;

/// The buffer of a user's own reader (`per_thread` and `random` sets).
pub const USER_BUFFER: usize = 4 << 10;
/// The buffer of a set's shared reader.
const SHARED_BUFFER: usize = 64 << 10;

/// The run's data sets, opened once and shared by every virtual user (`Send + Sync`).
#[derive(Debug)]
pub struct DataSources {
    sets: Vec<Source>,
    /// The first read that failed during the run, for the end-of-run message.
    failure: Mutex<Option<String>>,
}

/// One virtual user's readers of its `per_thread` and `random` sets (created when first needed).
#[derive(Debug)]
pub struct UserCursors {
    /// The index of the user's group in the plan's groups: it takes rows only of the sets the group reads.
    group: usize,
    /// One slot per set, in the order of the sets; shared sets leave theirs empty.
    own: Vec<Option<Stream>>,
    /// One slot per set: the number of the row the current iteration took (1 is the file's first data
    /// row), 0 when it took none.
    rows: Vec<u64>,
    /// The row being read, reused.
    record: csv::StringRecord,
}

/// A data set has no row left for this user: the user must stop (`StopThread`) or the run must stop (`StopRun`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndOfData {
    /// The set's name.
    pub set: Arc<str>,
    /// What to do: `StopThread` or `StopRun`, never `Recycle`.
    pub on_eof: OnEof,
}

/// A data file that cannot be opened or read when the run starts.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file cannot be opened or read.
    #[error("cannot read data file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file is shorter than when the plan was loaded: the rows found then are not all there.
    #[error("data file {} is shorter than when the plan was loaded (it changed since)", path.display())]
    Shorter {
        /// The file.
        path: PathBuf,
    },
}

/// One data set, opened.
#[derive(Debug)]
struct Source {
    name: Arc<str>,
    path: PathBuf,
    file: Arc<File>,
    /// The file's length when the plan was loaded; rows appended later are not read.
    len: u64,
    delimiter: u8,
    columns: Arc<[Arc<str>]>,
    /// The byte offset of the first data row (after the byte order mark and the header row).
    first_row: u64,
    /// Never `Recycle` for a unique set.
    on_eof: OnEof,
    order: Order,
    /// Which of a shared reader's rows are this process's.
    deal: Turns,
    /// The indexes of the groups whose users take its rows.
    read_by: Vec<usize>,
}

/// Who reads a set.
#[derive(Debug)]
enum Order {
    /// One reader for the run (shared sequential, unique).
    Shared(Mutex<Stream>),
    /// Each user's own reader, in its [`UserCursors`].
    PerThread,
    /// The start offset of every row, for random draws with each user's own reader.
    Random(Arc<[u64]>),
}

/// A streaming reader of a set's rows, and whether it has reached the end for good.
#[derive(Debug)]
struct Stream {
    reader: csv::Reader<RowLimit<At>>,
    ended: bool,
    /// Rows read so far, the segment's and the others' (a shared reader deals by this count).
    taken: u64,
    /// The number of the row read last, from 1 at the file's first data row (again after recycling).
    row: u64,
}

impl DataSources {
    /// Opens every set's file.
    pub fn open(sets: &[DataSet]) -> Result<Self, DataError> {
        Self::open_segment(sets, Turns::default())
    }

    /// [`open`](Self::open) for a segment of a run: shared sets hand out only the segment's turns of rows.
    pub fn open_segment(sets: &[DataSet], turns: Turns) -> Result<Self, DataError> {
        let sets = sets.iter().map(|s| Source::open(s, turns)).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { sets, failure: Mutex::new(None) })
    }

    /// True when the plan has no data set (users need not call [`advance`](Self::advance)).
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// A new virtual user's cursors, for a user of the group at index `group` of the plan's groups. Nothing
    /// is allocated or read until its first [`advance`](Self::advance).
    pub fn user(&self, group: usize) -> UserCursors {
        UserCursors {
            group,
            own: self.sets.iter().map(|_| None).collect(),
            rows: vec![0; self.sets.len()],
            record: csv::StringRecord::new(),
        }
    }

    /// The rows the user's current iteration took: each set's name and the row's number (1 is the file's
    /// first data row).
    pub fn rows(&self, cursors: &UserCursors) -> Vec<(Arc<str>, u64)> {
        self.sets
            .iter()
            .zip(&cursors.rows)
            .filter(|(_, row)| **row > 0)
            .map(|(s, row)| (s.name.clone(), *row))
            .collect()
    }

    /// At the start of each iteration: puts the next row of every data set the user's group reads into
    /// `scope` as a map variable named after the set (`{{ recipients.phone }}`; values are strings). Random sets draw with the scope's
    /// generator, so a seeded run picks the same rows for the same user. Returns `Err(EndOfData)` when a set
    /// whose `on_eof` is `stop_thread` or `stop_run` has no row left for this user: the iteration must not run.
    /// Rows already taken from the sets before it in this call are not handed back.
    ///
    /// A read that fails (the file was truncated or removed during the run) ends the run: `StopRun`, with the
    /// reason kept for [`failure`](Self::failure).
    pub fn advance(&self, cursors: &mut UserCursors, scope: &Scope) -> Result<(), EndOfData> {
        let UserCursors { group, own, rows, record } = cursors;
        for ((set, slot), row) in self.sets.iter().zip(own.iter_mut()).zip(rows.iter_mut()) {
            *row = 0;
            if !set.read_by.contains(group) {
                continue;
            }
            let got = match &set.order {
                Order::Shared(stream) => set.dealt_row(&mut lock(stream), record),
                Order::PerThread => {
                    let stream = slot.get_or_insert_with(|| set.stream(set.first_row, USER_BUFFER));
                    set.next_row(stream, record)
                }
                Order::Random(starts) => {
                    let stream = slot.get_or_insert_with(|| set.stream(set.first_row, USER_BUFFER));
                    set.random_row(starts, scope, stream, record)
                }
            };
            match got {
                Ok(Some(n)) => {
                    *row = n;
                    scope.set_var(set.name.clone(), Row::value(&set.columns, record));
                }
                Ok(None) => return Err(EndOfData { set: set.name.clone(), on_eof: set.on_eof }),
                Err(e) => {
                    let mut failure = lock(&self.failure);
                    failure.get_or_insert_with(|| format!("cannot read data file {}: {e}", set.path.display()));
                    return Err(EndOfData { set: set.name.clone(), on_eof: OnEof::StopRun });
                }
            }
        }
        Ok(())
    }

    /// The first read that failed during the run, if any (it stopped the run).
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }
}

impl Source {
    fn open(set: &DataSet, deal: Turns) -> Result<Self, DataError> {
        let io_error = |source| DataError::Io { path: set.file.clone(), source };
        let file = open_regular(&set.file).map_err(io_error)?;
        if file.metadata().map_err(io_error)?.len() < set.len {
            return Err(DataError::Shorter { path: set.file.clone() });
        }
        let on_eof = match (set.mode, set.on_eof) {
            (DataMode::Unique, OnEof::Recycle) => OnEof::StopThread,
            (_, e) => e,
        };
        let mut source = Source {
            name: set.name.clone(),
            path: set.file.clone(),
            file: Arc::new(file),
            len: set.len,
            delimiter: set.delimiter,
            columns: set.columns.iter().cloned().collect(),
            first_row: set.first_row,
            on_eof,
            order: Order::PerThread,
            deal,
            read_by: set.read_by.clone(),
        };
        source.order = match (set.mode, set.scope) {
            (DataMode::Random, _) => Order::Random(set.starts.clone().unwrap_or_default()),
            (DataMode::Sequential, DataScope::PerThread) => Order::PerThread,
            (DataMode::Sequential, DataScope::Shared) | (DataMode::Unique, _) => {
                Order::Shared(Mutex::new(source.stream(source.first_row, SHARED_BUFFER)))
            }
        };
        Ok(source)
    }

    /// A reader of the set's rows from byte `at` of the file.
    fn stream(&self, at: u64, buffer: usize) -> Stream {
        let at = At { file: self.file.clone(), pos: at, len: self.len };
        Stream { reader: rows_reader(at, self.delimiter, buffer), ended: false, taken: 0, row: 0 }
    }

    /// Reads the segment's next row of a shared reader into `record`: its number, `None` at the end.
    fn dealt_row(&self, stream: &mut Stream, record: &mut csv::StringRecord) -> io::Result<Option<u64>> {
        loop {
            let Some(row) = self.next_row(stream, record)? else {
                return Ok(None);
            };
            let k = stream.taken;
            stream.taken += 1;
            if self.deal.owns(k) {
                return Ok(Some(row));
            }
        }
    }

    /// Reads the next row into `record`, going back to the first row at the end when the set recycles: its
    /// number, `None` at the end.
    fn next_row(&self, stream: &mut Stream, record: &mut csv::StringRecord) -> io::Result<Option<u64>> {
        if stream.ended {
            return Ok(None);
        }
        if read_row(&mut stream.reader, record)? {
            stream.row += 1;
            return Ok(Some(stream.row));
        }
        if self.on_eof != OnEof::Recycle {
            stream.ended = true;
            return Ok(None);
        }
        stream.reader.seek(position(self.first_row))?;
        if read_row(&mut stream.reader, record)? {
            stream.row = 1;
            return Ok(Some(1));
        }
        Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file has no rows left"))
    }

    /// Reads a row drawn uniformly with the user's generator into `record`: its number.
    fn random_row(
        &self,
        starts: &[u64],
        scope: &Scope,
        stream: &mut Stream,
        record: &mut csv::StringRecord,
    ) -> io::Result<Option<u64>> {
        if starts.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file has no rows"));
        }
        let k = scope.with_rng(|rng| rng.random_range(0..starts.len()));
        stream.reader.seek(position(starts[k]))?;
        if read_row(&mut stream.reader, record)? {
            return Ok(Some(k as u64 + 1));
        }
        Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter than when the run started"))
    }
}

/// Reads the next row into `record`, refusing one longer than [`MAX_ROW`](crate::files::MAX_ROW).
fn read_row(reader: &mut csv::Reader<RowLimit<At>>, record: &mut csv::StringRecord) -> io::Result<bool> {
    reader.get_mut().start_row();
    Ok(reader.read_record(record)?)
}

/// A position to seek a csv reader to: only the byte offset matters to [`At`].
fn position(byte: u64) -> csv::Position {
    let mut p = csv::Position::new();
    p.set_byte(byte);
    p
}

/// A reader of a shared file from its own offset, with positional reads: many can read one file at once.
#[derive(Debug)]
struct At {
    file: Arc<File>,
    pos: u64,
    /// Reads stop here: the file's length when the run started.
    len: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let n = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
        if n == 0 {
            return Ok(0);
        }
        let got = read_at(&self.file, &mut buf[..n], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

impl Seek for At {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

/// One row, read in templates as a map from column name to value (`{{ recipients.phone }}`).
#[derive(Debug)]
struct Row {
    columns: Arc<[Arc<str>]>,
    values: Vec<Value>,
}

impl Row {
    fn value(columns: &Arc<[Arc<str>]>, record: &csv::StringRecord) -> Value {
        Value::from_object(Row { columns: columns.clone(), values: record.iter().map(Value::from).collect() })
    }
}

impl Object for Row {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        let i = self.columns.iter().position(|c| &**c == key)?;
        self.values.get(i).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.columns.iter().map(|c| Value::from(c.clone())).collect())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::template::{Shared, Templates};

    /// A directory of its own under the system's temp dir, removed on drop.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!("planrun-run-data-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create the temp dir");
            Dir(dir)
        }

        fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, contents).expect("write the data file");
            p
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn set(file: &Path, columns: &[&str], mode: DataMode, scope: DataScope, on_eof: OnEof) -> DataSet {
        scanned(DataSet {
            name: Arc::from("recipients"),
            file: file.to_path_buf(),
            delimiter: b',',
            columns: columns.iter().map(|c| Arc::from(*c)).collect(),
            has_header: true,
            mode,
            scope,
            on_eof,
            rows: 0,
            len: 0,
            first_row: 0,
            starts: None,
            groups: Vec::new(),
            read_by: vec![0],
        })
    }

    /// The set with what the load-time scan finds in its file (nothing when it cannot be read).
    fn scanned(mut s: DataSet) -> DataSet {
        let columns = (!s.has_header).then(|| s.columns.clone());
        if let Ok(scan) = crate::csv_scan::scan(&s.file, s.delimiter, columns.as_deref(), s.mode == DataMode::Random) {
            (s.rows, s.len, s.first_row, s.starts) = (scan.rows, scan.len, scan.first_row, scan.starts);
        }
        s
    }

    fn scope(seed: u64, vu: u32) -> Arc<Scope> {
        Scope::for_vu(Arc::new(Shared::default()), seed, 0, Arc::from("g"), vu)
    }

    /// `set.column` as the scope holds it after an advance.
    fn get(scope: &Arc<Scope>, set: &str, column: &str) -> String {
        let row = scope.get_value(&Value::from(set)).unwrap_or_else(|| panic!("`{set}` is set"));
        row.get_attr(column).expect("a row is a map").as_str().unwrap_or_else(|| panic!("{column} in {row}")).into()
    }

    /// Advances `n` times and returns the `phone` of each row.
    fn phones(data: &DataSources, cursors: &mut UserCursors, scope: &Arc<Scope>, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                data.advance(cursors, scope).expect("a row");
                get(scope, "recipients", "phone")
            })
            .collect()
    }

    const FOUR: &str = "phone,name\n1,a\n2,b\n3,c\n4,d\n";

    #[test]
    fn rows_are_numbered_from_the_first_data_row_and_again_after_recycling() {
        let dir = Dir::new("numbered");
        let file = dir.write("r.csv", FOUR);
        for sharing in [DataScope::Shared, DataScope::PerThread] {
            let data =
                DataSources::open(&[set(&file, &["phone", "name"], DataMode::Sequential, sharing, OnEof::Recycle)])
                    .expect("opens");
            let (mut c, s) = (data.user(0), scope(1, 1));
            for want in [1, 2, 3, 4, 1, 2] {
                data.advance(&mut c, &s).expect("a row");
                let phone = get(&s, "recipients", "phone");
                assert_eq!(data.rows(&c), [(Arc::from("recipients"), want)], "{sharing:?}");
                assert_eq!(phone, want.to_string(), "row {want} holds phone {want}");
            }
        }
        let data =
            DataSources::open(&[set(&file, &["phone", "name"], DataMode::Random, DataScope::Shared, OnEof::Recycle)])
                .expect("opens");
        let (mut c, s) = (data.user(0), scope(3, 1));
        for _ in 0..20 {
            data.advance(&mut c, &s).expect("a row");
            let phone: u64 = get(&s, "recipients", "phone").parse().expect("a number");
            assert_eq!(data.rows(&c), [(Arc::from("recipients"), phone)], "a drawn row's number");
        }
    }

    #[test]
    fn a_user_takes_rows_only_of_the_sets_its_group_reads() {
        let dir = Dir::new("readers");
        let file = dir.write("r.csv", FOUR);
        let mut unique = set(&file, &["phone", "name"], DataMode::Unique, DataScope::Shared, OnEof::StopThread);
        unique.read_by = vec![1];
        let data = DataSources::open(&[unique]).expect("opens");
        let (mut health, sh) = (data.user(0), scope(1, 1));
        for _ in 0..10 {
            assert_eq!(data.advance(&mut health, &sh), Ok(()), "a group that does not read the set never ends on it");
            assert!(sh.var("recipients").is_none() && data.rows(&health).is_empty());
        }
        let (mut buyer, sb) = (data.user(1), scope(1, 2));
        assert_eq!(
            phones(&data, &mut buyer, &sb, 4),
            ["1", "2", "3", "4"],
            "every row goes to the group that reads it"
        );
    }

    #[test]
    fn shared_sequential_goes_in_order_and_recycles() {
        let dir = Dir::new("recycle");
        let file = dir.write("r.csv", FOUR);
        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::Shared,
            OnEof::Recycle,
        )])
        .expect("opens");
        assert!(!data.is_empty());
        let (mut c, s) = (data.user(0), scope(1, 1));
        assert_eq!(phones(&data, &mut c, &s, 9), ["1", "2", "3", "4", "1", "2", "3", "4", "1"]);
        assert_eq!(get(&s, "recipients", "name"), "a");
    }

    #[test]
    fn segments_take_every_nth_shared_row_and_never_the_same() {
        let dir = Dir::new("dealt");
        let file = dir.write("r.csv", FOUR);
        let taken = |i, on_eof, n| {
            let recycle = set(&file, &["phone", "name"], DataMode::Sequential, DataScope::Shared, on_eof);
            let turns = Turns::new(crate::segment::Segment::new(i, 3).unwrap(), 3);
            let data = DataSources::open_segment(&[recycle], turns).expect("opens");
            let (mut c, s) = (data.user(0), scope(1, 1));
            let mut got = Vec::new();
            while got.len() < n && data.advance(&mut c, &s).is_ok() {
                got.push(get(&s, "recipients", "phone"));
            }
            got
        };
        // The whole run's rows 1 2 3 4 1 2 3 4 1 (recycling), dealt round-robin to 3 segments.
        assert_eq!(taken(0, OnEof::Recycle, 3), ["1", "4", "3"]);
        assert_eq!(taken(1, OnEof::Recycle, 3), ["2", "1", "4"]);
        assert_eq!(taken(2, OnEof::Recycle, 3), ["3", "2", "1"]);
        // Without recycling, rows 1..4 once in all: segment 0 gets two, the others one each.
        assert_eq!(taken(0, OnEof::StopThread, 5), ["1", "4"]);
        assert_eq!(taken(1, OnEof::StopThread, 5), ["2"]);
        assert_eq!(taken(2, OnEof::StopThread, 5), ["3"]);
    }

    #[test]
    fn a_shared_cursor_hands_rows_out_in_turn() {
        let dir = Dir::new("shared");
        let file = dir.write("r.csv", FOUR);
        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::Shared,
            OnEof::Recycle,
        )])
        .expect("opens");
        let (mut a, sa) = (data.user(0), scope(1, 1));
        let (mut b, sb) = (data.user(0), scope(1, 2));
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.extend(phones(&data, &mut a, &sa, 1));
            seen.extend(phones(&data, &mut b, &sb, 1));
        }
        assert_eq!(seen, ["1", "2", "3", "4", "1", "2"]);
    }

    #[test]
    fn per_thread_users_each_read_the_whole_file() {
        let dir = Dir::new("per-thread");
        let file = dir.write("r.csv", FOUR);
        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::PerThread,
            OnEof::Recycle,
        )])
        .expect("opens");
        let (mut a, sa) = (data.user(0), scope(1, 1));
        let (mut b, sb) = (data.user(0), scope(1, 2));
        assert_eq!(phones(&data, &mut a, &sa, 2), ["1", "2"]);
        assert_eq!(phones(&data, &mut b, &sb, 5), ["1", "2", "3", "4", "1"]);
        assert_eq!(phones(&data, &mut a, &sa, 3), ["3", "4", "1"]);
    }

    #[test]
    fn unique_hands_each_row_out_once_then_stops_every_user() {
        let dir = Dir::new("unique");
        let file = dir.write("r.csv", FOUR);
        // `recycle` cannot be written with unique in a plan; a unique set built with it still never recycles.
        for on_eof in [OnEof::StopThread, OnEof::Recycle] {
            let data =
                DataSources::open(&[set(&file, &["phone", "name"], DataMode::Unique, DataScope::Shared, on_eof)])
                    .expect("opens");
            let mut users: Vec<_> = (1..=3).map(|vu| (data.user(0), scope(1, vu))).collect();
            let mut got = Vec::new();
            let mut ends = 0;
            for _ in 0..3 {
                for (c, s) in &mut users {
                    match data.advance(c, s) {
                        Ok(()) => got.push(get(s, "recipients", "phone")),
                        Err(e) => {
                            assert_eq!(e, EndOfData { set: Arc::from("recipients"), on_eof: OnEof::StopThread });
                            ends += 1;
                        }
                    }
                }
            }
            got.sort();
            assert_eq!(got, ["1", "2", "3", "4"]);
            assert_eq!(ends, 5);
        }
    }

    #[test]
    fn stop_thread_and_stop_run_end_with_their_action() {
        let dir = Dir::new("stop");
        let file = dir.write("r.csv", FOUR);
        let end = |on_eof| EndOfData { set: Arc::from("recipients"), on_eof };

        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::Shared,
            OnEof::StopRun,
        )])
        .expect("opens");
        let (mut c, s) = (data.user(0), scope(1, 1));
        assert_eq!(phones(&data, &mut c, &s, 4), ["1", "2", "3", "4"]);
        assert_eq!(data.advance(&mut c, &s), Err(end(OnEof::StopRun)));
        assert_eq!(data.advance(&mut data.user(0), &scope(1, 2)), Err(end(OnEof::StopRun)), "the cursor is shared");

        let per_thread = set(&file, &["phone", "name"], DataMode::Sequential, DataScope::PerThread, OnEof::StopThread);
        let data = DataSources::open(&[per_thread]).expect("opens");
        let (mut a, sa) = (data.user(0), scope(1, 1));
        assert_eq!(phones(&data, &mut a, &sa, 4), ["1", "2", "3", "4"]);
        assert_eq!(data.advance(&mut a, &sa), Err(end(OnEof::StopThread)));
        assert_eq!(data.advance(&mut a, &sa), Err(end(OnEof::StopThread)), "and stays ended");
        let (mut b, sb) = (data.user(0), scope(1, 2));
        assert_eq!(phones(&data, &mut b, &sb, 4), ["1", "2", "3", "4"], "another user has its own rows");
        assert_eq!(data.failure(), None);
    }

    #[test]
    fn random_rows_are_the_same_for_the_same_seed_and_user() {
        let dir = Dir::new("random");
        let rows: String = (0..50).map(|i| format!("{i},n{i}\n")).collect();
        let file = dir.write("r.csv", format!("phone,name\n{rows}"));
        let draws = |seed, vu| {
            let random = set(&file, &["phone", "name"], DataMode::Random, DataScope::Shared, OnEof::Recycle);
            let data = DataSources::open(&[random]).expect("opens");
            let (mut c, s) = (data.user(0), scope(seed, vu));
            phones(&data, &mut c, &s, 30)
        };
        let first = draws(7, 1);
        assert_eq!(first, draws(7, 1));
        assert_ne!(first, draws(7, 2), "another user draws other rows");
        assert_ne!(first, draws(8, 1), "another seed draws other rows");
        assert!(first.iter().all(|p| p.parse::<u32>().is_ok_and(|n| n < 50)), "{first:?}");
        let distinct: std::collections::HashSet<_> = first.iter().collect();
        assert!(distinct.len() > 10, "draws spread over the file: {first:?}");
    }

    #[test]
    fn quotes_delimiters_line_endings_and_long_rows() {
        let dir = Dir::new("syntax");
        let long = "x".repeat(5000);
        let text = format!("\u{feff}phone;name\r\n\"+1;2\";\"say \"\"hi\"\"\nthere\"\r\n\r\n\n555;{long}\r\n666;last");
        let file = dir.write("r.csv", text);
        for mode in [DataMode::Sequential, DataMode::Random] {
            let mut s = set(&file, &["phone", "name"], mode, DataScope::PerThread, OnEof::Recycle);
            s.delimiter = b';';
            let data = DataSources::open(&[scanned(s)]).expect("opens");
            let (mut c, sc) = (data.user(0), scope(3, 1));
            let mut seen = std::collections::BTreeMap::new();
            for _ in 0..40 {
                data.advance(&mut c, &sc).expect("a row");
                seen.insert(get(&sc, "recipients", "phone"), get(&sc, "recipients", "name"));
            }
            assert_eq!(seen.len(), 3, "{mode:?}: {seen:?}");
            assert_eq!(seen["+1;2"], "say \"hi\"\nthere");
            assert_eq!(seen["555"], long);
            assert_eq!(seen["666"], "last");
        }
    }

    #[test]
    fn without_a_header_the_first_row_is_data() {
        let dir = Dir::new("columns");
        let file = dir.write("r.csv", "1,a\n2,b\n");
        let mut s = set(&file, &["phone", "name"], DataMode::Sequential, DataScope::Shared, OnEof::Recycle);
        s.has_header = false;
        let data = DataSources::open(&[scanned(s)]).expect("opens");
        let (mut c, sc) = (data.user(0), scope(1, 1));
        assert_eq!(phones(&data, &mut c, &sc, 3), ["1", "2", "1"]);
    }

    #[test]
    fn templates_read_a_row_by_column_name() {
        let dir = Dir::new("template");
        let file = dir.write("r.csv", FOUR);
        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::Shared,
            OnEof::Recycle,
        )])
        .expect("opens");
        let mut templates = Templates::new();
        let (tpl, _) =
            templates.add("to={{ recipients.phone }} hello {{ recipients['name'] }} {{ recipients | list }}").unwrap();
        let (mut c, s) = (data.user(0), scope(1, 1));
        data.advance(&mut c, &s).expect("a row");
        assert_eq!(templates.render(&tpl, &s).unwrap(), "to=1 hello a ['phone', 'name']");
        let (missing, _) = templates.add("{{ recipients.phne }}").unwrap();
        assert!(templates.render(&missing, &s).is_err(), "an unknown column is an error, not an empty string");
    }

    #[test]
    fn every_set_advances_and_the_end_names_its_set() {
        let dir = Dir::new("two");
        let long = dir.write("long.csv", FOUR);
        let short = dir.write("short.csv", "code\nx\ny\n");
        let mut second = set(&short, &["code"], DataMode::Sequential, DataScope::Shared, OnEof::StopRun);
        second.name = Arc::from("codes");
        let first = set(&long, &["phone", "name"], DataMode::Sequential, DataScope::Shared, OnEof::Recycle);
        let data = DataSources::open(&[first, second]).expect("opens");
        let (mut c, s) = (data.user(0), scope(1, 1));
        data.advance(&mut c, &s).expect("a row");
        assert_eq!((get(&s, "recipients", "phone"), get(&s, "codes", "code")), ("1".into(), "x".into()));
        data.advance(&mut c, &s).expect("a row");
        assert_eq!((get(&s, "recipients", "phone"), get(&s, "codes", "code")), ("2".into(), "y".into()));
        assert_eq!(data.advance(&mut c, &s), Err(EndOfData { set: Arc::from("codes"), on_eof: OnEof::StopRun }));
    }

    #[test]
    fn open_fails_on_a_missing_or_shortened_file() {
        let dir = Dir::new("open");
        let missing = set(&dir.0.join("nope.csv"), &["phone"], DataMode::Sequential, DataScope::Shared, OnEof::Recycle);
        assert!(matches!(DataSources::open(&[missing]), Err(DataError::Io { .. })));
        for mode in [DataMode::Sequential, DataMode::Random] {
            let file = dir.write("r.csv", FOUR);
            let s = set(&file, &["phone", "name"], mode, DataScope::Shared, OnEof::Recycle);
            dir.write("r.csv", "phone,name\n");
            let err = DataSources::open(&[s]).expect_err("shorter than scanned");
            assert!(matches!(err, DataError::Shorter { .. }), "{err}");
        }
        assert!(DataSources::open(&[]).expect("no sets").is_empty());
    }

    /// A device or a directory named after the plan was validated is refused when the run starts, at once:
    /// /dev/zero is not read. (FIFOs go through the same `open_regular`; tests/hostile_inputs.rs makes one
    /// with mkfifo, as src/ starts no process, not even in its tests.)
    #[test]
    fn open_refuses_what_is_not_a_regular_file() {
        let dir = Dir::new("kinds");
        let mut paths = vec![(dir.0.clone(), "a directory")];
        if Path::new("/dev/zero").exists() {
            paths.push((PathBuf::from("/dev/zero"), "a character device"));
        }
        for (path, what) in paths {
            for mode in [DataMode::Sequential, DataMode::Random] {
                let s = set(&path, &["phone"], mode, DataScope::Shared, OnEof::Recycle);
                let err = DataSources::open(&[s]).expect_err("not a regular file");
                assert!(matches!(err, DataError::Io { .. }), "{err}");
                assert!(err.to_string().contains(&format!("is {what}")), "{err}");
            }
        }
    }

    /// A row longer than the limit (the file changed after validation) fails its read instead of growing
    /// without bound: the run stops, saying why.
    #[test]
    fn a_row_too_long_fails_the_read() {
        let dir = Dir::new("long-row");
        // Past the limit by more than two buffers of the shared reader, so the reader itself must stop.
        let long = "x".repeat(crate::files::MAX_ROW as usize + 3 * SHARED_BUFFER);
        let file = dir.write("r.csv", format!("phone,name\n1,a\n2,{long}\n3,c\n"));
        let data = DataSources::open(&[set(
            &file,
            &["phone", "name"],
            DataMode::Sequential,
            DataScope::Shared,
            OnEof::Recycle,
        )])
        .expect("opens: the first row is short");
        let (mut c, s) = (data.user(0), scope(1, 1));
        assert_eq!(phones(&data, &mut c, &s, 1), ["1"]);
        assert_eq!(data.advance(&mut c, &s), Err(EndOfData { set: Arc::from("recipients"), on_eof: OnEof::StopRun }));
        let failure = data.failure().expect("the reason is kept");
        assert!(failure.contains("longer than the limit of 1 MiB"), "{failure}");
        let scan = crate::csv_scan::scan(&file, b',', None, true).expect("the scan reads up to the long row");
        assert_eq!(scan.too_long, Some(3), "indexing a random set reads every row");
    }

    /// Sequential reading streams: 100,000 rows read twice round through `advance` wrap correctly, and after
    /// the first row the reader has read no more of the file than its buffer.
    #[test]
    fn a_large_file_is_streamed_twice_round() {
        let dir = Dir::new("large");
        let rows = 100_000;
        let mut text = String::from("phone,name\n");
        for i in 0..rows {
            text.push_str(&format!("{i},name {i}\n"));
        }
        assert!(text.len() > 100 * USER_BUFFER, "the file is far larger than a reader's buffer");
        let file = dir.write("r.csv", &text);
        let per_thread = set(&file, &["phone", "name"], DataMode::Sequential, DataScope::PerThread, OnEof::Recycle);
        let data = DataSources::open(&[per_thread]).expect("opens");
        let (mut c, s) = (data.user(0), scope(1, 1));
        for i in 0..2 * rows + 1 {
            data.advance(&mut c, &s).expect("a row");
            if i == 0 {
                let read = c.own[0].as_ref().expect("a reader after the first advance").reader.get_ref().get_ref().pos;
                assert!(read <= ("phone,name\n".len() + USER_BUFFER) as u64, "read {read} bytes for one row");
            }
            if i % 997 == 0 || (rows - 2..=rows + 1).contains(&i) || i == 2 * rows {
                assert_eq!(get(&s, "recipients", "phone"), (i % rows).to_string(), "advance {i}");
                assert_eq!(get(&s, "recipients", "name"), format!("name {}", i % rows));
            }
        }
    }
}
