//! A response body's Content-Encoding undone: `gzip` (and `x-gzip`), `deflate` (zlib-wrapped or raw, as
//! browsers accept both), `br` and `zstd`, and chains of them (`gzip, br` was applied in that order, so it is
//! undone from the last). Called only when something reads the body: the engine keeps what came on the wire,
//! and a sample that never looks at its body never pays for this.
//!
//! The output is bounded: each layer stops one byte past `limit` (a bomb of 1 GB of zeros in 1 MB of gzip
//! costs `limit` bytes, not 1 GB), and zstd's window is held to 8 MiB (RFC 9659's limit for HTTP). A stream
//! that is corrupt, ends early, or has bytes after its end is a [`CodingError`], never a panic.

use std::io::Read;

use bytes::Bytes;
use flate2::{Decompress, FlushDecompress, Status};
use http::header::CONTENT_ENCODING;

use super::headers::Headers;

/// The content codings planrun decodes, by the names a plan (`compression:`) and a server give them.
pub const CODINGS: [&str; 4] = ["gzip", "deflate", "br", "zstd"];

/// Content codings applied one over another that a body may carry.
const MAX_LAYERS: usize = 8;

/// zstd's largest window, as a power of two: 8 MiB, what RFC 9659 lets an HTTP zstd stream ask for.
const ZSTD_WINDOW_LOG: u32 = 23;

/// A body with its content codings undone, or as far as that went.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The body as the server meant it, as far as it decodes: cut at the limit, or where a stream that is
    /// truncated or corrupt stops giving bytes; the bytes as received when nothing could be decoded (a coding
    /// not known, a stream corrupt from its start).
    pub body: Bytes,
    /// Why `body` is not the whole decoded body.
    pub problem: Option<CodingError>,
}

/// Why a body's codings could not be undone whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodingError {
    /// The decoded body is longer than the limit: it was cut there.
    #[error("the body decoded from {coding} is longer than {limit} bytes: cut there")]
    TooLarge {
        /// The coding whose output went past the limit.
        coding: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A coding planrun does not decode.
    #[error("Content-Encoding `{0}` is not one planrun decodes (gzip, deflate, br, zstd): the body was not decoded")]
    Unknown(String),
    /// More codings than [`MAX_LAYERS`].
    #[error("Content-Encoding lists {0} codings (at most 8 are decoded): the body was not decoded")]
    TooManyLayers(usize),
    /// The stream does not decode.
    #[error("the {coding} body does not decode: {why}")]
    Corrupt {
        /// The coding.
        coding: &'static str,
        /// The decoder's reason.
        why: String,
    },
    /// The stream ends before its end mark.
    #[error("the {coding} body ends before its stream does (truncated)")]
    Truncated {
        /// The coding.
        coding: &'static str,
    },
    /// Bytes follow the stream's end.
    #[error("the {coding} body has {extra} bytes after the end of its stream")]
    Trailing {
        /// The coding.
        coding: &'static str,
        /// How many.
        extra: usize,
    },
}

impl CodingError {
    /// Whether the body was decoded, only cut at the limit.
    pub fn is_cut(&self) -> bool {
        matches!(self, CodingError::TooLarge { .. })
    }
}

/// One content coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Gzip,
    Deflate,
    Br,
    Zstd,
}

impl Coding {
    fn name(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Br => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// A coding by its token, in any case (`x-gzip` is gzip, RFC 9110 8.4.1.3); `None` for identity.
    fn parse(token: &str) -> Result<Option<Coding>, CodingError> {
        let coding = match token.to_ascii_lowercase().as_str() {
            "identity" => return Ok(None),
            "gzip" | "x-gzip" => Coding::Gzip,
            "deflate" => Coding::Deflate,
            "br" => Coding::Br,
            "zstd" => Coding::Zstd,
            _ => return Err(CodingError::Unknown(token.to_string())),
        };
        Ok(Some(coding))
    }
}

/// The body of a response whose `headers` these are, its content codings undone, each layer's output at most
/// `limit` bytes; `None` when it has none (or only `identity`): the body is as received.
pub fn decode(headers: &Headers, body: &Bytes, limit: usize) -> Option<Decoded> {
    if !headers.content_encoded() {
        return None;
    }
    let codings = match codings(headers) {
        Ok(c) if c.is_empty() => return None,
        Ok(c) => c,
        Err(problem) => return Some(Decoded { body: body.clone(), problem: Some(problem) }),
    };
    let mut current = body.clone();
    let mut problem = None;
    // Each layer is undone as far as it goes, so that a body cut at the limit, or truncated, still reads as
    // text up to there; the first (outermost) problem is the one told.
    for coding in codings.into_iter().rev() {
        let (out, stop) = decode_one(coding, &current, limit);
        if stop.is_some() && out.is_empty() && problem.is_none() {
            return Some(Decoded { body: body.clone(), problem: stop });
        }
        current = Bytes::from(out);
        problem = problem.or(stop);
    }
    Some(Decoded { body: current, problem })
}

/// The codings of every Content-Encoding line, in the order applied.
fn codings(headers: &Headers) -> Result<Vec<Coding>, CodingError> {
    let mut out = Vec::new();
    for value in headers.map().get_all(CONTENT_ENCODING) {
        let text = String::from_utf8_lossy(value.as_bytes());
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            out.extend(Coding::parse(token)?);
        }
    }
    if out.len() > MAX_LAYERS {
        return Err(CodingError::TooManyLayers(out.len()));
    }
    Ok(out)
}

