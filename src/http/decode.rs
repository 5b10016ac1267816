//! The response side of HTTP/1.1 without I/O: a response head parsed with `httparse` and the framing of its
//! body decided as RFC 9112 section 6.3 says, then a body decoder fed whatever bytes arrive, in any split.
//!
//! The rules follow hyper's client (the engine planrun used before), so a server that worked keeps working;
//! where they differ, docs/faults.md says how and why.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode, Version};

use super::common_head;
use super::head_memo;
use super::headers::{self, Headers};
use super::limits::{MAX_CHUNK_EXTENSIONS, MAX_HEAD, MAX_TRAILERS, MAX_TRAILER_LINES, STACK_HEADERS};
use super::outcome::DataType;
use super::summary::Summary;

pub use super::summary::Framing;

/// Why a response cannot be read. The messages are hyper's where hyper had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The status line does not start with `HTTP/1.0` or `HTTP/1.1`.
    Version,
    /// The status code is not three digits.
    Status,
    /// A header line that does not parse.
    Header,
    /// The head is longer than [`MAX_HEAD`].
    TooLarge,
    /// Content-Length is not digits only, or its values differ.
    ContentLength,
    /// Transfer-Encoding in an HTTP/1.0 response.
    TransferEncoding,
    /// 101 Switching Protocols: planrun speaks HTTP/1.1 only.
    Upgrade,
    /// A 2xx answer to CONNECT: a tunnel, which planrun does not open.
    Tunnel,
    /// The chunked framing is broken; the reason says where.
    Chunk(&'static str),
    /// The connection ended before the body did.
    Incomplete,
}

impl DecodeError {
    /// What went wrong, in words.
    pub fn reason(&self) -> &'static str {
        match self {
            DecodeError::Version => "invalid HTTP version parsed",
            DecodeError::Status => "invalid HTTP status-code parsed",
            DecodeError::Header => "invalid HTTP header parsed",
            DecodeError::TooLarge => "message head is too large",
            DecodeError::ContentLength => "invalid content-length parsed",
            DecodeError::TransferEncoding => "unexpected transfer-encoding parsed",
            DecodeError::Upgrade => "101 Switching Protocols: planrun does not switch protocols",
            DecodeError::Tunnel => "2xx answer to CONNECT: planrun does not open tunnels",
            DecodeError::Chunk(why) => why,
            DecodeError::Incomplete => "end of file before message length reached",
        }
    }
}

impl From<httparse::Error> for DecodeError {
    fn from(e: httparse::Error) -> Self {
        match e {
            httparse::Error::Version => DecodeError::Version,
            httparse::Error::Status => DecodeError::Status,
            httparse::Error::TooManyHeaders => DecodeError::TooLarge,
            _ => DecodeError::Header,
        }
    }
}

/// A final response head.
#[derive(Debug)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// The reason phrase (the standard one borrowed).
    pub reason: Cow<'static, str>,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The headers (empty when they were not asked for: see [`parse_head_keeping`]).
    pub headers: Headers,
    /// JMeter's dataType, from the first Content-Type.
    pub data_type: DataType,
    /// How the body ends.
    pub framing: Framing,
    /// Whether the connection may carry another request once the body is read.
    pub keep_alive: bool,
}

/// What a complete head in the buffer is.
#[derive(Debug)]
pub enum Parsed {
    /// An interim (1xx) response of this many bytes, to be skipped.
    Interim(usize),
    /// The final response's head, of this many bytes.
    Final(usize, Head),
}

/// Parses the head at the start of `buf`: `Ok(None)` while it is incomplete. `method` is the request's.
pub fn parse_head(buf: &[u8], method: &Method) -> Result<Option<Parsed>, DecodeError> {
    parse_head_keeping(buf, method, true)
}

