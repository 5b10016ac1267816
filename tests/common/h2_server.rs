//! An in-process cleartext HTTP/2 server (h2c, prior knowledge) on the h2 crate's server side, with hostile
//! paths: `/ok` 200 "ok"; `/bytes/N` N bytes, sent as the client's flow control allows; `/echo-size` 200 with
//! the request body's size; `/reset` RST_STREAM INTERNAL_ERROR instead of a response; `/refuse-first`
//! REFUSED_STREAM on a connection's first stream, 200 "ok" on the others; `/goaway-after` 200 "ok", then a
//! graceful GOAWAY; `/goaway-abrupt` a GOAWAY INTERNAL_ERROR and the connection closed, no response;
//! `/cut` the head and 1000 bytes of a body, then the TCP connection reset (RST); `/reset-early` RST_STREAM
//! CANCEL as soon as the request's head came, none of its body read; anything else 404.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use http::{Request, Response};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// What the server counts.
#[derive(Debug, Default)]
pub struct H2Counts {
    /// TCP connections accepted.
    pub connections: AtomicU64,
    /// Streams (requests) received.
    pub streams: AtomicU64,
    /// Requests answered with a whole response.
    pub answered: AtomicU64,
    /// Request body bytes received.
    pub body_bytes: AtomicU64,
    /// Streams reset at once by `/reset-early`.
    pub streams_reset_early: AtomicU64,
    /// Each request as it came.
    pub heads: std::sync::Mutex<Vec<Received>>,
}

/// A request as the server received it: its pseudo-header fields (from the URI h2 made of them) and header
/// fields, in order, and its body.
pub type Received = (Vec<(String, String)>, Vec<u8>);

/// The server's SETTINGS.
#[derive(Debug, Clone, Copy, Default)]
pub struct H2Settings {
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE: how much of a request body the client may send before the server reads.
    pub initial_window_size: Option<u32>,
    /// SETTINGS_MAX_FRAME_SIZE.
    pub max_frame_size: Option<u32>,
}

/// The running server; stopped when dropped.
pub struct H2Server {
    rt: Option<Runtime>,
    addr: SocketAddr,
    /// Its counters.
    pub counts: Arc<H2Counts>,
}

enum Cmd {
    Graceful,
    Abrupt,
    Kill,
}

impl H2Server {
    /// Starts it on 127.0.0.1, a free port, with default SETTINGS.
    pub fn start() -> H2Server {
        Self::with_settings(H2Settings::default())
    }

    /// Starts it with these SETTINGS.
    pub fn with_settings(settings: H2Settings) -> H2Server {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
        let counts = Arc::new(H2Counts::default());
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind the h2 server");
        let addr = listener.local_addr().expect("its address");
        let c = counts.clone();
        rt.spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { continue };
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = c.clone();
                tokio::spawn(async move {
                    let _ = socket.set_nodelay(true);
                    // A handle of its own on the socket, to reset it (`/cut`) while h2 holds the stream.
                    let Ok(pair) = socket.into_std().and_then(|s| Ok((s.try_clone()?, s))) else { return };
                    let (Ok(sock), Ok(socket)) =
                        (tokio::net::TcpStream::from_std(pair.0), tokio::net::TcpStream::from_std(pair.1))
                    else {
                        return;
                    };
                    let mut b = h2::server::Builder::new();
                    if let Some(n) = settings.max_concurrent_streams {
                        b.max_concurrent_streams(n);
                    }
                    if let Some(n) = settings.initial_window_size {
                        b.initial_window_size(n);
                    }
                    if let Some(n) = settings.max_frame_size {
                        b.max_frame_size(n);
                    }
                    let Ok(mut conn) = b.handshake::<_, Bytes>(socket).await else { return };
                    let (tx, mut rx) = mpsc::unbounded_channel();
                    let mut nth = 0u64;
                    loop {
                        tokio::select! {
                            next = conn.accept() => {
                                let Some(Ok((req, respond))) = next else { break };
                                nth += 1;
                                c.streams.fetch_add(1, Ordering::SeqCst);
                                tokio::spawn(handle(req, respond, nth, c.clone(), tx.clone()));
                            }
                            cmd = rx.recv() => match cmd {
                                Some(Cmd::Graceful) => conn.graceful_shutdown(),
                                Some(Cmd::Abrupt) => conn.abrupt_shutdown(Reason::INTERNAL_ERROR),
                                Some(Cmd::Kill) => {
                                    let _ = sock.set_zero_linger();
                                    return;
                                }
                                None => break,
                            },
                        }
                    }
                    // Whatever the GOAWAY left to send goes out before the socket closes.
                    let _ = tokio::time::timeout(
                        std::time::Duration::from_millis(200),
                        std::future::poll_fn(|cx| conn.poll_closed(cx)),
                    )
                    .await;
                });
            }
        });
        H2Server { rt: Some(rt), addr, counts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A counter's value.
    pub fn get(&self, counter: fn(&H2Counts) -> &AtomicU64) -> u64 {
        counter(&self.counts).load(Ordering::SeqCst)
    }
}

