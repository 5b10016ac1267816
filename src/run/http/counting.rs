//! A socket wrapper that counts wire bytes and notes when the first response byte arrived.
//!
//! Plain connections wrap the socket once, doing both. TLS connections wrap it twice: under TLS to count the
//! bytes on the wire (records, handshake included), and over TLS to note the first byte of the response
//! itself, so a TLS 1.3 session ticket arriving after the handshake is not taken for the response.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Counters of one connection: written by its stream, read by the client between requests. Both run in the
/// virtual user's task, which drives the connection itself (there is no connection task).
#[derive(Debug)]
pub struct WireStats {
    epoch: Instant,
    read: AtomicU64,
    written: AtomicU64,
    /// Nanoseconds from `epoch` to the first byte read since the last reset; `u64::MAX` when none yet.
    first_read_ns: AtomicU64,
}

impl WireStats {
    /// New counters.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            epoch: Instant::now(),
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            first_read_ns: AtomicU64::new(u64::MAX),
        })
    }

    /// Starts counting for a new request.
    pub fn reset(&self) {
        self.read.store(0, Ordering::Relaxed);
        self.written.store(0, Ordering::Relaxed);
        self.first_read_ns.store(u64::MAX, Ordering::Relaxed);
    }

    /// Bytes read and written since the last reset or take, counted once: the counters start again from 0.
    pub fn take(&self) -> (u64, u64) {
        (self.read.swap(0, Ordering::Relaxed), self.written.swap(0, Ordering::Relaxed))
    }

    /// Bytes written since the last reset or take.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// When the first byte since the last reset arrived.
    pub fn first_read(&self) -> Option<Instant> {
        match self.first_read_ns.load(Ordering::Relaxed) {
            u64::MAX => None,
            ns => Some(self.epoch + std::time::Duration::from_nanos(ns)),
        }
    }
}

/// A stream whose reads and writes are counted into [`WireStats`], and whose first read is noted there.
#[derive(Debug)]
pub struct Counting<T> {
    inner: T,
    stats: Arc<WireStats>,
    count: bool,
    mark: bool,
}

impl<T> Counting<T> {
    /// Wraps a plain socket: counts its bytes and notes its first read.
    pub fn new(inner: T, stats: Arc<WireStats>) -> Self {
        Self { inner, stats, count: true, mark: true }
    }

    /// Wraps the socket under TLS: counts its bytes only.
    pub fn bytes_only(inner: T, stats: Arc<WireStats>) -> Self {
        Self { inner, stats, count: true, mark: false }
    }

    /// Wraps the decrypted stream over TLS: notes its first read only.
    pub fn first_read_only(inner: T, stats: Arc<WireStats>) -> Self {
        Self { inner, stats, count: false, mark: true }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counting<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        if n > 0 {
            let s = &self.stats;
            if self.mark && s.first_read_ns.load(Ordering::Relaxed) == u64::MAX {
                s.first_read_ns.store(s.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
            if self.count {
                // One writer (this stream) and a reader in the same task: no read-modify-write needed.
                s.read.store(s.read.load(Ordering::Relaxed) + n, Ordering::Relaxed);
            }
        }
        res
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counting<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let (Poll::Ready(Ok(n)), true) = (&res, self.count) {
            let w = &self.stats.written;
            w.store(w.load(Ordering::Relaxed) + *n as u64, Ordering::Relaxed);
        }
        res
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let (Poll::Ready(Ok(n)), true) = (&res, self.count) {
            let w = &self.stats.written;
            w.store(w.load(Ordering::Relaxed) + *n as u64, Ordering::Relaxed);
        }
        res
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
