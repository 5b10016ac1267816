//! The JTL CSV sink: JMeter 5's default columns, one row per sample (see `docs/results.md`).

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::file::{Landed, RecordFile};
use super::timestamp::TimestampFormat;
use super::{Sink, SinkError};
use crate::sample::{DataType, Outcome, Sample};

/// The header line JMeter 5 writes, verbatim (without the line end).
pub const JTL_HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,\
failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// Writes samples as JTL CSV rows.
///
/// Each batch is formatted in memory and handed to the file in one write, so the file only ever holds
/// complete rows: a killed process leaves a readable file, and when a write fails (a full disk) a regular
/// file is cut back to its last complete row before the error is reported.
pub struct JtlSink<W: Write = File> {
    file: RecordFile<W>,
    text: RowText,
    time: TimestampFormat,
}

impl JtlSink<File> {
    /// Creates (or truncates) the file at `path`, its parent directories included, and writes the header;
    /// a device or FIFO that exists is written as it is.
    pub fn create(path: &Path) -> Result<Self, SinkError> {
        Self::open(path, false)
    }

    /// [`create`](Self::create), or with `append` the rows go after those a regular file holds (its header
    /// must be planrun's).
    pub fn open(path: &Path, append: bool) -> Result<Self, SinkError> {
        let file = RecordFile::create(path, header().as_bytes(), append)?;
        Ok(JtlSink { file, text: RowText::default(), time: TimestampFormat::Millis })
    }
}

fn header() -> String {
    format!("{JTL_HEADER}\n")
}

impl<W: Write> JtlSink<W> {
    /// Writes JTL to any writer; `name` names it in errors. The header is written at once.
    pub fn new(writer: W, name: impl Into<String>) -> Result<Self, SinkError> {
        let file = RecordFile::new(writer, name.into(), header().as_bytes())?;
        Ok(JtlSink { file, text: RowText::default(), time: TimestampFormat::Millis })
    }

    /// Writes `timeStamp` in this format (milliseconds since the epoch by default).
    pub fn with_timestamp_format(mut self, time: TimestampFormat) -> Self {
        self.time = time;
        self
    }

    /// Flushes and returns the writer.
    pub fn into_inner(self) -> Result<W, SinkError> {
        self.file.into_inner()
    }

    // Inlined into the loop over a batch, as it was before sub-results gave it a second caller.
    #[inline(always)]
    fn write_row(&mut self, s: &Sample) {
        let out = self.file.buffer();
        let mut n = itoa::Buffer::new();
        match &self.time {
            TimestampFormat::Millis => num(out, &mut n, s.start_ms),
            time => field(out, &time.format(s.start_ms)),
        }
        num(out, &mut n, s.elapsed_us / 1000);
        field(out, &s.label);
        // Responses, nearly every row, are written straight from the sample; the rest are assembled first.
        let t = &s.thread;
        match &s.outcome {
            Outcome::Response { status, reason } if !needs_quotes(t.group.as_bytes()) => {
                num(out, &mut n, u64::from(*status));
                field(out, reason);
                out.extend_from_slice(t.group.as_bytes());
                out.push(b' ');
                num(out, &mut n, u64::from(t.group_no));
                *out.last_mut().expect("a digit was just written") = b'-';
                num(out, &mut n, u64::from(t.vu));
            }
            _ => {
                self.text.fill(s);
                field(out, &self.text.code);
                field(out, &self.text.message);
                field(out, &self.text.thread);
            }
        }
        // The texts of `data_type_str` and `success`, none of which needs quotes, as constants.
        match s.data_type {
            DataType::Text => out.extend_from_slice(b"text,"),
            DataType::Bin => out.extend_from_slice(b"bin,"),
            DataType::None => out.push(b','),
        }
        if s.success {
            out.extend_from_slice(b"true,");
        } else {
            out.extend_from_slice(b"false,");
        }
        match &s.failure {
            Some(failure) => field(out, failure),
            None => out.push(b','),
        }
        num(out, &mut n, s.bytes);
        num(out, &mut n, s.sent_bytes);
        num(out, &mut n, u64::from(s.grp_threads));
        num(out, &mut n, u64::from(s.all_threads));
        match &s.url {
            Some(url) => field_bytes(out, url.as_bytes()),
            None => out.extend_from_slice(b"null,"),
        }
        num(out, &mut n, s.latency_us / 1000);
        num(out, &mut n, s.idle_us / 1000);
        num(out, &mut n, s.connect_us / 1000);
        // The last field's comma becomes the line end.
        if let Some(last) = out.last_mut() {
            *last = b'\n';
        }
    }
}

