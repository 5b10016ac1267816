//! Result files read back, one record at a time: JTL CSV (planrun's, or JMeter's from 2.13 to 5.x with its
//! default or a reduced column set) and planrun's JSON lines.
//!
//! The format is found from the first bytes: a first non-blank byte `{` means JSON (JSON lines, or a summary
//! JSON, which holds no samples); anything else is CSV whose first line must be a header. Columns are found by
//! name in any order, the delimiter (`,`, tab, `;` or `|`) is the one the header line uses, quoted fields may
//! span lines, text is UTF-8 (a field that is not is read as Latin-1). Memory does not grow with the file:
//! one record is decoded at a time, borrowed from the reader's buffer.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde::Deserialize;

use crate::sink::stats::{Observation, ResponseCode};

/// The columns a JTL must have: the report needs when, how long, what, and how each sample ended.
pub const REQUIRED_COLUMNS: [&str; 6] = ["timeStamp", "elapsed", "label", "responseCode", "responseMessage", "success"];

/// Columns read when present; each has a neutral value when absent (0, empty, unknown).
pub const OPTIONAL_COLUMNS: [&str; 4] = ["failureMessage", "bytes", "sentBytes", "allThreads"];

/// Other column names JMeter writes; they are recognised (so a header is told from data) but not read.
const OTHER_COLUMNS: [&str; 14] = [
    "threadName",
    "dataType",
    "grpThreads",
    "URL",
    "Latency",
    "IdleTime",
    "Connect",
    "Hostname",
    "SampleCount",
    "ErrorCount",
    "Encoding",
    "Filename",
    "Variables",
    "responseData",
];

/// The responseMessage JMeter's Transaction Controller (and planrun) gives a transaction's parent sample.
pub const TRANSACTION_MESSAGE: &str = "Number of samples in transaction";

/// Read buffer: the header line must fit in it for the delimiter to be detected.
const BUFFER: usize = 256 * 1024;

/// What a results file holds, found from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JTL CSV with this field delimiter.
    Jtl {
        /// `,`, `\t`, `;` or `|`.
        delimiter: u8,
    },
    /// planrun's JSON lines (`--json`), one object a sample.
    JsonLines,
    /// A summary JSON (`--summary-json`): statistics only, no samples.
    SummaryJson,
}

impl Format {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Jtl { delimiter: b'\t' } => "JTL (tab-delimited)",
            Format::Jtl { .. } => "JTL",
            Format::JsonLines => "JSON lines",
            Format::SummaryJson => "summary JSON",
        }
    }

    /// Every elapsed time read is a multiple of this many µs: 1000 for a JTL (whole ms), 1 for JSON lines.
    pub fn resolution_us(self) -> u64 {
        match self {
            Format::Jtl { .. } => 1000,
            _ => 1,
        }
    }
}

/// Why a results file cannot be read. Every message names the file, and the line when it is about one.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Nothing in the file.
    #[error("{path}: empty file: no header and no samples")]
    Empty { path: String },
    /// The first line names no JTL column.
    #[error(
        "{path}: the first line is not a JTL header ({reason}); planrun finds the columns by their names, so it \
         needs the header line JMeter writes with jmeter.save.saveservice.print_field_names=true"
    )]
    NoHeader {
        path: String,
        /// What the line looks like instead.
        reason: String,
    },
    /// The header lacks columns the report cannot do without.
    #[error("{path}: {}", missing_message(missing, found))]
    MissingColumns {
        path: String,
        /// The required columns not in the header, in [`REQUIRED_COLUMNS`] order.
        missing: Vec<String>,
        /// The header's columns.
        found: Vec<String>,
    },
    /// A record that cannot be read.
    #[error("{path}:{line}: {message}")]
    BadRow {
        path: String,
        /// The line the record starts on, from 1.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A summary JSON where samples were needed.
    #[error("{path} is a summary JSON: it holds statistics, not samples; give the run's JTL or JSON lines file")]
    SummaryOnly { path: String },
}

