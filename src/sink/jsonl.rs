//! The JSON lines sink (`--json FILE`): one object a sample, the JTL row's facts under snake_case names.

use std::borrow::Cow;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::file::{Landed, RecordFile};
use super::jtl::{data_type_str, RowText};
use super::{Sink, SinkError};
use crate::sample::{ErrorKind, Sample};

/// Writes samples as JSON lines.
///
/// Each line holds the JTL columns with the same values (times in whole ms, `response_code` as text), except
/// that absent values are `null`: `data_type` of transactions and transport errors, `failure_message` when
/// nothing failed, `url` of transactions. Added: `error_kind` (an [`ErrorKind`](crate::sample::ErrorKind)
/// name or `null`), the precise `elapsed_us`, `latency_us`, `connect_us`, and `protocol` (`HTTP/1.1`, `HTTP/2`, or
/// `null` when no connection was made); when there are any, the sample's
/// `sub_results` (lines of the same shape, nested) and, with [`with_bodies`](Self::with_bodies), a failed
/// response's `response_body` and `response_body_size`; `decoded_bytes`, the body's size after its
/// Content-Encoding was undone, when something decoded it.
/// Each batch is formatted in memory and written in one piece, so the file holds only complete lines; when a
/// write fails (a full disk), a regular file is cut back to its last complete line.
pub struct JsonlSink<W: Write = File> {
    file: RecordFile<W>,
    text: RowText,
    /// Write the failed responses' bodies kept in the samples.
    bodies: bool,
}

/// One line, borrowed from the sample.
#[derive(Serialize)]
struct Row<'a> {
    timestamp: u64,
    elapsed: u64,
    label: &'a str,
    response_code: &'a str,
    response_message: &'a str,
    thread_name: &'a str,
    data_type: Option<&'static str>,
    success: bool,
    failure_message: Option<&'a str>,
    bytes: u64,
    sent_bytes: u64,
    grp_threads: u32,
    all_threads: u32,
    url: Option<&'a str>,
    latency: u64,
    idle_time: u64,
    connect: u64,
    error_kind: Option<&'static str>,
    elapsed_us: u64,
    latency_us: u64,
    connect_us: u64,
    protocol: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_body: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_body_size: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sub_results: Vec<Row<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decoded_bytes: Option<u64>,
}

impl<'a> Row<'a> {
    /// The line of `s`, whose texts `text` holds.
    fn new(s: &'a Sample, text: &'a RowText) -> Self {
        Row {
            timestamp: s.start_ms,
            elapsed: s.elapsed_us / 1000,
            label: &s.label,
            response_code: &text.code,
            response_message: &text.message,
            thread_name: &text.thread,
            data_type: data_type_str(s.data_type),
            success: s.success,
            failure_message: s.failure.as_deref(),
            bytes: s.bytes,
            sent_bytes: s.sent_bytes,
            grp_threads: s.grp_threads,
            all_threads: s.all_threads,
            url: s.url.as_deref(),
            latency: s.latency_us / 1000,
            idle_time: s.idle_us / 1000,
            connect: s.connect_us / 1000,
            error_kind: s.error_kind().map(ErrorKind::as_str),
            elapsed_us: s.elapsed_us,
            latency_us: s.latency_us,
            connect_us: s.connect_us,
            protocol: s.protocol_name(),
            response_body: None,
            response_body_size: None,
            sub_results: Vec::new(),
            decoded_bytes: s.detail.as_ref().and_then(|d| d.decoded_bytes),
        }
    }
}

impl JsonlSink<File> {
    /// Creates (or truncates) the file at `path`, its parent directories included; a device or FIFO that
    /// exists is written as it is. With `append`, the lines go after those a regular file holds.
    pub fn open(path: &Path, append: bool) -> Result<Self, SinkError> {
        Ok(JsonlSink { file: RecordFile::create(path, b"", append)?, text: RowText::default(), bodies: false })
    }
}

impl<W: Write> JsonlSink<W> {
    /// Writes JSON lines to any writer; `name` names it in errors.
    #[cfg(test)]
    pub fn new(writer: W, name: impl Into<String>) -> Result<Self, SinkError> {
        Ok(JsonlSink { file: RecordFile::new(writer, name.into(), b"")?, text: RowText::default(), bodies: false })
    }

    /// Also writes the body kept in a failed sample (`--json-failed-bodies`): `response_body`, as text
    /// (bytes that are not UTF-8 become U+FFFD), and `response_body_size`, the whole body's size.
    pub fn with_bodies(mut self, bodies: bool) -> Self {
        self.bodies = bodies;
        self
    }