/// [`parse_head`], the headers copied out of `buf` only when `headers` asks for them, Set-Cookie lines
/// come (the cookie jar reads them) or the status is 3xx (a redirect's Location): most samples never look
/// at them, and the copy and its release were 200 instructions a request.
///
/// A final head made of the same bytes as the last one parsed on this thread, for a request of the same kind,
/// is not parsed again ([`head_memo`]).
pub fn parse_head_keeping(buf: &[u8], method: &Method, headers: bool) -> Result<Option<Parsed>, DecodeError> {
    let kind = head_memo::Kind::of(method);
    let recalled = head_memo::recall(buf, kind);
    let summary = match recalled {
        head_memo::Recalled::Same(summary) => summary,
        _ => match summarize(buf, kind)? {
            Some(Summarized::Final(summary)) => {
                if let head_memo::Recalled::Other = recalled {
                    head_memo::remember(buf, kind, &summary);
                }
                summary
            }
            Some(Summarized::Interim(len)) => return Ok(Some(Parsed::Interim(len))),
            None => return Ok(None),
        },
    };
    let Summary { len, status, reason, version, framing, keep_alive, data_type, content_type, set_cookie, encoded } =
        summary;
    // An encoded body is decoded through its Content-Encoding line: kept for it.
    let headers = if headers || set_cookie || encoded || (300..400).contains(&status) {
        let raw = Bytes::copy_from_slice(buf.get(..len).unwrap_or_default());
        Headers::new(raw, content_type, set_cookie).encoded(encoded)
    } else {
        Headers::default()
    };
    Ok(Some(Parsed::Final(len, Head { status, reason, version, headers, data_type, framing, keep_alive })))
}

/// What a complete head at the start of a buffer is, before anything is copied out of the buffer.
enum Summarized {
    /// An interim (1xx) response of this many bytes.
    Interim(usize),
    /// A final response.
    Final(Summary),
}

/// The parse of the head at the start of `buf`. It reads the request only through `kind`, so that what the
/// memo keys on is all it depends on.
fn summarize(buf: &[u8], kind: head_memo::Kind) -> Result<Option<Summarized>, DecodeError> {
    let mut seen = Seen::default();
    let (len, code, minor, reason) = match common_head::parse(buf, |name, value| seen.line(buf, name, value)) {
        Some((len, status)) => (len, status.code, status.minor, status.reason),
        None => {
            seen = Seen::default();
            match parse_uncommon(buf, &mut seen)? {
                Some(found) => found,
                None => return Ok(None),
            }
        }
    };
    let status = StatusCode::from_u16(code).map_err(|_| DecodeError::Status)?;
    if code == 101 {
        return Err(DecodeError::Upgrade);
    }
    if (100..200).contains(&code) {
        return Ok(Some(Summarized::Interim(len)));
    }
    if len > MAX_HEAD {
        return Err(DecodeError::TooLarge);
    }
    let version = if minor == 1 { Version::HTTP_11 } else { Version::HTTP_10 };
    let Seen { connection_close, connection_keep_alive, lengths, transfer_encoding, content_type, set_cookie, encoded } =
        seen;
    let mut keep_alive = if connection_close { false } else { version == Version::HTTP_11 || connection_keep_alive };
    let framing = if code == 204 || code == 304 || kind == head_memo::Kind::Head {
        Framing::Empty
    } else if kind == head_memo::Kind::Connect && (200..300).contains(&code) {
        return Err(DecodeError::Tunnel);
    } else if let Some(te) = transfer_encoding {
        if version == Version::HTTP_10 {
            return Err(DecodeError::TransferEncoding);
        }
        // RFC 9112 6.3: Transfer-Encoding overrides Content-Length; such a message may be an attempt at
        // smuggling, so the connection is not used again.
        if lengths.seen {
            keep_alive = false;
        }
        if last_token_is(te, "chunked") {
            Framing::Chunked
        } else {
            Framing::Close
        }
    } else if lengths.seen {
        match lengths.value {
            Some(0) if !lengths.bad => Framing::Empty,
            Some(n) if !lengths.bad && n < u64::MAX - 1 => Framing::Length(n),
            _ => return Err(DecodeError::ContentLength),
        }
    } else {
        Framing::Close
    };
    if framing == Framing::Close {
        keep_alive = false;
    }
    let reason = match status.canonical_reason() {
        Some(standard) if reason == standard.as_bytes() => Cow::Borrowed(standard),
        _ => Cow::Owned(latin1(reason)),
    };
    let data_type = match content_type {
        Some((start, len)) => super::outcome::data_type(headers::visible(buf, start, len)),
        None => DataType::None,
    };
    let summary = Summary {
        len,
        status: code,
        reason,
        version,
        framing,
        keep_alive,
        data_type,
        content_type,
        set_cookie,
        encoded,
    };
    Ok(Some(Summarized::Final(summary)))
}

