//! TLS over a counted socket with rustls' unbuffered API: records are read into, and written from, buffers
//! that the users of a thread share, so a connection that waits for its next request holds no buffer of its
//! own. (rustls' buffered connection keeps a 4 KiB read buffer for each connection all its life: 40 MiB for
//! 10,000 users.) A connection keeps bytes of its own only while they wait: a record that came in part, the
//! part of a record the reader had no room for, or records the socket would not take yet.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustls::client::ClientConnectionData;
use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::ServerName;
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncodeTlsData, EncryptError, InsufficientSizeError, UnbufferedStatus,
};
use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::counting::Counting;
use super::limits::SCRATCH;

/// Room left for a read from the socket: a record's worth.
const READ_ROOM: usize = 16 * 1024 + 2048 + 5;
/// Plaintext encrypted by one write: larger writes take several (the buffer they go through stays this size).
const WRITE_CHUNK: usize = 4 * (16 * 1024);

/// A thread's buffer: `buf` is all initialized (it only grows), `used` bytes of it hold data.
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    used: usize,
}

thread_local! {
    /// Where records are read and decrypted.
    static RECEIVED: RefCell<Scratch> = RefCell::new(Scratch::default());
    /// Where records are encrypted before they go out.
    static SENT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A TLS client connection over a counted socket.
pub struct TlsStream {
    io: Counting<TcpStream>,
    conn: UnbufferedClientConnection,
    /// Bytes received and not processed yet: a record that came in part (or a handshake message that spans
    /// records). Empty, with no allocation, between responses.
    received: Vec<u8>,
    /// Decrypted bytes a reader had no room for, from `plain_at`.
    plain: Vec<u8>,
    plain_at: usize,
    /// Records the socket would not take yet, from `sent_at`.
    unsent: Vec<u8>,
    sent_at: usize,
    /// The socket's end came.
    eof: bool,
    /// The server's close_notify came: what it sent has ended.
    closed: bool,
    /// Our close_notify is on its way.
    close_sent: bool,
}

impl fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsStream").field("io", &self.io).field("closed", &self.closed).finish_non_exhaustive()
    }
}

/// What processing the received records came to.
enum Next {
    /// Decrypted data was delivered.
    Data,
    /// rustls needs more records (or, after the handshake, has nothing to do).
    More,
    /// The server closed the TLS session.
    Closed,
}

