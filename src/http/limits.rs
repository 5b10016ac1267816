//! The engine's limits on what a server may send, and the size of its reads: below every other part of it.

/// Header lines a response head may have (hyper's default).
pub const MAX_HEADERS: usize = 100;
/// Bytes a response head may take, interim (1xx) heads before it excluded.
pub const MAX_HEAD: usize = 64 * 1024;
/// Bytes of chunk extensions a body may carry in all (hyper's limit).
pub const MAX_CHUNK_EXTENSIONS: u64 = 16 * 1024;
/// Bytes of trailer fields a chunked body may end with (hyper's limit).
pub const MAX_TRAILERS: usize = 16 * 1024;
/// Bytes read from the socket at a time, into a buffer shared by the users of a thread.
pub const SCRATCH: usize = 32 * 1024;
