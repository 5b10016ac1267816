//! A cleartext HTTP/2 server (prior knowledge) written frame by frame, for what the h2 crate's server cannot
//! be made to do: a GOAWAY that names a last stream below or at a stream the client has just opened, and then
//! the connection closed. On each connection it answers the first stream (once the whole request came, its
//! windows opened again as its body comes) with `:status 200` and the body `ok`; on the second it sends
//! GOAWAY NO_ERROR, with the last-stream id that [`LastStream`] says, does not answer, and closes. It counts
//! connections, streams opened, and requests answered with the bytes of their bodies.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The last-stream id of the GOAWAY sent on a connection's second stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastStream {
    /// The first stream's: the second was not processed (RFC 9113 6.8), any request may be sent again.
    Before,
    /// The second stream's own: it may have been processed.
    Including,
}

/// What the server counts.
#[derive(Debug, Default)]
pub struct RawH2Counts {
    /// TCP connections accepted.
    pub connections: AtomicU64,
    /// Streams opened by the client (HEADERS frames that start one).
    pub streams: AtomicU64,
    /// Requests answered with a whole response.
    pub answered: AtomicU64,
    /// Body bytes of the answered requests.
    pub answered_body_bytes: AtomicU64,
}

/// The running server; stopped when dropped.
pub struct GoAwayServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Its counters.
    pub counts: Arc<RawH2Counts>,
}

const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0;
const HEADERS: u8 = 1;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
/// HPACK: the static table's 8th entry, `:status 200`, as an indexed field (RFC 7541 6.1, appendix A).
const STATUS_200: u8 = 0x88;

impl GoAwayServer {
    /// Starts it on 127.0.0.1, a free port.
    pub fn start(last: LastStream) -> GoAwayServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the raw h2 server");
        let addr = listener.local_addr().expect("its address");
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(RawH2Counts::default());
        let (s, c) = (stop.clone(), counts.clone());
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(socket) = socket else { continue };
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = c.clone();
                std::thread::spawn(move || {
                    let _ = serve(socket, last, &c);
                });
            }
        });
        GoAwayServer { addr, stop, counts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A counter's value.
    pub fn get(&self, counter: fn(&RawH2Counts) -> &AtomicU64) -> u64 {
        counter(&self.counts).load(Ordering::SeqCst)
    }
}

impl Drop for GoAwayServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(self.addr);
    }
}

fn frame(out: &mut impl Write, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> std::io::Result<()> {
    let len = payload.len() as u32;
    let mut head = [0u8; 9];
    head[..3].copy_from_slice(&len.to_be_bytes()[1..]);
    head[3] = kind;
    head[4] = flags;
    head[5..].copy_from_slice(&stream.to_be_bytes());
    out.write_all(&head)?;
    out.write_all(payload)
}

fn serve(mut socket: TcpStream, last: LastStream, c: &RawH2Counts) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    // A guard: a client that stops talking does not hold the thread for ever.
    socket.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut preface = [0u8; 24];
    socket.read_exact(&mut preface)?;
    if &preface != PREFACE {
        return Ok(());
    }
    frame(&mut socket, SETTINGS, 0, 0, &[])?;
    let mut first: Option<(u32, u64)> = None;
    loop {
        let mut head = [0u8; 9];
        socket.read_exact(&mut head)?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        socket.read_exact(&mut payload)?;
        match kind {
            SETTINGS if flags & ACK == 0 => frame(&mut socket, SETTINGS, ACK, 0, &[])?,
            PING if flags & ACK == 0 => frame(&mut socket, PING, ACK, 0, &payload)?,
            HEADERS if first.is_none() => {
                c.streams.fetch_add(1, Ordering::SeqCst);
                first = Some((stream, 0));
                if flags & END_STREAM != 0 {
                    answer(&mut socket, stream, 0, c)?;
                }
            }
            DATA if first.is_some_and(|(s, _)| s == stream) => {
                let pad = if flags & PADDED != 0 { 1 + usize::from(payload[0]) } else { 0 };
                let (s, mut size) = first.unwrap_or_default();
                size += len.saturating_sub(pad) as u64;
                first = Some((s, size));
                // The windows are opened again at once: a first request's body may be larger than them.
                if len > 0 {
                    let more = (len as u32).to_be_bytes();
                    frame(&mut socket, WINDOW_UPDATE, 0, 0, &more)?;
                    frame(&mut socket, WINDOW_UPDATE, 0, stream, &more)?;
                }
                if flags & END_STREAM != 0 {
                    answer(&mut socket, stream, size, c)?;
                }
            }
            HEADERS => {
                c.streams.fetch_add(1, Ordering::SeqCst);
                let last_id = match last {
                    LastStream::Before => first.map_or(0, |(s, _)| s),
                    LastStream::Including => stream,
                };
                let mut goaway = last_id.to_be_bytes().to_vec();
                goaway.extend_from_slice(&0u32.to_be_bytes()); // NO_ERROR
                frame(&mut socket, GOAWAY, 0, 0, &goaway)?;
                socket.flush()?;
                // Closed for writing with the GOAWAY the last thing sent; what the client still sends is read
                // until it closes too, so that unread bytes do not turn the close into a reset (RST) that
                // could overtake the GOAWAY.
                socket.shutdown(Shutdown::Write)?;
                let mut sink = [0u8; 16 * 1024];
                while socket.read(&mut sink)? > 0 {}
                return Ok(());
            }
            _ => {}
        }
    }
}

fn answer(socket: &mut TcpStream, stream: u32, body_size: u64, c: &RawH2Counts) -> std::io::Result<()> {
    frame(socket, HEADERS, END_HEADERS, stream, &[STATUS_200])?;
    frame(socket, DATA, END_STREAM, stream, b"ok")?;
    c.answered.fetch_add(1, Ordering::SeqCst);
    c.answered_body_bytes.fetch_add(body_size, Ordering::SeqCst);
    Ok(())
}