/// A rustls error as the I/O error tokio-rustls makes of it (the engine's failures look for it inside).
fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    /// Makes the TLS handshake with `name` on `io`.
    pub async fn connect(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        io: Counting<TcpStream>,
    ) -> io::Result<Self> {
        let conn = UnbufferedClientConnection::new(config, name).map_err(tls_error)?;
        let mut tls = Self {
            io,
            conn,
            received: Vec::new(),
            plain: Vec::new(),
            plain_at: 0,
            unsent: Vec::new(),
            sent_at: 0,
            eof: false,
            closed: false,
            close_sent: false,
        };
        std::future::poll_fn(|cx| tls.with_received(|tls, received| tls.poll_handshake(cx, received))).await?;
        Ok(tls)
    }

    /// The protocol the server chose by ALPN.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    /// Runs `f` on the thread's receive buffer holding the connection's unprocessed bytes; those left
    /// unprocessed go back to the connection.
    fn with_received<T>(&mut self, f: impl FnOnce(&mut Self, &mut Scratch) -> T) -> T {
        RECEIVED.with_borrow_mut(|scratch| {
            scratch.used = 0;
            if !self.received.is_empty() {
                if scratch.buf.len() < self.received.len() {
                    scratch.buf.resize(self.received.len(), 0);
                }
                scratch.buf[..self.received.len()].copy_from_slice(&self.received);
                scratch.used = self.received.len();
                self.received = Vec::new();
            }
            let out = f(self, scratch);
            if scratch.used > 0 {
                self.received = scratch.buf[..scratch.used].to_vec();
            }
            out
        })
    }

    fn poll_handshake(&mut self, cx: &mut Context<'_>, received: &mut Scratch) -> Poll<io::Result<()>> {
        loop {
            let next = self.process(received, None)?;
            ready!(self.poll_send(cx))?;
            if !self.conn.is_handshaking() {
                return Poll::Ready(Ok(()));
            }
            if matches!(next, Next::Closed) || self.eof {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof")));
            }
            ready!(self.poll_receive(cx, received))?;
        }
    }

    /// Reads from the socket into `received`, after its data; sets `eof` at the end.
    fn poll_receive(&mut self, cx: &mut Context<'_>, received: &mut Scratch) -> Poll<io::Result<()>> {
        let want = (received.used + READ_ROOM).max(SCRATCH);
        if received.buf.len() < want {
            received.buf.resize(want, 0);
        }
        let mut buf = ReadBuf::new(&mut received.buf[received.used..]);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf))?;
        match buf.filled().len() {
            0 => self.eof = true,
            n => received.used += n,
        }
        Poll::Ready(Ok(()))
    }

    /// Processes the records in `received`: decrypted data goes to `out` (what does not fit to `plain`), the
    /// handshake's records to `unsent`.
    fn process(&mut self, received: &mut Scratch, mut out: Option<&mut ReadBuf<'_>>) -> io::Result<Next> {
        let mut data = false;
        loop {
            let UnbufferedStatus { discard, state } = self.conn.process_tls_records(&mut received.buf[..received.used]);
            let next = match state.map_err(tls_error)? {
                ConnectionState::ReadTraffic(mut records) => {
                    while let Some(record) = records.next_record() {
                        let mut payload = record.map_err(tls_error)?.payload;
                        let record_was_empty = payload.is_empty();
                        if let Some(out) = out.as_deref_mut() {
                            let n = payload.len().min(out.remaining());
                            out.put_slice(&payload[..n]);
                            payload = &payload[n..];
                        }
                        self.plain.extend_from_slice(payload);
                        // An empty record delivers nothing: returned as data, it would read as the end.
                        data |= !record_was_empty;
                    }
                    None
                }
                ConnectionState::EncodeTlsData(encode) => {
                    encode_into(&mut self.unsent, encode)?;
                    None
                }
                // The records encoded are in `unsent`: they go out before anything written later.
                ConnectionState::TransmitTlsData(transmit) => {
                    transmit.done();
                    None
                }
                ConnectionState::BlockedHandshake | ConnectionState::WriteTraffic(_) => {
                    Some(if data { Next::Data } else { Next::More })
                }
                ConnectionState::PeerClosed | ConnectionState::Closed => {
                    self.closed = true;
                    Some(if data { Next::Data } else { Next::Closed })
                }
                _ => return Err(io::Error::other("unexpected TLS connection state")),
            };
            if discard > 0 {
                received.buf.copy_within(discard..received.used, 0);
                received.used -= discard;
            }
            if let Some(next) = next {
                return Ok(next);
            }
        }
    }

    /// Writes `unsent` out; frees it once it is.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent_at < self.unsent.len() {
            match ready!(Pin::new(&mut self.io).poll_write(cx, &self.unsent[self.sent_at..]))? {
                0 => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                n => self.sent_at += n,
            }
        }
        if self.sent_at > 0 || self.unsent.capacity() > 0 {
            self.unsent = Vec::new();
            self.sent_at = 0;
        }
        Poll::Ready(Ok(()))
    }

    /// Gives what `plain` holds to `buf`; frees it once it is all given.
    fn take_plain(&mut self, buf: &mut ReadBuf<'_>) {
        let n = (self.plain.len() - self.plain_at).min(buf.remaining());
        buf.put_slice(&self.plain[self.plain_at..self.plain_at + n]);
        self.plain_at += n;
        if self.plain_at == self.plain.len() {
            self.plain = Vec::new();
            self.plain_at = 0;
        }
    }

    fn poll_read_records(
        &mut self,
        cx: &mut Context<'_>,
        received: &mut Scratch,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let next = self.process(received, Some(buf))?;
            // A key update answered, or an alert: out before the next request.
            if let Poll::Ready(Err(e)) = self.poll_send(cx) {
                return Poll::Ready(Err(e));
            }
            match next {
                Next::Data | Next::Closed => return Poll::Ready(Ok(())),
                Next::More if self.eof => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "peer closed connection without sending TLS close_notify",
                    )))
                }
                Next::More => ready!(self.poll_receive(cx, received))?,
            }
        }
    }

    /// Encrypts `data` into `out` (grown as needed), after what rustls has to send first; returns the length.
    fn encrypt(&mut self, data: &[u8], out: &mut Vec<u8>) -> io::Result<usize> {
        loop {
            let UnbufferedStatus { state, .. } = self.conn.process_tls_records(&mut []);
            match state.map_err(tls_error)? {
                ConnectionState::WriteTraffic(mut traffic) => {
                    let room = data.len() + 64 * (data.len() / (16 * 1024) + 1);
                    if out.len() < room {
                        out.resize(room, 0);
                    }
                    return match traffic.encrypt(data, out) {
                        Ok(n) => Ok(n),
                        Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) => {
                            out.resize(required_size, 0);
                            traffic.encrypt(data, out).map_err(io::Error::other)
                        }
                        Err(e) => Err(io::Error::other(e)),
                    };
                }
                ConnectionState::EncodeTlsData(encode) => encode_into(&mut self.unsent, encode)?,
                ConnectionState::TransmitTlsData(transmit) => transmit.done(),
                ConnectionState::PeerClosed => self.closed = true,
                ConnectionState::Closed => return Err(io::ErrorKind::BrokenPipe.into()),
                _ => return Err(io::Error::other("the TLS connection cannot send")),
            }
        }
    }

    /// Sends `records` (just encrypted, after `unsent`, which is empty): what the socket does not take now
    /// waits in `unsent`.
    fn send_now(&mut self, cx: &mut Context<'_>, records: &[u8]) -> io::Result<()> {
        let mut at = 0;
        while at < records.len() {
            match Pin::new(&mut self.io).poll_write(cx, &records[at..]) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => at += n,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => break,
            }
        }
        if at < records.len() {
            self.unsent.extend_from_slice(&records[at..]);
        }
        Ok(())
    }
}

