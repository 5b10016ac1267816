//! One connection and one exchange on it, in the virtual user's own task: the request written, the response
//! read through a per-thread scratch buffer, its head parsed there ([`super::decode`]) and its body decoded,
//! keeping only what the sample needs. A user holds no buffer of its own between requests.

use std::cell::RefCell;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::BytesMut;
use http::header::CONNECTION;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

use super::counting::WireStats;
use super::decode::{BodyDecoder, DecodeError, Head, HeadReader};
use super::error::Failure;
use super::limits::SCRATCH;
use super::request::WireRequest;
use super::response::Response;
use super::stream::Stream;
use crate::http::target::Origin;

thread_local! {
    /// Where responses are read: only the head and the body bytes a sample keeps are copied out.
    static SCRATCH_BUF: RefCell<Box<[u8]>> = RefCell::new(vec![0; SCRATCH].into_boxed_slice());
    /// Where request heads are written before they go out (taken while in use; a request cut off by its
    /// timeout takes its buffer with it, and the next one makes another).
    static WRITE_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

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
    /// When the last exchange's response began: its first bytes came (decrypted ones, over TLS).
    pub first_read: Option<Instant>,
    /// Whether bytes came after the last response's end: the server sent what no request asked for.
    out_of_step: bool,
}

/// What a look at a connection that sat idle found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Nothing: it can take the next request.
    Open,
    /// The last response left it unusable, or the server closed it (or reset it) since.
    Closed,
    /// Bytes came that no request asked for: a response sent late, or twice. Taken for the next request's
    /// answer they would put every later answer one request behind.
    OutOfStep,
}

impl Conn {
    /// A connection over an opened stream.
    pub fn new(origin: Arc<Origin>, io: Stream, stats: Arc<WireStats>) -> Self {
        Self { origin, io, stats, reusable: true, first_read: None, out_of_step: false }
    }

    /// Whether the connection can take another request: the last response left it open, and (with `look`)
    /// a read attempted now, without waiting, finds nothing. A FIN that came while the user was elsewhere
    /// means the server is done with it; bytes mean it is out of step (no request is waiting for them). `look`
    /// false skips the read: a connection used a moment ago rarely has anything waiting, and a close that
    /// crosses the request is retried instead.
    pub fn idle_state(&mut self, look: bool) -> Idle {
        if !self.reusable {
            return Idle::Closed;
        }
        if look {
            let mut cx = Context::from_waker(Waker::noop());
            let mut byte = [0u8; 1];
            let mut buf = ReadBuf::new(&mut byte);
            if let Poll::Ready(read) = Pin::new(&mut self.io).poll_read(&mut cx, &mut buf) {
                self.reusable = false;
                return match read {
                    Ok(()) if !buf.filled().is_empty() => Idle::OutOfStep,
                    _ => Idle::Closed,
                };
            }
        }
        Idle::Open
    }

    /// Whether the last exchange left the connection usable for another request.
    pub fn reusable(&self) -> bool {
        self.reusable
    }

    /// Whether bytes came after the last exchange's response (the connection is then not reusable).
    pub fn out_of_step(&self) -> bool {
        self.out_of_step
    }

