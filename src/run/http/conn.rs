//! One connection and one exchange on it, in the virtual user's own task: the request written, the response
//! head read into the user's small head buffer and parsed ([`super::decode`]), the body read through a
//! per-thread scratch buffer, keeping only what the sample needs.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use http::header::CONNECTION;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};

use super::client::{data_type, Response};
use super::counting::WireStats;
use super::decode::{next_head, BodyDecoder, DecodeError, Head, MAX_HEAD};
use super::error::Failure;
use super::stream::Stream;
use crate::compile::target::Origin;
use crate::run::wire::WireRequest;

/// The head buffer a user starts with; it grows only for a head that does not fit, up to [`MAX_HEAD`], and
/// goes back to this size after that response.
pub const HEAD_BUFFER: usize = 2 * 1024;

/// Bytes of body read from the socket at a time, into a buffer shared by the users of a thread.
const SCRATCH: usize = 32 * 1024;

thread_local! {
    /// Where body bytes are read: only the ones a sample keeps are copied out.
    static SCRATCH_BUF: RefCell<Box<[u8]>> = RefCell::new(vec![0; SCRATCH].into_boxed_slice());
    /// Where request heads are written before they go out (taken while in use; a request cut off by its
    /// timeout takes its buffer with it, and the next one makes another).
    static WRITE_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A response read to its end: what the sample gets, and the body's whole size.
pub type Received = (Response, u64);

/// A connection to an origin, plain or TLS.
#[derive(Debug)]
pub struct Conn {
    /// Where it goes.
    pub origin: Arc<Origin>,
    io: Stream,
    /// Its wire counters.
    pub stats: Arc<WireStats>,
    /// Whether it may carry another request.
    reusable: bool,
}

impl Conn {
    /// A connection over an opened stream.
    pub fn new(origin: Arc<Origin>, io: Stream, stats: Arc<WireStats>) -> Self {
        Self { origin, io, stats, reusable: true }
    }

    /// Whether the connection can take another request: the last response left it open, and (with `look`)
    /// a read attempted now, without waiting, finds nothing: a FIN (or anything else) that came while the
    /// user was elsewhere means the server is done with it. `look` false skips that: a connection used a
    /// moment ago rarely has a close waiting, and a close that crosses the request is retried instead.
    pub fn is_open(&mut self, look: bool) -> bool {
        if self.reusable && look {
            let mut cx = Context::from_waker(Waker::noop());
            let mut byte = [0u8; 1];
            let mut buf = ReadBuf::new(&mut byte);
            if Pin::new(&mut self.io).poll_read(&mut cx, &mut buf).is_ready() {
                self.reusable = false;
            }
        }
        self.reusable
    }

    /// Whether the last exchange left the connection usable for another request.
    pub fn reusable(&self) -> bool {
        self.reusable
    }

    /// Sends `head` (the encoded request head, with the body when `inline`) and reads the response, keeping
    /// up to `keep` bytes of its body. `buf` is the user's head buffer.
    pub async fn exchange(
        &mut self,
        req: &WireRequest,
        head: &[u8],
        inline: bool,
        keep: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Received, Failure> {
        self.reusable = false;
        self.io.write_all(head).await.map_err(|e| Failure::io(&e))?;
        if !inline {
            self.io.write_all(&req.body).await.map_err(|e| Failure::io(&e))?;
        }
        self.io.flush().await.map_err(|e| Failure::io(&e))?;
        let (head, at, filled) = self.read_head(req, buf).await?;
        let close_asked = req.headers.iter().any(|(n, v)| n == CONNECTION && has_close(v.as_bytes()));
        let mut body = BodyDecoder::new(head.framing);
        let mut kept = (keep > 0).then(BytesMut::new);
        let mut size = 0u64;
        let mut sink = |data: &[u8]| {
            size += data.len() as u64;
            if let Some(k) = kept.as_mut() {
                let room = keep.saturating_sub(k.len());
                k.extend_from_slice(&data[..data.len().min(room)]);
            }
        };
        let mut extra = false;
        let early = buf.get(at..filled).unwrap_or_default();
        let used = body.feed(early, &mut sink).map_err(|e| Failure::decode(&e))?;
        extra |= used < early.len();
        if buf.len() > HEAD_BUFFER {
            buf.truncate(HEAD_BUFFER);
            buf.shrink_to_fit();
        }
        while !body.is_done() {
            let step = read_scratch(&mut self.io, |got| body.feed(got, &mut sink).map(|used| used < got.len())).await;
            match step {
                Ok(Some(more)) => extra |= more.map_err(|e| Failure::decode(&e))?,
                Ok(None) => body.eof().map_err(|e| Failure::decode(&e))?,
                Err(e) => return Err(Failure::io(&e)),
            }
        }
        // Bytes after the response were not asked for: the connection's framing cannot be trusted further.
        self.reusable = head.keep_alive && !extra && !close_asked;
        let Head { status, reason, version, headers, .. } = head;
        let data_type = data_type(headers.content_type());
        let body = kept.map(BytesMut::freeze);
        Ok((Response { status, reason, data_type, body, headers, version }, size))
    }

    /// Reads until a final response head is complete; returns it, where its body starts in `buf`, and how
    /// much of `buf` was filled.
    async fn read_head(&mut self, req: &WireRequest, buf: &mut Vec<u8>) -> Result<(Head, usize, usize), Failure> {
        if buf.len() < HEAD_BUFFER {
            buf.resize(HEAD_BUFFER, 0);
        }
        let mut filled = 0;
        loop {
            if let Some((head, at)) = next_head(buf, &mut filled, &req.method).map_err(|e| Failure::decode(&e))? {
                return Ok((head, at, filled));
            }
            if filled == buf.len() {
                buf.resize((buf.len() * 2).clamp(HEAD_BUFFER, MAX_HEAD), 0);
            }
            let Some(room) = buf.get_mut(filled..) else { return Err(Failure::decode(&DecodeError::TooLarge)) };
            match self.io.read(room).await {
                Ok(0) => return Err(Failure::closed()),
                Ok(n) => filled += n,
                Err(e) => return Err(Failure::io(&e)),
            }
        }
    }
}

/// Whether a Connection header value has the `close` token.
fn has_close(value: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"))
}

/// Reads once into the thread's scratch buffer and hands what came to `f`: `None` at the end of the stream.
async fn read_scratch<R>(io: &mut Stream, mut f: impl FnMut(&[u8]) -> R) -> io::Result<Option<R>> {
    std::future::poll_fn(|cx| {
        SCRATCH_BUF.with(|cell| {
            let mut own;
            let mut shared = cell.try_borrow_mut();
            let space: &mut [u8] = match shared.as_mut() {
                Ok(s) => s,
                Err(_) => {
                    own = [0u8; 4096];
                    &mut own
                }
            };
            let mut rb = ReadBuf::new(space);
            match Pin::new(&mut *io).poll_read(cx, &mut rb) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if rb.filled().is_empty() => Poll::Ready(Ok(None)),
                Poll::Ready(Ok(())) => Poll::Ready(Ok(Some(f(rb.filled())))),
            }
        })
    })
    .await
}

/// Takes the thread's request buffer, to be given back with [`give_back`].
pub fn take_write_buf() -> Vec<u8> {
    WRITE_BUF.with(|b| b.try_borrow_mut().map(|mut b| std::mem::take(&mut *b)).unwrap_or_default())
}

/// Gives a request buffer back to the thread (a large one is dropped).
pub fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() > 64 * 1024 {
        return;
    }
    buf.clear();
    WRITE_BUF.with(|b| {
        if let Ok(mut slot) = b.try_borrow_mut() {
            if slot.capacity() < buf.capacity() {
                *slot = buf;
            }
        }
    });
}
