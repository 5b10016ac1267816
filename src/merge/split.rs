//! A results file cut into its records, byte for byte: what [`super::input`] copies to the merged file.
//!
//! CSV records are found by `csv_core`, the parser under the `csv` crate that `planrun report` reads with, with
//! the same settings (the file's delimiter, `"` quotes, `\r`, `\n` or `\r\n` line ends), so a quoted field
//! that spans lines stays in its record and the records are exactly the ones the report reads. JSON lines
//! are lines. Blank lines between records belong to no record.

use std::io::{self, BufRead, BufReader, Read};

/// The longest record read: 64 MiB. A result row is a few hundred bytes (JMeter's, with response data saved,
/// can be far longer); a file with more than this before a record ends is no result file, and is not held.
pub const MAX_RECORD: usize = 64 << 20;

/// How records end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// CSV with this delimiter.
    Csv(u8),
    /// One JSON object a line.
    Lines,
}

/// One record as it is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    /// Every byte read for it: blank lines before it, the record, its line end.
    pub bytes: Vec<u8>,
    /// Where the record starts in `bytes` (after the blank lines).
    pub start: usize,
    /// The line of the file the record starts on, from 1.
    pub line: u64,
    /// False when the file ended inside the record, before its line end: a row cut off.
    pub terminated: bool,
}

impl Raw {
    /// The record and its line end.
    pub fn record(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

/// Cuts a file into [`Raw`] records.
pub struct Splitter<R> {
    input: BufReader<R>,
    framing: Framing,
    csv: csv_core::Reader,
    /// Field bytes: csv_core wants somewhere to put them; nothing reads them.
    scratch: Vec<u8>,
    ends: Vec<usize>,
    /// The line the next byte is on, from 1.
    line: u64,
    /// The longest record read.
    limit: usize,
}

impl<R: Read> Splitter<R> {
    /// A splitter at the start of `input`.
    pub fn new(input: R, framing: Framing) -> Self {
        let delimiter = match framing {
            Framing::Csv(d) => d,
            Framing::Lines => b',',
        };
        Splitter {
            input: BufReader::with_capacity(256 * 1024, input),
            framing,
            csv: csv_core::ReaderBuilder::new().delimiter(delimiter).build(),
            scratch: vec![0; 4096],
            ends: vec![0; 64],
            line: 1,
            limit: MAX_RECORD,
        }
    }

    /// The longest record to read, instead of [`MAX_RECORD`].
    #[cfg(test)]
    pub fn with_limit(mut self, bytes: usize) -> Self {
        self.limit = bytes;
        self
    }

    fn too_long(&self) -> io::Error {
        let limit = match self.limit >> 20 {
            0 => format!("{} bytes", self.limit),
            mib => format!("{mib} MiB"),
        };
        let what = format!("line {}: more than {limit} without the end of a record: not a result file", self.line);
        io::Error::new(io::ErrorKind::InvalidData, what)
    }

    /// Skips a UTF-8 byte order mark and blank space before the first record, as `planrun report` does; returns
    /// how many bytes it skipped.
    pub fn skip_leading_space(&mut self) -> io::Result<u64> {
        let mut skipped = 0;
        if self.input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
            self.input.consume(3);
            skipped += 3;
        }
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            let blank = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
            self.line += buf[..blank].iter().filter(|&&b| b == b'\n').count() as u64;
            self.input.consume(blank);
            skipped += blank as u64;
            if blank < self.input.buffer().len() {
                return Ok(skipped);
            }
        }
    }

    /// The next record, `None` at the end of the file.
    pub fn next_raw(&mut self) -> io::Result<Option<Raw>> {
        match self.framing {
            Framing::Csv(_) => self.next_csv(),
            Framing::Lines => self.next_line(),
        }
    }

    fn next_csv(&mut self) -> io::Result<Option<Raw>> {
        let mut bytes = Vec::new();
        loop {
            // Most records are one line without quotes: taken whole (std's memchr finds the line end), with no
            // need for the parser. csv_core is left between records, where this is what it would do too.
            let mut buf = self.input.fill_buf()?;
            let from = bytes.len();
            let n = buf.read_until(b'\n', &mut bytes)?;
            let line = &bytes[from..];
            let body = line.strip_suffix(b"\n").map(|l| l.strip_suffix(b"\r").unwrap_or(l));
            match body {
                Some(body) if !body.contains(&b'"') && !body.contains(&b'\r') => {
                    self.input.consume(n);
                    self.line += 1;
                    if !body.is_empty() {
                        return Ok(Some(Raw { bytes, start: from, line: self.line - 1, terminated: true }));
                    }
                    // A blank line: no record.
                }
                _ => {
                    bytes.truncate(from);
                    return self.parse_csv(bytes);
                }
            }
            if bytes.len() > self.limit {
                return Err(self.too_long());
            }
        }
    }

