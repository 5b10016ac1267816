//! A CSV data set's file, read the one way both the plan's validation and the run read it: only a regular
//! file, past a UTF-8 byte order mark, with the set's delimiter, quoted fields, blank lines skipped, and a row
//! read up to [`MAX_ROW`] bytes and no further.
//!
//! [`scan`] reads the file once, streaming, when the plan is loaded. What it finds serves both: validation
//! turns the header, the field counts and the encoding into diagnostics (`plan::data_sets`), and the run starts
//! reading at [`Scan::first_row`] and draws random rows from [`Scan::starts`] (`run::data_rows`), without
//! reading the file again before it starts. Memory does not depend on the file's size, except for the
//! offsets of a random set's rows (8 bytes a row), which its run needs anyway.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use crate::files::{open_regular, RowLimit, RowTooLong, MAX_ROW};

/// A UTF-8 byte order mark, which spreadsheet programs put at the start of the CSV files they save.
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Read buffer of the load-time scan.
const SCAN_BUFFER: usize = 64 << 10;

/// A streaming CSV reader of a data set's rows over `source`, with a buffer of `buffer` bytes.
pub fn rows_reader<R: Read>(source: R, delimiter: u8, buffer: usize) -> csv::Reader<RowLimit<R>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .buffer_capacity(buffer)
        .from_reader(RowLimit::new(source))
}

/// What the one pass over a data file found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The file's length when it was scanned; the run reads no further.
    pub len: u64,
    /// The header row (its fields, trimmed) and its line, when the file has one (no `columns:`).
    pub header: Option<(Vec<String>, u64)>,
    /// The number of fields a row must have: `columns:`'s, else the header's.
    pub fields: Option<usize>,
    /// Data rows.
    pub rows: u64,
    /// The byte offset of the first data row (after the byte order mark and the header row).
    pub first_row: u64,
    /// The byte offset of every data row, when asked for (a random set's draws).
    pub starts: Option<Arc<[u64]>>,
    /// The first row whose field count is not [`fields`](Self::fields): its line and its count.
    pub first_ragged: Option<(u64, usize)>,
    /// How many rows have the wrong field count.
    pub ragged: u64,
    /// The line of the first row that is not valid UTF-8.
    pub bad_utf8: Option<u64>,
    /// The line of the first data row when it holds exactly `columns:`'s names (a header `columns:` says
    /// the file does not have).
    pub repeats_columns: Option<u64>,
    /// The line a row longer than [`MAX_ROW`] starts on: the scan stopped there.
    pub too_long: Option<u64>,
}

/// Why a data file cannot be scanned.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// It cannot be opened (missing, not a regular file) or read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A row that is not CSV the reader can read.
    #[error("{0}")]
    Csv(#[from] csv::Error),
}

/// Reads a data file once: `columns` are the set's `columns:` (then the file has no header row); `index`
/// asks for every row's offset.
pub fn scan(path: &Path, delimiter: u8, columns: Option<&[Arc<str>]>, index: bool) -> Result<Scan, ScanError> {
    let mut file = open_regular(path)?;
    let len = file.metadata()?.len();
    let bom = bom_len(&mut file)?;
    file.seek(SeekFrom::Start(bom))?;
    let mut reader = rows_reader(file, delimiter, SCAN_BUFFER);
    let mut record = csv::ByteRecord::new();
    let mut out = Scan { len, fields: columns.map(<[_]>::len), first_row: bom, ..Scan::default() };
    let mut starts = index.then(Vec::new);
    loop {
        let start = reader.position().clone();
        reader.get_mut().start_row();
        // The line a row too long starts on: the record's own when it was read whole, else where the csv
        // reader stood after the row before.
        let too_long = match reader.read_byte_record(&mut record) {
            Ok(true) => {
                (reader.position().byte() - start.byte() > MAX_ROW).then(|| record.position().map_or(0, |p| p.line()))
            }
            Ok(false) => break,
            Err(e) if RowTooLong::is(&e) => Some(start.line()),
            Err(e) => return Err(e.into()),
        };
        if too_long.is_some() {
            out.too_long = too_long;
            return Ok(out);
        }
        let (line, at) = record.position().map_or((0, 0), |p| (p.line(), p.byte()));
        if out.bad_utf8.is_none() && record.iter().any(|field| std::str::from_utf8(field).is_err()) {
            out.bad_utf8 = Some(line);
        }
        let Some(want) = out.fields else {
            out.fields = Some(record.len());
            let names = record.iter().map(|f| String::from_utf8_lossy(f).trim().to_string()).collect();
            out.header = Some((names, line));
            out.first_row = bom + reader.position().byte();
            continue;
        };
        if out.rows == 0 && columns.is_some_and(|c| repeats(&record, c)) {
            out.repeats_columns = Some(line);
        }
        if record.len() != want {
            out.first_ragged.get_or_insert((line, record.len()));
            out.ragged += 1;
        }
        if let Some(starts) = &mut starts {
            starts.push(bom + at);
        }
        out.rows += 1;
    }
    out.starts = starts.map(Arc::from);
    Ok(out)
}

/// 3 when the file starts with a UTF-8 byte order mark, else 0.
fn bom_len(file: &mut File) -> io::Result<u64> {
    let mut head = [0u8; 3];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(if head[..got] == *BOM { 3 } else { 0 })
}

/// True when a row holds exactly the names of `columns:`.
fn repeats(record: &csv::ByteRecord, columns: &[Arc<str>]) -> bool {
    record.len() == columns.len() && record.iter().zip(columns).all(|(f, c)| f.trim_ascii() == c.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_finds_the_header_the_rows_and_their_offsets() {
        let dir = std::env::temp_dir().join(format!("planrun-data-set-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the temp dir");
        let path = dir.join("r.csv");
        let text = "\u{feff}phone; name\r\n\"1;x\";a\n\n2;b;extra\n3;c\n";
        std::fs::write(&path, text).expect("write");
        let s = scan(&path, b';', None, true).expect("scans");
        assert_eq!(s.header, Some((vec!["phone".to_string(), "name".to_string()], 1)));
        assert_eq!((s.rows, s.fields, s.first_ragged, s.ragged), (3, Some(2), Some((3, 3)), 1));
        assert_eq!(s.len, text.len() as u64);
        let starts: Vec<u64> = s.starts.as_deref().expect("indexed").to_vec();
        assert_eq!(s.first_row, starts[0]);
        let bytes = text.as_bytes();
        // A row starts where the csv reader began it: a CRLF's LF may come first (read as a blank line).
        let at = |i: usize| String::from_utf8_lossy(&bytes[starts[i] as usize..]).trim_start_matches('\n').to_string();
        assert!(at(0).starts_with("\"1;x\"") && at(1).starts_with("2;b") && at(2).starts_with("3;c"), "{starts:?}");

        let columns: Vec<Arc<str>> = vec![Arc::from("phone"), Arc::from("name")];
        let s = scan(&path, b';', Some(&columns), false).expect("scans");
        assert_eq!((s.header, s.rows, s.first_row, s.starts.is_none()), (None, 4, 3, true));
        assert_eq!(s.repeats_columns, Some(1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