fn missing_message(missing: &[String], found: &[String]) -> String {
    let s = if missing.len() == 1 { "" } else { "s" };
    format!(
        "cannot read this JTL: the header lacks the required column{s} {}; it has {} (required: {})",
        missing.join(", "),
        found.join(", "),
        REQUIRED_COLUMNS.join(", ")
    )
}

/// One sample as read from a file. Text fields borrow from the reader.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    /// The line of the file the record starts on, from 1.
    pub line: u64,
    /// Start of the sample, ms since the Unix epoch.
    pub start_ms: u64,
    /// Elapsed time, µs (a JTL's whole ms times 1000).
    pub elapsed_us: u64,
    pub label: Cow<'a, str>,
    /// The response code as written.
    pub response_code: Cow<'a, str>,
    /// The response message as written.
    pub response_message: Cow<'a, str>,
    /// Whether the sample passed.
    pub success: bool,
    /// The failure message (empty when there is none or no such column).
    pub failure_message: Cow<'a, str>,
    /// Bytes received (0 when not recorded).
    pub bytes: u64,
    /// Bytes sent (0 when not recorded).
    pub sent_bytes: u64,
    /// Active threads in all groups, when recorded.
    pub all_threads: Option<u32>,
    /// A transaction's parent sample: its response message starts with [`TRANSACTION_MESSAGE`].
    pub transaction: bool,
}

impl Record<'_> {
    /// The statistics' view of the record.
    pub fn observation(&self) -> Observation<'_> {
        Observation {
            label: &self.label,
            start_ms: self.start_ms,
            elapsed_us: self.elapsed_us,
            success: self.success,
            transaction: self.transaction,
            code: ResponseCode::parse(&self.response_code),
            bytes: self.bytes,
            sent_bytes: self.sent_bytes,
        }
    }

    /// Why it failed, in one line: the failure message, else the response message, else the code.
    pub fn failure_text(&self) -> &str {
        [&self.failure_message, &self.response_message, &self.response_code]
            .into_iter()
            .map(|t| t.trim())
            .find(|t| !t.is_empty())
            .unwrap_or("(no message)")
    }
}

/// Finds the format of the file at `path` from its first bytes (reads at most the first line).
pub fn sniff(path: &Path) -> Result<Format, ResultsError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| ResultsError::Io { path: name.clone(), source })?;
    let mut input = BufReader::with_capacity(BUFFER, file);
    let io = |source| ResultsError::Io { path: name.clone(), source };
    match first_byte(&mut input).map_err(io)? {
        None => Err(ResultsError::Empty { path: name }),
        Some(b'{') => {
            let mut line = String::new();
            input.read_line(&mut line).map_err(io)?;
            Ok(json_kind(&line))
        }
        Some(_) => Ok(Format::Jtl { delimiter: detect_delimiter(input.fill_buf().map_err(io)?) }),
    }
}

/// Skips a UTF-8 byte order mark and blank space; returns the first byte left (not consumed).
fn first_byte(input: &mut impl BufRead) -> io::Result<Option<u8>> {
    if input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        input.consume(3);
    }
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                input.consume(i);
                return Ok(Some(b));
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// A first line that is a whole JSON object with sample fields is JSON lines; a summary is pretty-printed
/// (its first line is a lone `{`) or says `"format": "planrun-summary"`.
fn json_kind(first_line: &str) -> Format {
    match serde_json::from_str::<serde_json::Value>(first_line) {
        Ok(serde_json::Value::Object(o)) if o.get("format").and_then(|f| f.as_str()) == Some("planrun-summary") => {
            Format::SummaryJson
        }
        Ok(_) => Format::JsonLines,
        Err(_) => Format::SummaryJson,
    }
}