/// A complete head's length, status code, minor version and reason phrase.
type HeadStart<'a> = (usize, u16, u8, &'a [u8]);

/// A head [`common_head`] leaves to httparse: the grammar it accepts and the errors it reports are httparse's.
/// Out of line: servers rarely send one, and inline it would sit between the common path's instructions.
#[cold]
#[inline(never)]
fn parse_uncommon<'a>(buf: &'a [u8], seen: &mut Seen<'a>) -> Result<Option<HeadStart<'a>>, DecodeError> {
    with_httparse(buf, |parsed, res| {
        let len = match parsed? {
            httparse::Status::Partial => return Ok(None),
            httparse::Status::Complete(len) => len,
        };
        let (Some(code), Some(minor), Some(reason)) = (res.code, res.version, res.reason) else {
            return Err(DecodeError::Status);
        };
        for h in res.headers.iter() {
            seen.line(buf, h.name.as_bytes(), h.value);
        }
        // httparse gives a reason with a byte beyond ASCII as an empty one: the bytes are taken from the line.
        let reason = if reason.is_empty() { sent_reason(buf) } else { reason.as_bytes() };
        Ok(Some((len, code, minor, reason)))
    })
}

/// Parses the response head at the start of `buf` with httparse and hands the outcome to `read`: with room
/// for [`STACK_HEADERS`] lines on the stack, or, when the head has more, for every line `buf` holds.
pub(super) fn with_httparse<'b, R>(
    buf: &'b [u8],
    read: impl FnOnce(httparse::Result<usize>, &httparse::Response<'_, 'b>) -> R,
) -> R {
    // Left uninitialised: httparse writes the lines it finds (filling 100 empty ones cost more than parsing).
    let mut lines = [MaybeUninit::<httparse::Header<'b>>::uninit(); STACK_HEADERS];
    let mut res = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut res, buf, &mut lines);
    if !matches!(parsed, Err(httparse::Error::TooManyHeaders)) {
        return read(parsed, &res);
    }
    let mut lines = vec![MaybeUninit::<httparse::Header<'b>>::uninit(); line_feeds(buf)];
    let mut res = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut res, buf, &mut lines);
    read(parsed, &res)
}

/// An upper bound on the header lines in `buf`: every one ends with a line feed.
fn line_feeds(buf: &[u8]) -> usize {
    buf.iter().filter(|&&b| b == b'\n').count()
}

/// The reason phrase's bytes in a status line httparse has accepted: after the empty lines it skips,
/// `HTTP/1.x NNN `, up to the line's end.
fn sent_reason(buf: &[u8]) -> &[u8] {
    let start = buf.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(buf.len());
    let line = &buf[start..];
    let Some(rest) = line.get(13..).filter(|_| line.get(12) == Some(&b' ')) else { return &[] };
    let end = rest.iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(rest.len());
    &rest[..end]
}

/// A reason phrase as JMeter's HttpClient 4 reads it: one character per byte, ISO-8859-1 (its session
/// buffer's default, with no charset configured). Every byte is kept: the characters' code points are the
/// bytes the server sent.
fn latin1(reason: &[u8]) -> String {
    reason.iter().map(|&b| char::from(b)).collect()
}