    /// A record the quick way cannot take (quotes, a lone `\r`, the end of the buffer or file): csv_core.
    fn parse_csv(&mut self, mut bytes: Vec<u8>) -> io::Result<Option<Raw>> {
        use csv_core::ReadRecordResult as R;
        let from = bytes.len();
        let lines_before = self.csv.line();
        loop {
            let buf = self.input.fill_buf()?;
            let at_end = buf.is_empty();
            let (result, nin, _, _) = self.csv.read_record(buf, &mut self.scratch, &mut self.ends);
            bytes.extend_from_slice(&buf[..nin]);
            self.input.consume(nin);
            if bytes.len() > self.limit {
                return Err(self.too_long());
            }
            match result {
                R::InputEmpty | R::OutputFull | R::OutputEndsFull => continue,
                R::End => return Ok(None),
                R::Record => {
                    let mut lines = self.csv.line() - lines_before;
                    // csv_core ends a record at the `\r` of `\r\n` and skips the `\n` before the next one; it
                    // belongs to this record's line end.
                    if bytes.last() == Some(&b'\r') && self.input.fill_buf()?.first() == Some(&b'\n') {
                        bytes.push(b'\n');
                        self.input.consume(1);
                        lines += 1;
                    }
                    // The line ends csv_core skipped before the record are blank lines.
                    let blank = bytes[from..].iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
                    let line = self.line + bytes[from..from + blank].iter().filter(|&&b| b == b'\n').count() as u64;
                    self.line += lines;
                    return Ok(Some(Raw { bytes, start: from + blank, line, terminated: !at_end }));
                }
            }
        }
    }

    fn next_line(&mut self) -> io::Result<Option<Raw>> {
        let mut bytes = Vec::new();
        loop {
            let from = bytes.len();
            let room = (self.limit + 1).saturating_sub(from) as u64;
            let n = (&mut self.input).take(room).read_until(b'\n', &mut bytes)?;
            if bytes.len() > self.limit {
                return Err(self.too_long());
            }
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if !bytes[from..].iter().all(u8::is_ascii_whitespace) {
                let terminated = bytes.last() == Some(&b'\n');
                return Ok(Some(Raw { bytes, start: from, line: self.line - 1, terminated }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &[u8], framing: Framing) -> Vec<(String, u64, bool)> {
        let mut s = Splitter::new(text, framing);
        s.skip_leading_space().unwrap();
        let mut out = Vec::new();
        while let Some(raw) = s.next_raw().unwrap() {
            out.push((String::from_utf8(raw.record().to_vec()).unwrap(), raw.line, raw.terminated));
        }
        out
    }

    fn owned(v: &[(&str, u64, bool)]) -> Vec<(String, u64, bool)> {
        v.iter().map(|(s, l, t)| (s.to_string(), *l, *t)).collect()
    }

    #[test]
    fn csv_records_verbatim_with_quoted_line_ends() {
        let text = b"\xEF\xBB\xBF\n h,i\n1,\"a\nb, \"\"c\"\"\"\n\n2,x\r\n3,\"\r\n\"\r\n4,y";
        assert_eq!(
            split(text, Framing::Csv(b',')),
            owned(&[
                ("h,i\n", 2, true),
                ("1,\"a\nb, \"\"c\"\"\"\n", 3, true),
                ("2,x\r\n", 6, true),
                ("3,\"\r\n\"\r\n", 7, true),
                ("4,y", 9, false),
            ])
        );
    }

    #[test]
    fn an_open_quote_at_the_end_is_a_cut_record_even_after_a_line_end() {
        let text = b"h\n1,\"cut\n";
        assert_eq!(split(text, Framing::Csv(b',')), owned(&[("h\n", 1, true), ("1,\"cut\n", 2, false)]));
    }

    #[test]
    fn the_delimiter_decides_where_a_quoted_field_starts() {
        // With `;`, the quote after `a,` is inside a field, not the start of a quoted one.
        let text = b"h\na,\"b;c\nd\n";
        assert_eq!(split(text, Framing::Csv(b';')).len(), 3);
        assert_eq!(split(text, Framing::Csv(b',')).len(), 2);
    }

    #[test]
    fn a_record_longer_than_the_limit_is_an_error_not_held() {
        for (text, framing) in [(&b"h\n\"0123456789\n"[..], Framing::Csv(b',')), (b"h\n0123456789", Framing::Lines)] {
            let mut s = Splitter::new(text, framing).with_limit(8);
            assert!(s.next_raw().unwrap().is_some());
            let err = s.next_raw().unwrap_err().to_string();
            assert_eq!(err, "line 2: more than 8 bytes without the end of a record: not a result file");
        }
    }

    #[test]
    fn json_lines() {
        let text = b"  \n{\"a\":1}\n\n \n{\"a\":2}\r\n{\"a\":";
        assert_eq!(
            split(text, Framing::Lines),
            owned(&[("{\"a\":1}\n", 2, true), ("{\"a\":2}\r\n", 5, true), ("{\"a\":", 6, false)])
        );
        assert!(split(b"", Framing::Lines).is_empty());
        assert!(split(b"\n\n", Framing::Csv(b',')).is_empty());
    }
}