/// The delimiter the header line uses most: `,`, tab, `;` or `|` (`,` when none).
fn detect_delimiter(head: &[u8]) -> u8 {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let count = |d: u8| line.iter().filter(|&&b| b == d).count();
    let mut best = (0, b',');
    for d in [b',', b'\t', b';', b'|'] {
        if count(d) > best.0 {
            best = (count(d), d);
        }
    }
    best.1
}

/// Reads the records of a JTL or JSON lines file in order, one at a time.
pub struct ResultsReader {
    path: String,
    format: Format,
    source: Source,
    rows: u64,
}

enum Source {
    Csv(Box<CsvRows>),
    Json(JsonRows),
}

impl std::fmt::Debug for ResultsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultsReader").field("path", &self.path).field("format", &self.format).finish()
    }
}

impl ResultsReader {
    /// Opens the file and reads its header (JTL) or first line (JSON).
    pub fn open(path: &Path) -> Result<Self, ResultsError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| ResultsError::Io { path: name.clone(), source })?;
        Self::from_reader(name, file)
    }

    /// Reads results from any reader; `name` names it in errors.
    pub fn from_reader(name: impl Into<String>, reader: impl Read + 'static) -> Result<Self, ResultsError> {
        let path = name.into();
        let mut input = BufReader::with_capacity(BUFFER, Box::new(reader) as Box<dyn Read>);
        let io = |source| ResultsError::Io { path: path.clone(), source };
        let (format, source) = match first_byte(&mut input).map_err(io)? {
            None => return Err(ResultsError::Empty { path }),
            Some(b'{') => {
                let mut first = String::new();
                input.read_line(&mut first).map_err(io)?;
                if json_kind(&first) == Format::SummaryJson {
                    return Err(ResultsError::SummaryOnly { path });
                }
                (Format::JsonLines, Source::Json(JsonRows { input, line: first, pending: true, line_no: 0 }))
            }
            Some(_) => {
                let delimiter = detect_delimiter(input.fill_buf().map_err(io)?);
                (Format::Jtl { delimiter }, Source::Csv(Box::new(CsvRows::new(&path, input, delimiter)?)))
            }
        };
        Ok(ResultsReader { path, format, source, rows: 0 })
    }

    /// What the file holds.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file's name, as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Every elapsed time read is a multiple of this many µs: 1000 for a JTL (whole ms), 1 for JSON lines.
    pub fn resolution_us(&self) -> u64 {
        self.format.resolution_us()
    }

    /// Records returned so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The next record, `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, ResultsError> {
        let record = match &mut self.source {
            Source::Csv(csv) => csv.next(&self.path)?,
            Source::Json(json) => json.next(&self.path)?,
        };
        self.rows += u64::from(record.is_some());
        Ok(record)
    }
}

/// Where each column read is in a CSV record.
#[derive(Debug)]
struct Columns {
    time: usize,
    elapsed: usize,
    label: usize,
    code: usize,
    message: usize,
    success: usize,
    failure: Option<usize>,
    bytes: Option<usize>,
    sent: Option<usize>,
    all_threads: Option<usize>,
}

struct CsvRows {
    reader: csv::Reader<BufReader<Box<dyn Read>>>,
    record: csv::ByteRecord,
    columns: Columns,
    width: usize,
}