/// What one layer gave: its output as far as it went, and why it stopped short, if it did.
type Layer = (Vec<u8>, Option<CodingError>);

fn decode_one(coding: Coding, input: &[u8], limit: usize) -> Layer {
    let coding_name = coding.name();
    match coding {
        Coding::Gzip => gzip(input, limit),
        // A zlib stream starts with a header whose two bytes, as a big-endian number, are a multiple of 31,
        // with method 8: anything else is read as raw deflate, as browsers do.
        Coding::Deflate => {
            let zlib = matches!(input, [cmf, flg, ..] if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0);
            inflate(input, zlib, limit)
        }
        Coding::Br => brotli(input, limit),
        Coding::Zstd => {
            let mut out = Vec::with_capacity(first_capacity(input.len(), limit));
            let reader = zstd::stream::read::Decoder::with_buffer(input).and_then(|mut r| {
                r.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(ZSTD_WINDOW_LOG))?;
                Ok(r)
            });
            let stop = match reader {
                Ok(r) => read_limited(r, &mut out, limit).err().map(|e| read_failed(e, coding_name, limit)),
                Err(e) => Some(CodingError::Corrupt { coding: coding_name, why: e.to_string() }),
            };
            (out, stop)
        }
    }
}

/// The first capacity of a layer's output: a few times its input, as text compresses, within the limit.
fn first_capacity(input: usize, limit: usize) -> usize {
    input.saturating_mul(4).clamp(4096, 1 << 20).min(limit.saturating_add(1))
}

/// Reads `reader` to its end onto `out`, or until `out` is one byte past `limit`: then `out` is cut to `limit`
/// and this says so.
fn read_limited(reader: impl Read, out: &mut Vec<u8>, limit: usize) -> Result<(), Option<std::io::Error>> {
    let room = limit.saturating_add(1).saturating_sub(out.len());
    match reader.take(u64::try_from(room).unwrap_or(u64::MAX)).read_to_end(out) {
        Ok(_) if out.len() > limit => {
            out.truncate(limit);
            Err(None)
        }
        Ok(_) => Ok(()),
        Err(e) => Err(Some(e)),
    }
}