/// Appends a number and its comma. Most numbers in a row (milliseconds, thread counts, statuses, small byte
/// counts) have at most three digits; they are written without a call.
#[inline(always)]
fn num(out: &mut Vec<u8>, n: &mut itoa::Buffer, v: u64) {
    let digit = |d: u64| b'0' + (d % 10) as u8;
    if v < 10 {
        out.extend_from_slice(&[digit(v), b',']);
    } else if v < 100 {
        out.extend_from_slice(&[digit(v / 10), digit(v), b',']);
    } else if v < 1000 {
        out.extend_from_slice(&[digit(v / 100), digit(v / 10), digit(v), b',']);
    } else {
        out.extend_from_slice(n.format(v).as_bytes());
        out.push(b',');
    }
}

/// Appends one CSV field and its comma, quoted only when it must be (RFC 4180: a comma, a quote or a line
/// break inside; quotes doubled), as JMeter writes them.
fn field(out: &mut Vec<u8>, text: &str) {
    field_bytes(out, text.as_bytes());
}

/// [`field`] of text given as its bytes.
fn field_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    if needs_quotes(bytes) {
        quoted(out, bytes);
    } else {
        out.extend_from_slice(bytes);
    }
    out.push(b',');
}

/// `bytes` in quotes, its quotes doubled.
#[cold]
fn quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for part in bytes.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Whether `bytes` holds one of [`QUOTED`]'s bytes; eight bytes at a time from eight on (a URL, a message).
fn needs_quotes(bytes: &[u8]) -> bool {
    let Some(last) = bytes.last_chunk::<8>() else {
        return needs_quotes_bytewise(bytes);
    };
    // The last word overlaps the words before it when the length is not a multiple of eight: no matter for
    // a yes-or-no answer.
    bytes.chunks_exact(8).filter_map(|w| w.first_chunk::<8>()).any(|w| word_needs_quotes(*w))
        || word_needs_quotes(*last)
}

/// [`needs_quotes`] a byte at a time: the reference the word-wise form is tested against.
fn needs_quotes_bytewise(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| QUOTED[usize::from(b)])
}