impl CsvRows {
    fn new(path: &str, input: BufReader<Box<dyn Read>>, delimiter: u8) -> Result<Self, ResultsError> {
        let mut reader = csv::ReaderBuilder::new().delimiter(delimiter).flexible(true).from_reader(input);
        let header: Vec<String> = match reader.byte_headers() {
            Ok(h) => h.iter().map(|f| String::from_utf8_lossy(f).trim().to_string()).collect(),
            Err(e) => return Err(csv_error(path, e, 1)),
        };
        let find = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
        let known = REQUIRED_COLUMNS.iter().chain(&OPTIONAL_COLUMNS).chain(&OTHER_COLUMNS);
        if !known.into_iter().any(|name| find(name).is_some()) {
            let first = header.first().map(String::as_str).unwrap_or_default();
            let reason = if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
                let first = shown(first.as_bytes());
                format!("it starts with the number {first}: a file without a header")
            } else {
                let shown: String = header.join(",").chars().take(80).collect();
                format!("no known column name in `{shown}`")
            };
            return Err(ResultsError::NoHeader { path: path.to_string(), reason });
        }
        let missing: Vec<String> =
            REQUIRED_COLUMNS.iter().filter(|name| find(name).is_none()).map(|s| s.to_string()).collect();
        if !missing.is_empty() {
            return Err(ResultsError::MissingColumns { path: path.to_string(), missing, found: header });
        }
        let required = |name| find(name).expect("checked above");
        let columns = Columns {
            time: required("timeStamp"),
            elapsed: required("elapsed"),
            label: required("label"),
            code: required("responseCode"),
            message: required("responseMessage"),
            success: required("success"),
            failure: find("failureMessage"),
            bytes: find("bytes"),
            sent: find("sentBytes"),
            all_threads: find("allThreads"),
        };
        Ok(CsvRows { reader, record: csv::ByteRecord::new(), columns, width: header.len() })
    }

    fn next(&mut self, path: &str) -> Result<Option<Record<'_>>, ResultsError> {
        let line = self.reader.position().line();
        match self.reader.read_byte_record(&mut self.record) {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(csv_error(path, e, line)),
        }
        let r = &self.record;
        let line = r.position().map_or(line, |p| p.line());
        let c = &self.columns;
        let bad = |message: String| ResultsError::BadRow { path: path.to_string(), line, message };
        let width = self.width;
        let field =
            |i: usize| r.get(i).ok_or_else(|| bad(format!("the record has {} fields, the header {width}", r.len())));
        let optional = |i: Option<usize>| i.and_then(|i| r.get(i)).unwrap_or_default();
        let number = |name: &str, bytes: &[u8]| {
            parse_u64(bytes).ok_or_else(|| bad(format!("{name} `{}` is not a whole number", shown(bytes))))
        };
        let start_ms = {
            let bytes = field(c.time)?;
            parse_timestamp(bytes).ok_or_else(|| {
                bad(format!(
                    "timeStamp `{}` is neither ms since the epoch nor a date planrun reads ({DATE_FORMATS})",
                    shown(bytes)
                ))
            })?
        };
        let elapsed_ms = number("elapsed", field(c.elapsed)?)?;
        let success = match trim(field(c.success)?) {
            s if s.eq_ignore_ascii_case(b"true") => true,
            s if s.eq_ignore_ascii_case(b"false") => false,
            s => return Err(bad(format!("success `{}` is neither true nor false", shown(s)))),
        };
        let optional_number = |name: &str, i: Option<usize>| match trim(optional(i)) {
            b"" => Ok(0),
            bytes => number(name, bytes),
        };
        let bytes = optional_number("bytes", c.bytes)?;
        let sent_bytes = optional_number("sentBytes", c.sent)?;
        let all_threads = match c.all_threads.map(|i| trim(optional(Some(i)))) {
            None | Some(b"") => None,
            Some(v) => Some(u32::try_from(number("allThreads", v)?).unwrap_or(u32::MAX)),
        };
        let response_message = text(field(c.message)?);
        Ok(Some(Record {
            line,
            start_ms,
            elapsed_us: elapsed_ms.saturating_mul(1000),
            label: text(field(c.label)?),
            response_code: text(field(c.code)?),
            transaction: response_message.starts_with(TRANSACTION_MESSAGE),
            response_message,
            success,
            failure_message: text(optional(c.failure)),
            bytes,
            sent_bytes,
            all_threads,
        }))
    }
}

