//! Transport failures mapped to stable kinds and specific messages.

use std::io;
use std::time::Duration;

use crate::sample::ErrorKind;

/// A request that got no usable response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The kind, stable across versions.
    pub kind: ErrorKind,
    /// A specific message.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// The whole request took longer than its timeout.
    pub fn timeout(connecting: bool, timeout: Duration) -> Self {
        let ms = timeout.as_millis();
        if connecting {
            Self::new(ErrorKind::ConnectTimeout, format!("Connect timed out after {ms} ms"))
        } else {
            Self::new(ErrorKind::ReadTimeout, format!("Read timed out after {ms} ms"))
        }
    }

    /// A failed connect.
    pub fn connect(e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::ConnectionRefused => Self::new(ErrorKind::ConnectionRefused, "Connection refused"),
            io::ErrorKind::TimedOut => Self::new(ErrorKind::ConnectTimeout, "Connect timed out"),
            _ => Self::new(ErrorKind::ConnectFailed, format!("Connect failed: {e}")),
        }
    }

    /// A failed TLS handshake, saying why: rustls' reason (`invalid peer certificate: UnknownIssuer`, `received
    /// fatal alert: HandshakeFailure`), or what the connection did instead of completing it.
    pub fn tls_handshake(e: &io::Error) -> Self {
        let why = match (rustls_error(e), e.kind()) {
            (Some(tls), _) => tls.to_string(),
            (None, io::ErrorKind::UnexpectedEof) => "the server closed the connection".into(),
            (None, io::ErrorKind::ConnectionReset) => "connection reset by peer".into(),
            (None, _) => e.to_string(),
        };
        Self::new(ErrorKind::Tls, format!("TLS handshake failed: {why}"))
    }

    /// A failure reported by hyper while sending or receiving.
    pub fn hyper(e: &hyper::Error) -> Self {
        if let Some(io) = find_io(e) {
            // A fatal alert after the handshake: with TLS 1.3 a server refuses a client certificate (or the
            // lack of one) only once the client has finished its handshake and sent its request.
            if let Some(tls) = rustls_error(io) {
                return Self::new(ErrorKind::Tls, format!("TLS error: {tls}"));
            }
            return match io.kind() {
                io::ErrorKind::ConnectionReset => Self::new(ErrorKind::ConnectionReset, "Connection reset by peer"),
                io::ErrorKind::BrokenPipe => Self::new(ErrorKind::ConnectionReset, "Broken pipe"),
                io::ErrorKind::UnexpectedEof => {
                    Self::new(ErrorKind::ConnectionReset, "Connection closed before the response was complete")
                }
                _ => Self::new(ErrorKind::ConnectionReset, format!("I/O error: {io}")),
            };
        }
        if e.is_parse() || e.is_parse_status() || e.is_parse_too_large() {
            return Self::new(ErrorKind::InvalidResponse, format!("Invalid HTTP response: {}", describe(e)));
        }
        if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
            return Self::new(ErrorKind::ConnectionReset, "Connection closed before the response was complete");
        }
        if e.is_body_write_aborted() {
            return Self::new(ErrorKind::ConnectionReset, "Connection closed while sending the request");
        }
        Self::new(ErrorKind::InvalidResponse, describe(e))
    }
}

fn describe(e: &hyper::Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>())
}

fn find_io(e: &hyper::Error) -> Option<&io::Error> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(inner) = src {
        if let Some(io) = inner.downcast_ref::<io::Error>() {
            return Some(io);
        }
        src = inner.source();
    }
    None
}