/// What a failed [`read_limited`] means: cut at the limit (`None`), truncated or corrupt.
fn read_failed(e: Option<std::io::Error>, coding: &'static str, limit: usize) -> CodingError {
    match e {
        None => CodingError::TooLarge { coding, limit },
        Some(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => CodingError::Truncated { coding },
        Some(e) => CodingError::Corrupt { coding, why: e.to_string() },
    }
}

/// Decodes gzip members one after another (RFC 1952 allows several), which must end where `input` does.
fn gzip(input: &[u8], limit: usize) -> Layer {
    let coding = "gzip";
    let mut out = Vec::with_capacity(first_capacity(input.len(), limit));
    let mut rest = input;
    loop {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        if let Err(e) = read_limited(&mut member, &mut out, limit) {
            let stop = read_failed(e, coding, limit);
            return (out, Some(stop));
        }
        rest = member.into_inner();
        match rest {
            [] => return (out, None),
            [0x1f, 0x8b, ..] => {}
            _ => return (out, Some(CodingError::Trailing { coding, extra: rest.len() })),
        }
    }
}

/// Inflates a zlib (`zlib`) or raw deflate stream, which must end where `input` does.
fn inflate(input: &[u8], zlib: bool, limit: usize) -> Layer {
    let coding = "deflate";
    let mut d = Decompress::new(zlib);
    let mut out = Vec::with_capacity(first_capacity(input.len(), limit));
    loop {
        if out.len() == out.capacity() {
            if out.len() > limit {
                out.truncate(limit);
                return (out, Some(CodingError::TooLarge { coding, limit }));
            }
            let room = out.capacity().max(4096).min(limit + 1 - out.len());
            out.reserve_exact(room);
        }
        let at = usize::try_from(d.total_in()).unwrap_or(usize::MAX).min(input.len());
        let produced = out.len();
        match d.decompress_vec(&input[at..], &mut out, FlushDecompress::None) {
            Ok(Status::StreamEnd) => break,
            Ok(_) => {}
            Err(e) => return (out, Some(CodingError::Corrupt { coding, why: e.to_string() })),
        }
        let moved = usize::try_from(d.total_in()).unwrap_or(usize::MAX) != at || out.len() != produced;
        if !moved {
            return (out, Some(CodingError::Truncated { coding }));
        }
    }
    if out.len() > limit {
        out.truncate(limit);
        return (out, Some(CodingError::TooLarge { coding, limit }));
    }
    let used = usize::try_from(d.total_in()).unwrap_or(usize::MAX).min(input.len());
    let trailing = (used < input.len()).then(|| CodingError::Trailing { coding, extra: input.len() - used });
    (out, trailing)
}

/// Decodes a brotli stream (RFC 7932, its standard window), which must end where `input` does.
fn brotli(input: &[u8], limit: usize) -> Layer {
    use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
    let coding = "br";
    let mut state =
        BrotliState::new_strict(StandardAlloc::default(), StandardAlloc::default(), StandardAlloc::default());
    let mut out = vec![0u8; first_capacity(input.len(), limit)];
    let (mut in_left, mut in_at) = (input.len(), 0usize);
    let (mut out_at, mut total) = (0usize, 0usize);
    loop {
        let mut out_left = out.len() - out_at;
        let result = BrotliDecompressStream(
            &mut in_left,
            &mut in_at,
            input,
            &mut out_left,
            &mut out_at,
            &mut out,
            &mut total,
            &mut state,
        );
        let stop = match result {
            BrotliResult::ResultSuccess => break,
            BrotliResult::NeedsMoreOutput if out.len() <= limit => {
                let grown = out.len().saturating_mul(2).min(limit.saturating_add(1)).max(out.len() + 1);
                out.resize(grown, 0);
                continue;
            }
            BrotliResult::NeedsMoreOutput => CodingError::TooLarge { coding, limit },
            BrotliResult::NeedsMoreInput => CodingError::Truncated { coding },
            BrotliResult::ResultFailure => CodingError::Corrupt { coding, why: format!("{:?}", state.error_code) },
        };
        out.truncate(out_at.min(limit));
        return (out, Some(stop));
    }
    out.truncate(out_at);
    if out.len() > limit {
        out.truncate(limit);
        return (out, Some(CodingError::TooLarge { coding, limit }));
    }
    (out, (in_left > 0).then_some(CodingError::Trailing { coding, extra: in_left }))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use http::Method;

    use super::super::decode::{parse_head, Parsed};
    use super::*;

    fn headers(encoding: &str) -> Headers {
        let head = format!("HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: 0\r\n\r\n");
        match parse_head(head.as_bytes(), &Method::GET) {
            Ok(Some(Parsed::Final(_, h))) => h.headers,
            other => panic!("not a final head: {other:?}"),
        }
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn raw_deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn br(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        brotli::BrotliCompress(&mut &data[..], &mut out, &brotli::enc::BrotliEncoderParams::default()).unwrap();
        out
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        zstd::encode_all(data, 3).unwrap()
    }

    fn run(encoding: &str, body: Vec<u8>, limit: usize) -> Decoded {
        decode(&headers(encoding), &Bytes::from(body), limit).expect("an encoded body")
    }

    const JSON: &[u8] = br#"{"items":[1,2,3],"name":"planrun","text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#;

    #[test]
    fn every_coding_and_a_chain_decode_to_the_body() {
        for (name, body) in [
            ("gzip", gz(JSON)),
            ("x-gzip", gz(JSON)),
            ("deflate", zlib(JSON)),
            ("deflate", raw_deflate(JSON)),
            ("br", br(JSON)),
            ("zstd", zstd(JSON)),
            ("GZIP", gz(JSON)),
            ("gzip, br", br(&gz(JSON))),
            ("identity, zstd, deflate", raw_deflate(&zstd(JSON))),
            ("gzip,gzip", gz(&gz(JSON))),
        ] {
            let d = run(name, body, 1 << 20);
            assert_eq!((&d.body[..], &d.problem), (JSON, &None), "{name}");
        }
        let mut two = gz(b"one,");
        two.extend(gz(b"two"));
        assert_eq!(&run("gzip", two, 100).body[..], b"one,two", "gzip members one after another");
    }

    #[test]
    fn no_coding_or_identity_leaves_the_body_as_it_came() {
        let plain = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &Method::GET);
        let Ok(Some(Parsed::Final(_, h))) = plain else { panic!() };
        assert!(decode(&h.headers, &Bytes::from_static(b"x"), 10).is_none());
        assert!(decode(&headers("identity"), &Bytes::from_static(b"x"), 10).is_none());
    }

    #[test]
    fn a_body_that_inflates_past_the_limit_is_cut_there_by_every_coding() {
        let zeros = vec![0u8; 1 << 20];
        for (name, body) in [
            ("gzip", gz(&zeros)),
            ("deflate", zlib(&zeros)),
            ("deflate", raw_deflate(&zeros)),
            ("br", br(&zeros)),
            ("zstd", zstd(&zeros)),
            ("gzip, br", br(&gz(&zeros))),
        ] {
            let d = run(name, body, 1000);
            assert_eq!(d.body.len(), 1000, "{name}");
            assert!(d.problem.as_ref().is_some_and(CodingError::is_cut), "{name}: {:?}", d.problem);
        }
        let exact = run("gzip", gz(&[7; 1000]), 1000);
        assert_eq!((exact.body.len(), exact.problem), (1000, None), "exactly the limit is whole");
    }

    #[test]
    fn corrupt_truncated_and_trailing_streams_say_why_and_decode_as_far_as_they_go() {
        let mut bad_crc = gz(JSON);
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 0xff;
        let mut trailing = gz(JSON);
        trailing.extend_from_slice(b"junk");
        let cut = |v: Vec<u8>| v[..v.len() - 5].to_vec();
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("gzip", bad_crc, "does not decode"),
            ("gzip", cut(gz(JSON)), "truncated"),
            ("gzip", gz(JSON)[..5].to_vec(), "truncated"),
            ("gzip", trailing, "4 bytes after the end"),
            ("gzip", JSON.to_vec(), "does not decode"),
            ("deflate", cut(zlib(JSON)), "truncated"),
            ("deflate", [zlib(JSON), b"xy".to_vec()].concat(), "2 bytes after the end"),
            ("deflate", vec![0xff; 40], "does not decode"),
            ("br", cut(br(JSON)), "truncated"),
            ("br", [br(JSON), b"xyz".to_vec()].concat(), "3 bytes after the end"),
            ("br", vec![0xff; 40], "does not decode"),
            ("zstd", cut(zstd(JSON)), "truncated"),
            ("zstd", [zstd(JSON), b"xyz".to_vec()].concat(), "does not decode"),
            ("zstd", vec![0xff; 40], "does not decode"),
            ("br", Vec::new(), "truncated"),
            ("compress", gz(JSON), "not one planrun decodes"),
            ("gzip, gzip, gzip, gzip, gzip, gzip, gzip, gzip, gzip", gz(JSON), "at most 8"),
        ];
        for (name, body, why) in cases {
            let d = run(name, body.clone(), 1 << 20);
            let problem = d.problem.map(|p| p.to_string()).unwrap_or_default();
            assert!(problem.contains(why), "{name}: `{problem}` should say `{why}`");
            assert!(
                d.body.is_empty() || JSON.starts_with(&d.body) || d.body == body,
                "{name}: what decoded, or the bytes as received: {:?}",
                d.body
            );
        }
        let not_gzip = run("gzip", JSON.to_vec(), 100);
        assert_eq!(&not_gzip.body[..], JSON, "nothing decoded: the bytes as received");
        let mut trailing = gz(JSON);
        trailing.push(0);
        assert_eq!(&run("gzip", trailing, 100).body[..], JSON, "bytes after the end: the body decoded whole");
    }
}