fn csv_error(path: &str, e: csv::Error, line: u64) -> ResultsError {
    let line = e.position().map_or(line, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(source) => ResultsError::Io { path: path.to_string(), source },
        kind => ResultsError::BadRow { path: path.to_string(), line, message: format!("{kind:?}") },
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

/// A field as an error message quotes it: its first 60 characters, and `...` when there are more (a
/// broken file can hold a field megabytes long).
fn shown(bytes: &[u8]) -> String {
    crate::diag::width::cut_chars(&String::from_utf8_lossy(bytes), 60).into_owned()
}

/// UTF-8 as is; anything else as Latin-1 (JMeter writes the platform's encoding when told to).
fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    }
}

fn parse_u64(bytes: &[u8]) -> Option<u64> {
    let bytes = trim(bytes);
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// The dates [`parse_timestamp`] reads, as `SimpleDateFormat` patterns (for messages and docs).
pub const DATE_FORMATS: &str = "yyyy/MM/dd HH:mm:ss.SSS or yyyy-MM-dd HH:mm:ss.SSS (the .SSS, a 'T' for the \
space and an offset like +01:00 may be there or not)";

/// ms since the epoch, or a date JMeter (or `planrun run --timestamp-format`) may write with
/// `jmeter.save.saveservice.timestamp_format`: with an offset, the instant it says; without one, a time in the
/// local time zone (`TZ`), as JMeter reads and writes it. A local time that occurs twice (the hour the clocks
/// go back) is read as the first.
pub fn parse_timestamp(bytes: &[u8]) -> Option<u64> {
    use chrono::TimeZone;
    if let Some(ms) = parse_u64(bytes) {
        return Some(ms);
    }
    let s = std::str::from_utf8(trim(bytes)).ok()?;
    let instant = |t: i64| u64::try_from(t).ok();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return instant(t.timestamp_millis());
    }
    const DATES: [&str; 3] = ["%Y/%m/%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"];
    for date in DATES {
        if let Ok(t) = chrono::DateTime::parse_from_str(s, &format!("{date}%#z")) {
            return instant(t.timestamp_millis());
        }
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, date) {
            return instant(chrono::Local.from_local_datetime(&t).earliest()?.timestamp_millis());
        }
    }
    None
}

/// What [`parse_timestamp`] makes of a time `format` writes: `Err` with the text when it cannot read it, or
/// reads another second than the one written (a pattern without a date or seconds, with the day and month
/// swapped, or 12-hour times without AM/PM). A format without milliseconds is read to the second.
pub fn read_back(format: &crate::sink::timestamp::TimestampFormat) -> Result<(), String> {
    use chrono::TimeZone;
    // 15 July, 13:14:15.678 local time: a day above 12 and an afternoon hour show swapped and 12-hour fields.
    let local = chrono::NaiveDate::from_ymd_opt(2024, 7, 15).and_then(|d| d.and_hms_milli_opt(13, 14, 15, 678));
    let Some(probe) = local.and_then(|t| chrono::Local.from_local_datetime(&t).earliest()) else {
        return Ok(());
    };
    let probe = probe.timestamp_millis() as u64;
    let text = format.format(probe);
    match parse_timestamp(text.as_bytes()) {
        Some(read) if read <= probe && probe - read < 1000 => Ok(()),
        _ => Err(text),
    }
}

/// One JSON line, as planrun's JSON lines sink writes it; unknown fields are ignored.
#[derive(Debug, Deserialize)]
struct JsonRow {
    timestamp: u64,
    elapsed: Option<u64>,
    elapsed_us: Option<u64>,
    label: String,
    response_code: String,
    #[serde(default)]
    response_message: String,
    success: bool,
    #[serde(default)]
    failure_message: Option<String>,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    sent_bytes: u64,
    #[serde(default)]
    all_threads: Option<u32>,
}

struct JsonRows {
    input: BufReader<Box<dyn Read>>,
    /// The current line; the first one is read while sniffing and still `pending`.
    line: String,
    pending: bool,
    line_no: u64,
}