    /// Sends `head` (the encoded request head, with the body when `inline`) and reads the response into
    /// `into`, keeping up to `keep.0` bytes of its body, and its headers when `keep.1` (see
    /// [`super::How::headers`]); returns the body's whole size. The response is written where the sample
    /// reads it: returned, it was moved (120-odd bytes) by each layer between.
    pub async fn exchange(
        &mut self,
        req: &WireRequest,
        head: &[u8],
        inline: bool,
        (keep, keep_headers): (usize, bool),
        into: &mut Result<Response, Failure>,
    ) -> Result<u64, Failure> {
        self.reusable = false;
        self.out_of_step = false;
        self.first_read = None;
        if inline {
            self.io.write_all(head).await
        } else {
            // Boxed: a body this large is rare, and its writes would make every exchange's future larger.
            Box::pin(write_apart(&mut self.io, head, &req.body)).await
        }
        .map_err(|e| Failure::io(&e))?;
        // A TCP socket's flush does nothing; TLS writes its records out on it.
        if matches!(self.io, Stream::Tls(_)) {
            self.io.flush().await.map_err(|e| Failure::io(&e))?;
        }
        let close_asked = req.headers.iter().any(|(n, v)| n == CONNECTION && has_close(v.as_bytes()));
        let mut kept = (keep > 0).then(BytesMut::new);
        let mut size = 0u64;
        let mut sink = |data: &[u8]| {
            size += data.len() as u64;
            if let Some(k) = kept.as_mut() {
                let room = keep.saturating_sub(k.len());
                k.extend_from_slice(&data[..data.len().min(room)]);
            }
        };
        // The head, and the body's first bytes when they came with it, fed to the body's decoder in the same
        // read: they are still in the scratch buffer then.
        let mut reader = HeadReader::default();
        let (head, mut body, mut extra) = loop {
            let step = read_scratch(&mut self.io, &mut self.first_read, |got| {
                let Some((head, early)) = reader.take(got, &req.method, keep_headers)? else { return Ok(None) };
                let mut body = BodyDecoder::new(head.framing);
                let used = body.feed(early, &mut sink)?;
                Ok::<_, DecodeError>(Some((head, body, used < early.len())))
            })
            .await;
            match step {
                Ok(Some(Ok(Some(found)))) => break found,
                Ok(Some(Ok(None))) => {}
                Ok(Some(Err(e))) => return Err(Failure::decode(&e)),
                Ok(None) => return Err(Failure::closed()),
                Err(e) => return Err(Failure::io(&e)),
            }
        };
        drop(reader);
        while !body.is_done() {
            let step = read_scratch(&mut self.io, &mut self.first_read, |got| {
                body.feed(got, &mut sink).map(|used| used < got.len())
            })
            .await;
            match step {
                Ok(Some(more)) => extra |= more.map_err(|e| Failure::decode(&e))?,
                Ok(None) => body.eof().map_err(|e| Failure::decode(&e))?,
                Err(e) => return Err(Failure::io(&e)),
            }
        }
        // Bytes after the response were not asked for: the connection's framing cannot be trusted further.
        self.reusable = head.keep_alive && !extra && !close_asked;
        self.out_of_step = extra;
        let Head { status, reason, version, headers, data_type, .. } = head;
        let body = kept.map(BytesMut::freeze);
        *into = Ok(Response { status, reason, data_type, body, headers, version });
        Ok(size)
    }
}

/// Writes `head` and then a body that was not copied after it: over TCP both in one vectored write (as
/// many as the socket takes), over TLS one after the other.
async fn write_apart(io: &mut Stream, head: &[u8], body: &[u8]) -> io::Result<()> {
    match io {
        Stream::Plain(s) => write_both(s, head, body).await,
        Stream::Tls(s) => {
            s.write_all(head).await?;
            s.write_all(body).await
        }
    }
}

/// Writes `head` and then `body` with as few writes as the socket takes: both in one vectored write, with
/// no copy of the body after the head.
async fn write_both<W: AsyncWrite + Unpin>(io: &mut W, mut head: &[u8], body: &[u8]) -> io::Result<()> {
    while !head.is_empty() {
        let n = io.write_vectored(&[IoSlice::new(head), IoSlice::new(body)]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        if n < head.len() {
            head = &head[n..];
        } else {
            return io.write_all(&body[n - head.len()..]).await;
        }
    }
    io.write_all(body).await
}

/// Whether a Connection header value has the `close` token.
fn has_close(value: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"))
}

/// Reads once into the thread's scratch buffer and hands what came to `f`: `None` at the end of the stream.
/// The first read that brings bytes notes when in `began`. Not an `async fn`, as the run's panic catcher
/// is not: a state machine of its own would be a layer more on every read.
fn read_scratch<'a, R>(
    io: &'a mut Stream,
    began: &'a mut Option<Instant>,
    mut f: impl FnMut(&mut [u8]) -> R + 'a,
) -> impl Future<Output = io::Result<Option<R>>> + 'a {
    std::future::poll_fn(move |cx| {
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
                Poll::Ready(Ok(())) => {
                    began.get_or_insert_with(Instant::now);
                    Poll::Ready(Ok(Some(f(rb.filled_mut()))))
                }
            }
        })
    })
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
