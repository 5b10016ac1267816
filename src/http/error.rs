//! Transport failures mapped to stable kinds and specific messages.

use std::io;
use std::time::Duration;

use super::decode::DecodeError;
use super::outcome::ErrorKind;

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
    #[cold]
    pub fn timeout(connecting: bool, timeout: Duration) -> Self {
        let ms = timeout.as_millis();
        if connecting {
            Self::new(ErrorKind::ConnectTimeout, format!("Connect timed out after {ms} ms"))
        } else {
            Self::new(ErrorKind::ReadTimeout, format!("Read timed out after {ms} ms"))
        }
    }

    /// A failed connect.
    #[cold]
    pub fn connect(e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::ConnectionRefused => Self::new(ErrorKind::ConnectionRefused, "Connection refused"),
            io::ErrorKind::TimedOut => Self::new(ErrorKind::ConnectTimeout, "Connect timed out"),
            _ => Self::new(ErrorKind::ConnectFailed, format!("Connect failed: {e}")),
        }
    }

    /// A failed TLS handshake, saying why: rustls' reason (`invalid peer certificate: UnknownIssuer`, `received
    /// fatal alert: HandshakeFailure`), or what the connection did instead of completing it.
    #[cold]
    pub fn tls_handshake(e: &io::Error) -> Self {
        let why = match (rustls_error(e), e.kind()) {
            (Some(tls), _) => tls.to_string(),
            (None, io::ErrorKind::UnexpectedEof) => "the server closed the connection".into(),
            (None, io::ErrorKind::ConnectionReset) => "connection reset by peer".into(),
            (None, _) => e.to_string(),
        };
        Self::new(ErrorKind::Tls, format!("TLS handshake failed: {why}"))
    }

    /// A failure of the socket while sending or receiving.
    #[cold]
    pub fn io(io: &io::Error) -> Self {
        // A fatal alert after the handshake: with TLS 1.3 a server refuses a client certificate (or the
        // lack of one) only once the client has finished its handshake and sent its request.
        if let Some(tls) = rustls_error(io) {
            return Self::new(ErrorKind::Tls, format!("TLS error: {tls}"));
        }
        match io.kind() {
            io::ErrorKind::ConnectionReset => Self::new(ErrorKind::ConnectionReset, "Connection reset by peer"),
            io::ErrorKind::BrokenPipe => Self::new(ErrorKind::ConnectionReset, "Broken pipe"),
            io::ErrorKind::UnexpectedEof => Self::closed(),
            _ => Self::new(ErrorKind::ConnectionReset, format!("I/O error: {io}")),
        }
    }

    /// The connection ended before the response did.
    #[cold]
    pub fn closed() -> Self {
        Self::new(ErrorKind::ConnectionReset, "Connection closed before the response was complete")
    }

    /// A response that does not parse, or cannot be read as HTTP/1.1.
    #[cold]
    pub fn decode(e: &DecodeError) -> Self {
        match e {
            DecodeError::Incomplete => Self::closed(),
            e => Self::new(ErrorKind::InvalidResponse, format!("Invalid HTTP response: {}", e.reason())),
        }
    }
}

fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>())
}