/// Whether eight bytes hold `,` `"` CR or LF: a byte equal to `c` is a zero byte of `word ^ c` (in every
/// byte), and `(x - 0x01..01) & !x & 0x80..80` is non-zero exactly when `x` has a zero byte.
///
/// The four are all below `-` (0x2d), and most words of a URL or a label have no byte that low: one test
/// for "some byte below 0x2d" (the same borrow trick) clears them before the four.
fn word_needs_quotes(word: [u8; 8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let x = u64::from_le_bytes(word);
    if x.wrapping_sub(ONES * u64::from(b'-')) & !x & HIGHS == 0 {
        return false;
    }
    let zero_byte = |c: u8| {
        let t = x ^ (ONES * u64::from(c));
        t.wrapping_sub(ONES) & !t
    };
    (zero_byte(b',') | zero_byte(b'"') | zero_byte(b'\n') | zero_byte(b'\r')) & HIGHS != 0
}

/// The bytes that make a field need quotes: `,` `"` CR LF.
const QUOTED: [bool; 256] = {
    let mut t = [false; 256];
    t[b',' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t
};

impl<W: Write + Send> Sink for JtlSink<W> {
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError> {
        for sample in batch {
            self.write_row(sample);
            // JMeter 5 writes a sample's sub-results right after it, in order; one record with it, so a file
            // cut back after a failed write keeps a sample with all its rows or not at all.
            for sub in sample.sub_results() {
                self.write_row(sub);
            }
            self.file.end_record();
        }
        self.file.commit()
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        self.file.finish()
    }

    fn name(&self) -> &str {
        self.file.name()
    }

    fn landed(&self) -> Option<Arc<Landed>> {
        Some(self.file.landed())
    }
}

/// JMeter's `dataType` text; `None` where JMeter writes an empty field.
pub(crate) fn data_type_str(data_type: DataType) -> Option<&'static str> {
    match data_type {
        DataType::Text => Some("text"),
        DataType::Bin => Some("bin"),
        DataType::None => None,
    }
}

/// The text columns of a row that must be assembled, in buffers reused from row to row.
#[derive(Debug, Default)]
pub(crate) struct RowText {
    /// `responseCode`.
    pub code: String,
    /// `responseMessage`.
    pub message: String,
    /// `threadName`.
    pub thread: String,
}

impl RowText {
    /// Fills the buffers for `s`; the same texts as [`Sample::response_code`] and [`Sample::response_message`].
    #[cold]
    pub fn fill(&mut self, s: &Sample) {
        self.code.clear();
        self.message.clear();
        self.thread.clear();
        // Writing to a String cannot fail.
        match &s.outcome {
            Outcome::Response { status, reason } => {
                self.code.push_str(itoa::Buffer::new().format(*status));
                self.message.push_str(reason);
            }
            Outcome::Error { kind, message } => {
                let _ = write!(self.code, "Non HTTP response code: {}", kind.as_str());
                let _ = write!(self.message, "Non HTTP response message: {message}");
            }
            Outcome::Transaction { children, failed } => {
                if *failed == 0 {
                    self.code.push_str("200");
                }
                let _ = write!(
                    self.message,
                    "Number of samples in transaction : {children}, number of failing samples : {failed}"
                );
            }
        }
        let t = &s.thread;
        let mut n = itoa::Buffer::new();
        self.thread.push_str(&t.group);
        self.thread.push(' ');
        self.thread.push_str(n.format(t.group_no));
        self.thread.push('-');
        self.thread.push_str(n.format(t.vu));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::sample::tests::sample;
    use std::sync::Arc;

    use super::*;
    use crate::sample::{ErrorKind, SampleUrl, ThreadId};

    fn samples() -> Vec<Sample> {
        let refused = Sample {
            start_ms: 1_764_547_200_130,
            elapsed_us: 999,
            latency_us: 999,
            connect_us: 999,
            outcome: Outcome::Error { kind: ErrorKind::ConnectionRefused, message: "Connection refused".into() },
            data_type: DataType::None,
            success: false,
            bytes: 0,
            sent_bytes: 0,
            ..sample("sendsms")
        };
        let failed = Sample {
            outcome: Outcome::Response { status: 403, reason: "Forbidden".into() },
            success: false,
            failure: Some(r#"Test failed: text expected to contain /a, "b"/"#.into()),
            connect_us: 0,
            ..sample("sendsms")
        };
        let transaction = Sample {
            start_ms: 1_764_547_200_120,
            elapsed_us: 16_400,
            latency_us: 3_000,
            connect_us: 0,
            idle_us: 9_000,
            label: "send one sms".into(),
            outcome: Outcome::Transaction { children: 1, failed: 1 },
            data_type: DataType::None,
            success: false,
            url: None,
            ..failed.clone()
        };
        vec![sample("sendsms"), refused, failed, transaction]
    }

    const GOLDEN: &str = "\
timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect
1764547200123,4,sendsms,202,Accepted,senders 1-17,text,true,,213,187,2,3,http://127.0.0.1:13013/cgi-bin/sendsms?to=1&text=Hello+world,4,0,1
1764547200130,0,sendsms,Non HTTP response code: ConnectionRefused,Non HTTP response message: Connection refused,senders 1-17,,false,,0,0,2,3,http://127.0.0.1:13013/cgi-bin/sendsms?to=1&text=Hello+world,0,0,0
1764547200123,4,sendsms,403,Forbidden,senders 1-17,text,false,\"Test failed: text expected to contain /a, \"\"b\"\"/\",213,187,2,3,http://127.0.0.1:13013/cgi-bin/sendsms?to=1&text=Hello+world,4,0,0
1764547200120,16,send one sms,,\"Number of samples in transaction : 1, number of failing samples : 1\",senders 1-17,,false,\"Test failed: text expected to contain /a, \"\"b\"\"/\",213,187,2,3,null,3,9,0
";

    #[test]
    fn writes_the_golden_file() {
        let mut sink = JtlSink::new(Vec::new(), "memory").unwrap();
        sink.write(&samples()[..2]).unwrap();
        sink.write(&samples()[2..]).unwrap();
        sink.finish().unwrap();
        let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
        assert_eq!(text, GOLDEN);
    }

    #[test]
    fn rows_read_back_field_by_field() {
        let mut sink = JtlSink::new(Vec::new(), "memory").unwrap();
        let samples = samples();
        sink.write(&samples).unwrap();
        let bytes = sink.into_inner().unwrap();
        let mut reader = csv::Reader::from_reader(&bytes[..]);
        assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>().join(","), JTL_HEADER);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), samples.len());
        for (row, s) in rows.iter().zip(&samples) {
            let expected = expected_columns(s);
            assert_eq!(row.iter().collect::<Vec<_>>(), expected.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }

    /// A row's columns as the sample's texts and numbers, written the plain way.
    fn expected_columns(s: &Sample) -> [String; 17] {
        [
            s.start_ms.to_string(),
            (s.elapsed_us / 1000).to_string(),
            s.label.to_string(),
            s.response_code(),
            s.response_message(),
            format!("{} {}-{}", s.thread.group, s.thread.group_no, s.thread.vu),
            data_type_str(s.data_type).unwrap_or("").into(),
            s.success.to_string(),
            s.failure.clone().unwrap_or_default(),
            s.bytes.to_string(),
            s.sent_bytes.to_string(),
            s.grp_threads.to_string(),
            s.all_threads.to_string(),
            s.url.as_deref().unwrap_or("null").to_string(),
            (s.latency_us / 1000).to_string(),
            (s.idle_us / 1000).to_string(),
            (s.connect_us / 1000).to_string(),
        ]
    }

    proptest::proptest! {
        /// The hand-written quoting reads back as the same text through the csv crate's reader.
        #[test]
        fn any_text_reads_back_unchanged(text in ".*", other in "[a-z,\"\r\n ]{0,12}") {
            // A row starts with a number, as JTL rows do (a reader drops a byte-order mark at the very start).
            let mut row = b"1,".to_vec();
            field(&mut row, &text);
            field(&mut row, &other);
            *row.last_mut().unwrap() = b'\n';
            let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(&row[..]);
            let record = reader.records().next().unwrap().unwrap();
            proptest::prop_assert_eq!(record.iter().collect::<Vec<_>>(), vec!["1", text.as_str(), other.as_str()]);
        }
    }

    proptest::proptest! {
        /// The word-wise check answers as the byte-wise one, for any bytes (specials often among them) at
        /// any length around the word size.
        #[test]
        fn needs_quotes_word_wise_agrees_with_byte_wise(
            bytes in proptest::collection::vec(proptest::prop_oneof![
                proptest::prelude::any::<u8>(),
                proptest::prelude::Just(b','),
                proptest::prelude::Just(b'"'),
                proptest::prelude::Just(b'\r'),
                proptest::prelude::Just(b'\n'),
            ], 0..40),
            clean in proptest::collection::vec(0x2du8..=0xff, 0..40),
        ) {
            proptest::prop_assert_eq!(needs_quotes(&bytes), needs_quotes_bytewise(&bytes));
            proptest::prop_assert!(!needs_quotes(&clean));
        }

        /// Numbers are written as itoa writes them, with their comma.
        #[test]
        fn numbers_are_written_as_itoa_writes_them(v in proptest::prop_oneof![0u64..2000, proptest::prelude::any::<u64>()]) {
            let mut out = b"x".to_vec();
            num(&mut out, &mut itoa::Buffer::new(), v);
            proptest::prop_assert_eq!(out, format!("x{v},").into_bytes());
        }
    }

    /// Any sample: hostile texts (commas, quotes, CR, LF, any character) in every text column, any numbers.
    fn any_sample() -> impl proptest::strategy::Strategy<Value = Sample> {
        use proptest::prelude::*;
        let text = || prop_oneof![".{0,24}", "[a-z,\"\r\n ]{0,12}", Just(String::new())];
        let outcome = prop_oneof![
            (any::<u16>(), text()).prop_map(|(status, reason)| Outcome::Response { status, reason: reason.into() }),
            (prop_oneof![Just(ErrorKind::ConnectionRefused), Just(ErrorKind::ReadTimeout)], text())
                .prop_map(|(kind, message)| Outcome::Error { kind, message }),
            (any::<u32>(), any::<u32>()).prop_map(|(children, failed)| Outcome::Transaction { children, failed }),
        ];
        let data_type = prop_oneof![Just(DataType::Text), Just(DataType::Bin), Just(DataType::None)];
        let numbers =
            (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>());
        let threads = (text(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>());
        let texts = (text(), proptest::option::of(text()), proptest::option::of(text()));
        (numbers, threads, texts, outcome, data_type, any::<bool>()).prop_map(
            |(
                (start_ms, elapsed_us, latency_us, connect_us, idle_us, bytes, sent_bytes),
                (group, group_no, vu, grp_threads, all_threads),
                (label, failure, url),
                outcome,
                data_type,
                success,
            )| Sample {
                start_ms,
                elapsed_us,
                latency_us,
                connect_us,
                idle_us,
                label: label.into(),
                outcome,
                thread: ThreadId { group: group.into(), group_no, vu },
                data_type,
                success,
                failure,
                bytes,
                sent_bytes,
                grp_threads,
                all_threads,
                url: url.map(SampleUrl::from),
                protocol: None,
                detail: None,
            },
        )
    }

    proptest::proptest! {
        /// Any batch of samples reads back, column by column, as the samples' texts and numbers.
        #[test]
        fn any_sample_reads_back_column_by_column(samples in proptest::collection::vec(any_sample(), 1..8)) {
            let mut sink = JtlSink::new(Vec::new(), "memory").unwrap();
            sink.write(&samples).unwrap();
            let bytes = sink.into_inner().unwrap();
            let mut reader = csv::Reader::from_reader(&bytes[..]);
            let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
            proptest::prop_assert_eq!(rows.len(), samples.len());
            for (row, s) in rows.iter().zip(&samples) {
                let expected = expected_columns(s);
                proptest::prop_assert_eq!(row.iter().collect::<Vec<_>>(), expected.iter().map(String::as_str).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn every_special_byte_at_every_place_needs_quotes() {
        for len in 1..=24 {
            for at in 0..len {
                for special in [b',', b'"', b'\r', b'\n'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    assert!(needs_quotes(&bytes), "{special} at {at} of {len}");
                }
            }
            assert!(!needs_quotes(&vec![b'a'; len]));
        }
    }

    #[test]
    fn any_two_neighbouring_bytes_in_a_word_need_quotes_as_byte_by_byte() {
        // A borrow out of one lane must not hide a special byte in the next (the word-wise prefilter).
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for at in [0, 3, 6] {
                    let mut word = *b"/-~./-~a";
                    word[at] = a;
                    word[at + 1] = b;
                    assert_eq!(word_needs_quotes(word), needs_quotes_bytewise(&word), "{word:?}");
                }
            }
        }
    }

    #[test]
    fn a_group_name_with_a_comma_is_quoted_in_the_thread_name() {
        let mut s = sample("a");
        s.thread.group = Arc::from("senders, eu");
        let mut sink = JtlSink::new(Vec::new(), "memory").unwrap();
        sink.write(&[s]).unwrap();
        let bytes = sink.into_inner().unwrap();
        let mut reader = csv::Reader::from_reader(&bytes[..]);
        let row = reader.records().next().unwrap().unwrap();
        assert_eq!((&row[3], &row[4], &row[5]), ("202", "Accepted", "senders, eu 1-17"));
    }

    #[test]
    fn create_makes_directories_and_writes_the_header() {
        let dir = std::env::temp_dir().join(format!("planrun-jtl-{}", std::process::id()));
        let path = dir.join("nested").join("results.jtl");
        let mut sink = JtlSink::create(&path).unwrap();
        sink.write(&[sample("a")]).unwrap();
        // Complete rows are on disk before finish.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with(&format!("{JTL_HEADER}\n")) && text.ends_with('\n'));
        sink.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_that_fails_half_way_leaves_only_complete_rows() {
        use crate::sink::file::tests::Filling;
        let cut: fn(&Filling, u64) -> std::io::Result<()> = Filling::cut;
        let filling = Filling::new(JTL_HEADER.len() + 1 + 300);
        let file = RecordFile::build(filling, "full".into(), |_| Ok(()), Some(cut), header().as_bytes()).unwrap();
        let mut sink = JtlSink { file, text: RowText::default(), time: TimestampFormat::Millis };
        let landed = sink.landed().unwrap();
        assert!(sink.write(&samples()[..1]).is_ok(), "one row fits");
        assert!(sink.write(&samples()).is_err(), "the disk fills up");
        let text = String::from_utf8(sink.into_inner().unwrap().data.into_inner()).unwrap();
        assert!(text.ends_with('\n'), "no half row: {text:?}");
        assert_eq!(landed.records(), 2, "the first row, and the first of the batch that filled the disk");
        assert_eq!(text.lines().count(), 3, "the header and the rows that fitted whole:\n{text}");
    }
}