/// What the header lines of a head say about its framing, its dataType and its cookies. httparse (or
/// [`common_head`], which reads the same grammar) checked every name and value against RFC 9110's grammar, as
/// `http`'s types would; only the lines that matter here are looked at.
#[derive(Debug, Default)]
struct Seen<'a> {
    connection_close: bool,
    connection_keep_alive: bool,
    lengths: Lengths,
    transfer_encoding: Option<&'a [u8]>,
    /// Where the first Content-Type value is in the head.
    content_type: Option<(u32, u32)>,
    set_cookie: bool,
    /// Whether a Content-Encoding line is there.
    encoded: bool,
}

impl<'a> Seen<'a> {
    /// One header line of the head `buf`; `value` is a slice of `buf`.
    fn line(&mut self, buf: &[u8], name: &[u8], value: &'a [u8]) {
        match name.len() {
            10 if is_name(name, b"connection") => {
                // The usual value alone first: splitting a list costs more than the rest of the line.
                if is_name(value, b"keep-alive") {
                    self.connection_keep_alive = true;
                } else if has_token(value, "close") {
                    self.connection_close = true;
                } else if has_token(value, "keep-alive") {
                    self.connection_keep_alive = true;
                }
            }
            10 if is_name(name, b"set-cookie") => self.set_cookie = true,
            12 if self.content_type.is_none() && is_name(name, b"content-type") => {
                let start = (value.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
                self.content_type = u32::try_from(start).ok().zip(u32::try_from(value.len()).ok());
            }
            14 if is_name(name, b"content-length") => self.lengths.add(value),
            17 if is_name(name, b"transfer-encoding") => self.transfer_encoding = Some(value),
            16 if is_name(name, b"content-encoding") => self.encoded = true,
            _ => {}
        }
    }
}

/// Whether a header name (tchars only) or value is `lower` in any case, eight bytes at a time. `lower` is
/// lower case letters and `-`, at least eight bytes long; setting 0x20 in a byte lower-cases a letter, and of
/// the bytes a name or a value may hold (no controls: 0x0d would become `-`), maps no other onto a letter or `-`.
#[inline]
fn is_name(name: &[u8], lower: &[u8]) -> bool {
    const CASE: u64 = u64::from_le_bytes([0x20; 8]);
    let word =
        |bytes: &[u8], at: usize| bytes.get(at..).and_then(<[u8]>::first_chunk::<8>).map(|w| u64::from_le_bytes(*w));
    if name.len() != lower.len() || lower.len() < 8 {
        return false;
    }
    let mut at = 0;
    loop {
        // The last word overlaps the one before it rather than running past the end.
        let at_word = at.min(lower.len() - 8);
        if word(name, at_word).map(|w| w | CASE) != word(lower, at_word) {
            return false;
        }
        at += 8;
        if at >= lower.len() {
            return true;
        }
    }
}

/// Parses what `buf[..*filled]` holds: skips complete interim (1xx) responses (moving what follows them to
/// the front, `*filled` shrinking), and returns the final head and where its body starts once it is complete;
/// `Ok(None)` when more bytes are needed. The I/O loop around it reads into `buf[*filled..]`.
fn next_head(
    buf: &mut [u8],
    filled: &mut usize,
    method: &Method,
    headers: bool,
) -> Result<Option<(Head, usize)>, DecodeError> {
    loop {
        if *filled == 0 {
            return Ok(None);
        }
        match parse_head_keeping(buf.get(..*filled).unwrap_or_default(), method, headers)? {
            Some(Parsed::Final(at, head)) => return Ok(Some((head, at))),
            Some(Parsed::Interim(len)) => {
                buf.copy_within(len..*filled, 0);
                *filled -= len;
            }
            None if *filled >= MAX_HEAD => return Err(DecodeError::TooLarge),
            None => return Ok(None),
        }
    }
}

/// Gathers a response head from the reads of a socket. A read that holds the whole head (the usual case) is
/// parsed where it lies, in the thread's scratch buffer; only a head split across reads is kept, in a buffer
/// made for that response, so a user holds no head buffer between requests.
#[derive(Debug, Default)]
pub struct HeadReader {
    partial: Vec<u8>,
}

impl HeadReader {
    /// Takes the bytes of one read (rearranged in place when interim heads are skipped). Once the final head
    /// is complete, returns it and the bytes that follow it: the start of the body. `headers`: as
    /// [`parse_head_keeping`].
    pub fn take<'a>(
        &'a mut self,
        got: &'a mut [u8],
        method: &Method,
        headers: bool,
    ) -> Result<Option<(Head, &'a [u8])>, DecodeError> {
        if self.partial.is_empty() {
            let mut filled = got.len();
            return match next_head(got, &mut filled, method, headers)? {
                Some((head, at)) => Ok(Some((head, got.get(at..filled).unwrap_or_default()))),
                None => {
                    self.partial.extend_from_slice(got.get(..filled).unwrap_or_default());
                    Ok(None)
                }
            };
        }
        self.partial.extend_from_slice(got);
        let mut filled = self.partial.len();
        match next_head(&mut self.partial, &mut filled, method, headers)? {
            Some((head, at)) => Ok(Some((head, self.partial.get(at..filled).unwrap_or_default()))),
            None => {
                self.partial.truncate(filled);
                Ok(None)
            }
        }
    }
}