impl AsyncRead for TlsStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.plain_at < this.plain.len() {
            this.take_plain(buf);
            return Poll::Ready(Ok(()));
        }
        if this.closed {
            return Poll::Ready(Ok(()));
        }
        ready!(this.poll_send(cx))?;
        this.with_received(|tls, received| tls.poll_read_records(cx, received, buf))
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let data = &buf[..buf.len().min(WRITE_CHUNK)];
        SENT.with_borrow_mut(|out| {
            let n = this.encrypt(data, out)?;
            // What rustls had to send first (a key update) is in `unsent`: it goes before.
            if this.unsent.is_empty() {
                this.send_now(cx, &out[..n])?;
            } else {
                this.unsent.extend_from_slice(&out[..n]);
                let _ = this.poll_send(cx)?;
            }
            Poll::Ready(Ok(data.len()))
        })
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.close_sent {
            this.close_sent = true;
            let UnbufferedStatus { state, .. } = this.conn.process_tls_records(&mut []);
            if let Ok(ConnectionState::WriteTraffic(mut traffic)) = state {
                let mut alert = vec![0; 64];
                if let Ok(n) = traffic.queue_close_notify(&mut alert) {
                    this.unsent.extend_from_slice(&alert[..n]);
                }
            }
        }
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// Appends the handshake records rustls has to send to `unsent`.
fn encode_into(unsent: &mut Vec<u8>, mut encode: EncodeTlsData<'_, ClientConnectionData>) -> io::Result<()> {
    let at = unsent.len();
    let need = match encode.encode(&mut []) {
        Err(EncodeError::InsufficientSize(InsufficientSizeError { required_size })) => required_size,
        _ => 0,
    };
    unsent.resize(at + need, 0);
    let n = encode.encode(&mut unsent[at..]).map_err(io::Error::other)?;
    unsent.truncate(at + n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::counting::WireStats;
    use crate::http::tls::{for_one_user, server_name, tls_config, TlsSettings};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A TLS server on 127.0.0.1 that answers each request it reads (one read) with `size` bytes.
    async fn server(size: usize) -> std::net::SocketAddr {
        serve(size, false).await
    }

    /// The same; with `cut`, it answers the first request with half its bytes and closes the socket without
    /// a close_notify.
    async fn serve(size: usize, cut: bool) -> std::net::SocketAddr {
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.cert.der().clone()], key.into())
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut tls = acceptor.accept(tcp).await.unwrap();
            let mut request = vec![0; 1024];
            while tls.read(&mut request).await.unwrap_or(0) > 0 {
                tls.write_all(&vec![b'x'; if cut { size / 2 } else { size }]).await.unwrap();
                tls.flush().await.unwrap();
                if cut {
                    return;
                }
            }
        });
        addr
    }

    async fn connect(addr: std::net::SocketAddr) -> TlsStream {
        let run = tls_config(&TlsSettings { insecure: true, ..Default::default() }).unwrap();
        let tcp = TcpStream::connect(addr).await.unwrap();
        TlsStream::connect(for_one_user(&run), server_name("127.0.0.1").unwrap(), Counting::new(tcp, WireStats::new()))
            .await
            .unwrap()
    }

    fn holds_nothing(tls: &TlsStream) -> bool {
        tls.received.capacity() == 0 && tls.plain.capacity() == 0 && tls.unsent.capacity() == 0
    }

    /// Between responses a connection holds no buffer, whatever size its reader's buffer was: what a small
    /// reader had no room for is kept until it is read, then freed.
    #[tokio::test]
    async fn a_connection_between_responses_holds_no_buffer() {
        let size = 40_000;
        let mut tls = connect(server(size).await).await;
        assert!(holds_nothing(&tls), "after the handshake");
        for reader in [32 * 1024, 1, 1000] {
            tls.write_all(b"next").await.unwrap();
            tls.flush().await.unwrap();
            let mut got = 0;
            let mut buf = vec![0; reader];
            while got < size {
                let n = tls.read(&mut buf).await.unwrap();
                assert!(n > 0, "the response ended after {got} bytes");
                assert!(buf[..n].iter().all(|&b| b == b'x'));
                got += n;
            }
            assert_eq!(got, size);
            assert!(holds_nothing(&tls), "after a response read {reader} bytes at a time");
        }
    }

    /// A server that closes its socket in the middle of a response, without close_notify: the read ends in an
    /// error (the response may have been cut short), as tokio-rustls' did, not in a quiet end.
    #[tokio::test]
    async fn a_socket_closed_without_close_notify_is_an_unexpected_end() {
        let size = 40_000;
        let mut tls = connect(serve(size, true).await).await;
        tls.write_all(b"next").await.unwrap();
        tls.flush().await.unwrap();
        let mut buf = vec![0; 32 * 1024];
        let mut got = 0;
        let end = loop {
            match tls.read(&mut buf).await {
                Ok(0) => break Ok(()),
                Ok(n) => got += n,
                Err(e) => break Err(e),
            }
        };
        assert_eq!(got, size / 2, "every byte the server sent");
        let e = end.expect_err("an error, not the end of the stream");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
        assert!(holds_nothing(&tls));
    }
}
