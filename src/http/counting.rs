//! A socket wrapper that counts wire bytes. Under TLS it wraps the socket, so what it counts is what crossed
//! the wire: records, the handshake's included. (When the response began is noted by the connection's read
//! loop, on the bytes the response is read from: over TLS, decrypted ones, so a TLS 1.3 session ticket
//! arriving after the handshake is not taken for the response.)

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Counters of one connection: written by its stream, read by the client between requests. Both run in the
/// virtual user's task, which drives the connection itself (there is no connection task).
#[derive(Debug)]
pub struct WireStats {
    read: AtomicU64,
    written: AtomicU64,
}

impl WireStats {
    /// New counters.
    pub fn new() -> Arc<Self> {
        Arc::new(Self { read: AtomicU64::new(0), written: AtomicU64::new(0) })
    }

    /// Starts counting for a new request.
    pub fn reset(&self) {
        self.read.store(0, Ordering::Relaxed);
        self.written.store(0, Ordering::Relaxed);
    }

    /// Bytes read and written since the last reset or take, counted once: the counters start again from 0.
    /// Loads and stores, not swaps: only the user's own task touches the counters, and a swap is a locked
    /// instruction that waits for every earlier store.
    pub fn take(&self) -> (u64, u64) {
        let taken = (self.read.load(Ordering::Relaxed), self.written.load(Ordering::Relaxed));
        self.reset();
        taken
    }

    /// Bytes written since the last reset or take.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

/// A stream whose reads and writes are counted into [`WireStats`].
#[derive(Debug)]
pub struct Counting<T> {
    inner: T,
    stats: Arc<WireStats>,
}

impl<T> Counting<T> {
    /// Wraps a socket.
    pub fn new(inner: T, stats: Arc<WireStats>) -> Self {
        Self { inner, stats }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counting<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        // One writer (this stream) and a reader in the same task: no read-modify-write needed.
        let r = &self.stats.read;
        r.store(r.load(Ordering::Relaxed) + n, Ordering::Relaxed);
        res
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counting<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &res {
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
        if let Poll::Ready(Ok(n)) = &res {
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