/// The Content-Length values of a head: all must be digits and equal.
#[derive(Debug, Default)]
struct Lengths {
    seen: bool,
    value: Option<u64>,
    bad: bool,
}

impl Lengths {
    fn add(&mut self, line: &[u8]) {
        self.seen = true;
        if let Some(n) = digits(line).filter(|&n| self.value.is_none_or(|v| v == n)) {
            self.value = Some(n);
            return;
        }
        for part in line.split(|&b| b == b',') {
            match digits(trim(part)) {
                Some(n) if self.value.is_none_or(|v| v == n) => self.value = Some(n),
                _ => self.bad = true,
            }
        }
    }
}

/// A decimal number of digits only (no sign, no space), that fits in a u64.
fn digits(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    bytes.iter().try_fold(0u64, |n, &b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Whether a comma-separated header value has `token` (any case).
fn has_token(value: &[u8], token: &str) -> bool {
    value.split(|&b| b == b',').any(|t| trim(t).eq_ignore_ascii_case(token.as_bytes()))
}

/// Whether the last of a comma-separated header value's tokens is `token` (any case).
fn last_token_is(value: &[u8], token: &str) -> bool {
    value.rsplit(|&b| b == b',').next().is_some_and(|t| trim(t).eq_ignore_ascii_case(token.as_bytes()))
}

/// Where a chunked body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// The first hex digit of a size line.
    Start,
    /// More hex digits.
    Size,
    /// Spaces after the size.
    SizeLws,
    /// A chunk extension, up to CR.
    Extension,
    /// The LF of a size line.
    SizeLf,
    /// Chunk data.
    Data,
    /// The CR after chunk data.
    DataCr,
    /// The LF after chunk data.
    DataLf,
    /// After the last chunk: a trailer line or the final CRLF.
    EndCr,
    /// A trailer line.
    Trailer,
    /// The LF of a trailer line.
    TrailerLf,
    /// The final LF.
    EndLf,
    /// Done.
    End,
}

/// A body being read: fed bytes, it says how many were the body's and hands over the body's own bytes.
#[derive(Debug)]
pub struct BodyDecoder {
    framing: Framing,
    /// Bytes left of a sized body or of the current chunk.
    remaining: u64,
    state: Chunk,
    extensions: u64,
    trailers: Option<Vec<u8>>,
    trailer_lines: usize,
    done: bool,
}

impl BodyDecoder {
    /// A decoder for a body framed as `framing` says.
    pub fn new(framing: Framing) -> Self {
        let remaining = if let Framing::Length(n) = framing { n } else { 0 };
        Self {
            framing,
            remaining,
            state: Chunk::Start,
            extensions: 0,
            trailers: None,
            trailer_lines: 0,
            done: matches!(framing, Framing::Empty),
        }
    }

    /// Whether the body has ended.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Reads the body's part of `input`, handing its content to `data`; returns how many bytes of `input`
    /// were the body's (all of them until it ends; the rest is not part of this response).
    pub fn feed(&mut self, input: &[u8], data: &mut impl FnMut(&[u8])) -> Result<usize, DecodeError> {
        if self.done {
            return Ok(0);
        }
        match self.framing {
            Framing::Empty => Ok(0),
            Framing::Close => {
                data(input);
                Ok(input.len())
            }
            Framing::Length(_) => {
                let n = usize::try_from(self.remaining).unwrap_or(usize::MAX).min(input.len());
                data(&input[..n]);
                self.remaining -= n as u64;
                self.done = self.remaining == 0;
                Ok(n)
            }
            Framing::Chunked => self.chunked(input, data),
        }
    }

    /// The connection ended: fine for a body that ends with it, an error for any other unfinished one.
    pub fn eof(&mut self) -> Result<(), DecodeError> {
        match self.framing {
            Framing::Close => {
                self.done = true;
                Ok(())
            }
            _ if self.done => Ok(()),
            _ => Err(DecodeError::Incomplete),
        }
    }

    fn chunked(&mut self, input: &[u8], data: &mut impl FnMut(&[u8])) -> Result<usize, DecodeError> {
        let mut i = 0;
        while i < input.len() {
            if self.state == Chunk::Data {
                let n = usize::try_from(self.remaining).unwrap_or(usize::MAX).min(input.len() - i);
                data(&input[i..i + n]);
                self.remaining -= n as u64;
                i += n;
                if self.remaining == 0 {
                    self.state = Chunk::DataCr;
                }
                continue;
            }
            let b = input[i];
            i += 1;
            self.state = self.step(b)?;
            if self.state == Chunk::End {
                self.done = true;
                if let Some(t) = self.trailers.take() {
                    check_trailers(&t, self.trailer_lines)?;
                }
                return Ok(i);
            }
        }
        Ok(i)
    }

    fn step(&mut self, b: u8) -> Result<Chunk, DecodeError> {
        use Chunk::*;
        Ok(match (self.state, b) {
            (Start | Size, _) if hex(b).is_some() => {
                let digit = u64::from(hex(b).unwrap_or(0));
                self.remaining = self
                    .remaining
                    .checked_mul(16)
                    .and_then(|n| n.checked_add(digit))
                    .ok_or(DecodeError::Chunk("invalid chunk size: overflow"))?;
                Size
            }
            (Start, _) => return Err(DecodeError::Chunk("invalid chunk size line: missing size digit")),
            (Size | SizeLws, b'\t' | b' ') => SizeLws,
            (Size | SizeLws, b';') => Extension,
            (Size | SizeLws | Extension, b'\r') => SizeLf,
            (Size, _) => return Err(DecodeError::Chunk("invalid chunk size line: invalid size")),
            (SizeLws, _) => return Err(DecodeError::Chunk("invalid chunk size line: invalid linear white space")),
            (Extension, b'\n') => return Err(DecodeError::Chunk("invalid chunk extension contains newline")),
            (Extension, _) => {
                self.extensions += 1;
                if self.extensions >= MAX_CHUNK_EXTENSIONS {
                    return Err(DecodeError::Chunk("chunk extensions over limit"));
                }
                Extension
            }
            (SizeLf, b'\n') if self.remaining == 0 => EndCr,
            (SizeLf, b'\n') => Data,
            (SizeLf, _) => return Err(DecodeError::Chunk("invalid chunk size LF")),
            (DataCr, b'\r') => DataLf,
            (DataCr, _) => return Err(DecodeError::Chunk("invalid chunk body CR")),
            (DataLf, b'\n') => Start,
            (DataLf, _) => return Err(DecodeError::Chunk("invalid chunk body LF")),
            (EndCr, b'\r') => {
                self.trailer_byte(b)?;
                EndLf
            }
            (EndCr, _) => {
                self.trailers.get_or_insert_with(Vec::new);
                self.trailer_byte(b)?;
                Trailer
            }
            (Trailer, _) => {
                self.trailer_byte(b)?;
                if b == b'\r' {
                    TrailerLf
                } else {
                    Trailer
                }
            }
            (TrailerLf, b'\n') => {
                if self.trailer_lines >= MAX_TRAILER_LINES {
                    return Err(DecodeError::Chunk("chunk trailers count overflow"));
                }
                self.trailer_lines += 1;
                self.trailer_byte(b)?;
                EndCr
            }
            (TrailerLf, _) => return Err(DecodeError::Chunk("invalid trailer end LF")),
            (EndLf, b'\n') => {
                self.trailer_byte(b)?;
                End
            }
            (EndLf, _) => return Err(DecodeError::Chunk("invalid chunk end LF")),
            (Data | End, _) => self.state,
        })
    }

    /// Keeps a byte of the trailer section (only when there are trailers), within its limit.
    fn trailer_byte(&mut self, b: u8) -> Result<(), DecodeError> {
        if let Some(t) = self.trailers.as_mut() {
            t.push(b);
            if t.len() >= MAX_TRAILERS {
                return Err(DecodeError::Chunk("chunk trailers bytes over limit"));
            }
        }
        Ok(())
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Trailer fields must parse as header lines (they are read, then dropped: no check reads them).
fn check_trailers(section: &[u8], lines: usize) -> Result<(), DecodeError> {
    let mut fields = vec![httparse::EMPTY_HEADER; lines.max(1)];
    match httparse::parse_headers(section, &mut fields) {
        Ok(httparse::Status::Complete((_, fields))) => {
            for f in fields {
                HeaderName::from_bytes(f.name.as_bytes()).map_err(|_| DecodeError::Chunk("invalid trailer name"))?;
                HeaderValue::from_bytes(f.value).map_err(|_| DecodeError::Chunk("invalid trailer value"))?;
            }
            Ok(())
        }
        Ok(httparse::Status::Partial) => Err(DecodeError::Chunk("partial trailer")),
        Err(_) => Err(DecodeError::Chunk("invalid trailer line")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_that_comes_whole_is_parsed_where_it_lies_and_a_split_one_is_gathered() {
        let mut reader = HeadReader::default();
        let mut whole = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".to_vec();
        let (head, early) = reader.take(&mut whole, &Method::GET, true).unwrap().unwrap();
        assert_eq!((head.status, early), (200, &b"abc"[..]));
        assert_eq!(reader.partial.capacity(), 0, "nothing of a whole head is kept");

        let mut reader = HeadReader::default();
        assert!(reader
            .take(&mut b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2".to_vec(), &Method::GET, true)
            .unwrap()
            .is_none());
        assert_eq!(reader.partial, b"HTTP/1.1 2", "the interim head is dropped, the start of the next kept");
        assert!(reader.take(&mut b"04 No Content\r\n".to_vec(), &Method::GET, true).unwrap().is_none());
        let mut last = b"\r\nxyz".to_vec();
        let (head, early) = reader.take(&mut last, &Method::GET, true).unwrap().unwrap();
        assert_eq!((head.status, head.framing, early), (204, Framing::Empty, &b"xyz"[..]));
    }

    #[test]
    fn a_reason_beyond_ascii_keeps_every_byte_as_iso_8859_1() {
        let reason = |head: &[u8]| {
            let mut buf = head.to_vec();
            let (head, _) = HeadReader::default().take(&mut buf, &Method::GET, false).unwrap().unwrap();
            head.reason.into_owned()
        };
        assert_eq!(reason(b"HTTP/1.1 200 Caf\xc3\xa9 OK\r\nContent-Length: 0\r\n\r\n"), "Caf\u{c3}\u{a9} OK");
        assert_eq!(reason(b"HTTP/1.1 200 Caf\xe9\r\nContent-Length: 0\r\n\r\n"), "Caf\u{e9}");
        assert_eq!(reason(b"\r\n\nHTTP/1.0 404 \xff\tno \x80\nContent-Length: 0\n\n"), "\u{ff}\tno \u{80}");
        assert_eq!(reason(b"HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n"), "");
        assert_eq!(reason(b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"), "");
        assert_eq!(reason(b"HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n"), "Fine");
    }
}
