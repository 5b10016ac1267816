//! What the engine says of an exchange that produced no usable response, and how it classes a body.

/// Why a request produced no HTTP response. The names are stable: they appear in result files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The target refused the TCP connection.
    ConnectionRefused,
    /// The TCP (or TLS) connection could not be made within the timeout.
    ConnectTimeout,
    /// The host name could not be resolved.
    UnknownHost,
    /// Any other failure while connecting.
    ConnectFailed,
    /// The connection was reset or closed before the response was complete.
    ConnectionReset,
    /// No complete response within the timeout.
    ReadTimeout,
    /// The response was not valid HTTP.
    InvalidResponse,
    /// Redirects went on for longer than the limit, or left http/https.
    Redirect,
    /// The request could not be built (a template failed to render, a bad URL).
    BadRequest,
    /// TLS failed: the handshake (an untrusted or wrong certificate, no common protocol, a client certificate
    /// refused), a fatal alert later on, or TLS settings that cannot be used.
    Tls,
    /// planrun itself failed while making the sample (a bug): the message says where. Counted apart in the
    /// summary, and the run's exit code is not 0.
    Internal,
}

impl ErrorKind {
    /// The stable name of the kind, used in `responseCode` and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ConnectionRefused => "ConnectionRefused",
            ErrorKind::ConnectTimeout => "ConnectTimeout",
            ErrorKind::UnknownHost => "UnknownHost",
            ErrorKind::ConnectFailed => "ConnectFailed",
            ErrorKind::ConnectionReset => "ConnectionReset",
            ErrorKind::ReadTimeout => "ReadTimeout",
            ErrorKind::InvalidResponse => "InvalidResponse",
            ErrorKind::Redirect => "Redirect",
            ErrorKind::BadRequest => "BadRequest",
            ErrorKind::Tls => "Tls",
            ErrorKind::Internal => "Internal",
        }
    }
}

/// JMeter's `dataType` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    /// Textual response (the default).
    Text,
    /// image/, audio/, video/ responses.
    Bin,
    /// Transactions and transport errors write an empty field.
    None,
}

/// JMeter's dataType for a Content-Type.
pub(super) fn data_type(content_type: Option<&[u8]>) -> DataType {
    // No Content-Type: JMeter writes the column empty.
    let Some(c) = content_type.map(<[u8]>::trim_ascii_start) else { return DataType::None };
    let starts = |prefix: &str| c.len() >= prefix.len() && c[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes());
    match () {
        _ if starts("image/svg") => DataType::Text,
        _ if starts("image/") || starts("audio/") || starts("video/") => DataType::Bin,
        _ => DataType::Text,
    }
}