    /// Flushes and returns the writer.
    #[cfg(test)]
    pub fn into_inner(self) -> Result<W, SinkError> {
        self.file.into_inner()
    }

    fn write_line(&mut self, s: &Sample) {
        self.text.fill(s);
        let sub_texts: Vec<RowText> = s
            .sub_results()
            .iter()
            .map(|sub| {
                let mut text = RowText::default();
                text.fill(sub);
                text
            })
            .collect();
        let mut row = Row::new(s, &self.text);
        row.sub_results = s.sub_results().iter().zip(&sub_texts).map(|(sub, text)| Row::new(sub, text)).collect();
        if let Some(body) = s.detail.as_ref().and_then(|d| d.body.as_ref()).filter(|_| self.bodies) {
            row.response_body = Some(String::from_utf8_lossy(&body.bytes));
            row.response_body_size = Some(body.size);
        }
        let out = self.file.buffer();
        let before = out.len();
        // Serializing borrowed strings and numbers into memory cannot fail; if it ever did, the line is dropped
        // rather than left half written.
        if serde_json::to_writer(&mut *out, &row).is_ok() {
            out.push(b'\n');
            self.file.end_record();
        } else {
            out.truncate(before);
        }
    }
}

impl<W: Write + Send> Sink for JsonlSink<W> {
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError> {
        for sample in batch {
            self.write_line(sample);
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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::sample::tests::sample;
    use crate::sample::{DataType, Outcome};

    fn lines(samples: &[Sample]) -> Vec<Value> {
        let mut sink = JsonlSink::new(Vec::new(), "memory").unwrap();
        sink.write(samples).unwrap();
        let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
        assert!(text.ends_with('\n'));
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn a_response_has_every_field() {
        let got = lines(&[sample("sendsms")]);
        let expected = json!({
            "timestamp": 1_764_547_200_123_u64, "elapsed": 4, "label": "sendsms", "response_code": "202",
            "response_message": "Accepted", "thread_name": "senders 1-17", "data_type": "text", "success": true,
            "failure_message": null, "bytes": 213, "sent_bytes": 187, "grp_threads": 2, "all_threads": 3,
            "url": "http://127.0.0.1:13013/cgi-bin/sendsms?to=1&text=Hello+world", "latency": 4, "idle_time": 0,
            "connect": 1, "error_kind": null, "elapsed_us": 4999, "latency_us": 4100, "connect_us": 1500,
            "protocol": "HTTP/1.1"
        });
        assert_eq!(got, vec![expected]);
    }

    #[test]
    fn errors_and_transactions_use_null_for_absent_values() {
        let refused = Sample {
            outcome: Outcome::Error { kind: ErrorKind::ReadTimeout, message: "Read timed out, \"x\"".into() },
            data_type: DataType::None,
            success: false,
            failure: Some("Read timed out".into()),
            ..sample("a")
        };
        let transaction = Sample {
            outcome: Outcome::Transaction { children: 3, failed: 0 },
            data_type: DataType::None,
            url: None,
            ..sample("tx")
        };
        let got = lines(&[refused, transaction]);
        assert_eq!(got[0]["error_kind"], "ReadTimeout");
        assert_eq!(got[0]["response_code"], "Non HTTP response code: ReadTimeout");
        assert_eq!(got[0]["response_message"], "Non HTTP response message: Read timed out, \"x\"");
        assert_eq!(got[0]["failure_message"], "Read timed out");
        assert_eq!(got[0]["data_type"], Value::Null);
        assert_eq!(got[1]["url"], Value::Null);
        assert_eq!(got[1]["response_code"], "200");
        assert_eq!(got[1]["response_message"], "Number of samples in transaction : 3, number of failing samples : 0");
    }

    #[test]
    fn a_full_disk_leaves_whole_lines_only() {
        use crate::sink::file::tests::Filling;
        let cut: fn(&Filling, u64) -> std::io::Result<()> = Filling::cut;
        let file = RecordFile::build(Filling::new(1000), "full".into(), |_| Ok(()), Some(cut), b"").unwrap();
        let mut sink = JsonlSink { file, text: RowText::default(), bodies: false };
        let landed = sink.landed().unwrap();
        assert!(sink.write(&vec![sample("a"); 10]).is_err(), "10 lines do not fit in 1000 bytes");
        let text = String::from_utf8(sink.into_inner().unwrap().data.into_inner()).unwrap();
        assert!(text.ends_with('\n'), "no torn line: {text:?}");
        assert!(text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()));
        assert_eq!(text.lines().count() as u64, landed.records());
    }
}