impl Drop for H2Server {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn handle(
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    nth: u64,
    c: Arc<H2Counts>,
    conn: mpsc::UnboundedSender<Cmd>,
) {
    let path = req.uri().path().to_string();
    if path == "/reset-early" {
        c.streams_reset_early.fetch_add(1, Ordering::SeqCst);
        // Before any of the body is read: a large one still waits for window when the reset comes.
        return respond.send_reset(Reason::CANCEL);
    }
    let uri = req.uri();
    let mut fields = vec![(":method".to_string(), req.method().to_string())];
    fields.extend(uri.scheme_str().map(|s| (":scheme".to_string(), s.to_string())));
    fields.extend(uri.authority().map(|a| (":authority".to_string(), a.to_string())));
    fields.extend(uri.path_and_query().map(|p| (":path".to_string(), p.to_string())));
    for (n, v) in req.headers() {
        fields.push((n.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()));
    }
    let mut body = req.into_body();
    let mut size = 0u64;
    let mut bytes = Vec::new();
    while let Some(Ok(data)) = body.data().await {
        size += data.len() as u64;
        bytes.extend_from_slice(&data);
        let _ = body.flow_control().release_capacity(data.len());
    }
    c.body_bytes.fetch_add(size, Ordering::SeqCst);
    c.heads.lock().unwrap().push((fields, bytes));
    let head = |status: u16| Response::builder().status(status).header("content-type", "text/plain").body(()).unwrap();
    let answer = |mut respond: SendResponse<Bytes>, status: u16, text: Bytes| {
        let c = c.clone();
        async move {
            let Ok(mut out) = respond.send_response(head(status), false) else { return };
            if send_all(&mut out, text).await {
                c.answered.fetch_add(1, Ordering::SeqCst);
            }
        }
    };
    match path.as_str() {
        "/ok" => answer(respond, 200, Bytes::from_static(b"ok")).await,
        "/echo-size" => answer(respond, 200, Bytes::from(size.to_string())).await,
        "/reset" => respond.send_reset(Reason::INTERNAL_ERROR),
        "/refuse-first" if nth == 1 => respond.send_reset(Reason::REFUSED_STREAM),
        "/refuse-first" => answer(respond, 200, Bytes::from_static(b"ok")).await,
        "/goaway-after" => {
            answer(respond, 200, Bytes::from_static(b"ok")).await;
            let _ = conn.send(Cmd::Graceful);
        }
        "/goaway-abrupt" => {
            let _ = conn.send(Cmd::Abrupt);
            // Held until the connection is gone, so no RST_STREAM goes out for it.
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            drop(respond);
        }
        "/cut" => {
            let Ok(mut out) = respond.send_response(head(200), false) else { return };
            let _ = out.send_data(Bytes::from(vec![b'x'; 1000]), false);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let _ = conn.send(Cmd::Kill);
        }
        "/to-ok" => {
            let moved = Response::builder().status(302).header("location", "/ok").body(()).unwrap();
            if respond.send_response(moved, true).is_ok() {
                c.answered.fetch_add(1, Ordering::SeqCst);
            }
        }
        p if p.starts_with("/bytes/") => {
            let n: usize = p["/bytes/".len()..].parse().unwrap_or(0);
            answer(respond, 200, Bytes::from(vec![b'x'; n])).await
        }
        _ => answer(respond, 404, Bytes::from_static(b"not found")).await,
    }
}

/// Sends `data` as the stream's flow control allows; true when all of it went out.
async fn send_all(out: &mut h2::SendStream<Bytes>, mut data: Bytes) -> bool {
    if data.is_empty() {
        return out.send_data(data, true).is_ok();
    }
    while !data.is_empty() {
        out.reserve_capacity(data.len());
        let room = match std::future::poll_fn(|cx| out.poll_capacity(cx)).await {
            Some(Ok(n)) => n,
            _ => return false,
        };
        if room == 0 {
            continue;
        }
        let chunk = data.split_to(room.min(data.len()));
        if out.send_data(chunk, data.is_empty()).is_err() {
            return false;
        }
    }
    true
}
