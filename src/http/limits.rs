//! The engine's limits on what a server may send, and the size of its reads: below every other part of it.

/// Header lines parsed with room on the stack; a head with more is parsed again with room on the heap.
/// Their count has no limit of its own (JMeter's HttpClient and curl set none): the head's size does.
pub const STACK_HEADERS: usize = 100;
/// Trailer lines a chunked body may end with (hyper's limit).
pub const MAX_TRAILER_LINES: usize = 100;
/// Bytes a response head may take, interim (1xx) heads before it excluded.
pub const MAX_HEAD: usize = 64 * 1024;
/// Bytes of chunk extensions a body may carry in all (hyper's limit).
pub const MAX_CHUNK_EXTENSIONS: u64 = 16 * 1024;
/// Bytes of trailer fields a chunked body may end with (hyper's limit).
pub const MAX_TRAILERS: usize = 16 * 1024;
/// Bytes read from the socket at a time, into a buffer shared by the users of a thread.
pub const SCRATCH: usize = 32 * 1024;