impl JsonRows {
    fn next(&mut self, path: &str) -> Result<Option<Record<'_>>, ResultsError> {
        loop {
            if self.pending {
                self.pending = false;
            } else {
                self.line.clear();
                let n = self
                    .input
                    .read_line(&mut self.line)
                    .map_err(|source| ResultsError::Io { path: path.to_string(), source })?;
                if n == 0 {
                    return Ok(None);
                }
            }
            self.line_no += 1;
            if !self.line.trim().is_empty() {
                break;
            }
        }
        let line = self.line_no;
        let bad = |message: String| ResultsError::BadRow { path: path.to_string(), line, message };
        let row: JsonRow =
            serde_json::from_str(&self.line).map_err(|e| bad(format!("not a JSON lines record: {e}")))?;
        let elapsed_us = match (row.elapsed_us, row.elapsed) {
            (Some(us), _) => us,
            (None, Some(ms)) => ms.saturating_mul(1000),
            (None, None) => return Err(bad("neither `elapsed` nor `elapsed_us`".into())),
        };
        Ok(Some(Record {
            line,
            start_ms: row.timestamp,
            elapsed_us,
            transaction: row.response_message.starts_with(TRANSACTION_MESSAGE),
            label: Cow::Owned(row.label),
            response_code: Cow::Owned(row.response_code),
            response_message: Cow::Owned(row.response_message),
            success: row.success,
            failure_message: Cow::Owned(row.failure_message.unwrap_or_default()),
            bytes: row.bytes,
            sent_bytes: row.sent_bytes,
            all_threads: row.all_threads,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str) -> Result<Vec<Record<'static>>, ResultsError> {
        let mut reader = ResultsReader::from_reader("memory", io::Cursor::new(text.as_bytes().to_vec()))?;
        let mut out = Vec::new();
        while let Some(r) = reader.next_record()? {
            out.push(Record {
                label: Cow::Owned(r.label.into_owned()),
                response_code: Cow::Owned(r.response_code.into_owned()),
                response_message: Cow::Owned(r.response_message.into_owned()),
                failure_message: Cow::Owned(r.failure_message.into_owned()),
                ..r
            });
        }
        Ok(out)
    }

    #[test]
    fn columns_by_name_in_any_order_with_a_reduced_set() {
        let text = "label;success;elapsed;responseMessage;timeStamp;responseCode\nhome;true;12;OK;1000;200\n";
        let rows = read_all(text).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.start_ms, r.elapsed_us, &*r.label, r.success, r.bytes, r.all_threads),
            (1000, 12_000, "home", true, 0, None)
        );
    }

    #[test]
    fn quoted_multi_line_non_ascii_and_latin1() {
        let mut text = b"timeStamp,elapsed,label,responseCode,responseMessage,success,failureMessage\n".to_vec();
        text.extend_from_slice("1,2,\"Requête \"\"x\"\"\nline 2\",500,KO,false,\"a, b\"\n".as_bytes());
        text.extend_from_slice(b"3,4,caf\xe9,200,OK,true,\n");
        let mut reader = ResultsReader::from_reader("memory", io::Cursor::new(text)).unwrap();
        let first = reader.next_record().unwrap().unwrap();
        assert_eq!((&*first.label, first.line, first.failure_text()), ("Requête \"x\"\nline 2", 2, "a, b"));
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!((&*second.label, second.line), ("café", 4));
        assert!(reader.next_record().unwrap().is_none());
        assert_eq!(reader.rows(), 2);
    }

    #[test]
    fn dates_and_transactions() {
        let text = "timeStamp\telapsed\tlabel\tresponseCode\tresponseMessage\tsuccess\n\
                    2024/01/31 12:00:00.250\t5\ttx\t\tNumber of samples in transaction : 1, number of failing samples : 1\tfalse\n";
        // A date without an offset is a local time (the tests' TZ may be any zone).
        let local = |ms: i64| {
            use chrono::TimeZone;
            let utc = chrono::DateTime::from_timestamp_millis(ms).unwrap().naive_utc();
            chrono::Local.from_local_datetime(&utc).earliest().unwrap().timestamp_millis() as u64
        };
        let rows = read_all(text).unwrap();
        assert_eq!(rows[0].start_ms, local(1_706_702_400_250));
        assert!(rows[0].transaction);
        assert_eq!(parse_timestamp(b"2024-01-31 12:00:00"), Some(local(1_706_702_400_000)));
        assert_eq!(parse_timestamp(b"2024-01-31T12:00:00Z"), Some(1_706_702_400_000));
        for offset in ["+01:00", "+0100", "+01"] {
            for date in ["2024-01-31 13:00:00.250", "2024/01/31 13:00:00.250", "2024-01-31T13:00:00.250"] {
                let text = format!("{date}{offset}");
                assert_eq!(parse_timestamp(text.as_bytes()), Some(1_706_702_400_250), "{text}");
            }
        }
        assert_eq!(parse_timestamp(b"31.01.2024 12:00:00"), None);
    }

    #[test]
    fn timestamp_formats_that_read_back() {
        use crate::sink::timestamp::TimestampFormat;
        let check = |pattern: &str| read_back(&TimestampFormat::parse(pattern).unwrap());
        for pattern in ["ms", "yyyy-MM-dd HH:mm:ss.SSS", "yyyy/MM/dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"] {
            assert_eq!(check(pattern), Ok(()), "{pattern}");
        }
        for pattern in ["dd.MM.yyyy HH:mm:ss", "yyyy-dd-MM HH:mm:ss", "yyyy-MM-dd hh:mm:ss", "HH:mm:ss.SSS"] {
            assert!(check(pattern).is_err(), "{pattern}");
        }
        assert_eq!(check("dd.MM.yyyy HH:mm:ss"), Err("15.07.2024 13:14:15".to_string()));
    }

    #[test]
    fn clear_errors() {
        let missing = read_all("timeStamp,elapsed,label,success\n1,2,x,true\n").unwrap_err().to_string();
        assert!(missing.contains("lacks the required columns responseCode, responseMessage"), "{missing}");
        let headerless = read_all("1549967385359,0,x,200,OK,true\n").unwrap_err().to_string();
        assert!(headerless.contains("not a JTL header") && headerless.contains("1549967385359"), "{headerless}");
        let bad = read_all(
            "timeStamp,elapsed,label,responseCode,responseMessage,success\n1,2,x,200,OK,true\n1,zz,x,200,OK,true\n",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(bad, "memory:3: elapsed `zz` is not a whole number");
        let short =
            read_all("timeStamp,elapsed,label,responseCode,responseMessage,success\n1,2,x\n").unwrap_err().to_string();
        assert_eq!(short, "memory:2: the record has 3 fields, the header 6");
        assert!(matches!(read_all(" \n"), Err(ResultsError::Empty { .. })));
        assert!(matches!(read_all("{\n  \"format\": \"planrun-summary\"\n}\n"), Err(ResultsError::SummaryOnly { .. })));
    }

    #[test]
    fn json_lines() {
        let text = "\u{feff}{\"timestamp\":5,\"elapsed\":4,\"elapsed_us\":4321,\"label\":\"a\",\"response_code\":\"202\",\"success\":true,\"all_threads\":3}\n\n\
                    {\"timestamp\":6,\"elapsed\":7,\"label\":\"b\",\"response_code\":\"Non HTTP response code: ReadTimeout\",\"response_message\":\"m\",\"success\":false,\"failure_message\":\"f\"}\n";
        let rows = read_all(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].elapsed_us, rows[0].all_threads, rows[0].line), (4321, Some(3), 1));
        assert_eq!((rows[1].elapsed_us, rows[1].failure_text(), rows[1].line), (7000, "f", 3));
        let broken = read_all("{\"timestamp\":5}\n").unwrap_err().to_string();
        assert!(broken.starts_with("memory:1: not a JSON lines record: missing field"), "{broken}");
    }
}
