//! The engine's response reading without a socket: one response read from a list of reads, through the same
//! head reader and body decoder the engine uses.

use http::Method;
use planrun::http::decode::{BodyDecoder, DecodeError, Framing, HeadReader};
use planrun::http::limits::SCRATCH;
use planrun::http::Failure;

/// What reading one response from a byte stream came to (see [`read_response`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The final status, when a head was read.
    pub status: Option<u16>,
    /// How the body was framed, when a head was read.
    pub framing: Option<Framing>,
    /// Body bytes handed over.
    pub body: u64,
    /// Bytes of the stream the response took (head, interim heads and body framing included); 0 when it
    /// failed.
    pub consumed: u64,
    /// Why the response could not be read.
    pub failure: Option<Failure>,
    /// Whether the connection could carry another request.
    pub reusable: bool,
}

/// Reads one response to `method` from a stream that yields `chunks` one read at a time and then ends, as
/// the engine does on a socket (the same head loop, buffer sizes and body decoder, without I/O), through the
/// engine's public decoding API: for the conformance, differential and property tests.
pub fn read_response(method: &Method, chunks: &[&[u8]]) -> Outcome {
    let mut out = Outcome { status: None, framing: None, body: 0, consumed: 0, failure: None, reusable: false };
    let mut reads = chunks.iter().copied().filter(|c| !c.is_empty());
    let mut pending: &[u8] = &[];
    // One read of at most `room` bytes: what is left of a chunk first.
    let mut read = |room: usize| -> &[u8] {
        if pending.is_empty() {
            pending = reads.next().unwrap_or_default();
        }
        let n = room.min(pending.len());
        let (now, later) = pending.split_at(n);
        pending = later;
        now
    };
    let mut reader = HeadReader::default();
    let mut scratch = vec![0u8; SCRATCH];
    let mut taken = 0u64;
    let (head, early) = loop {
        let got = read(SCRATCH);
        if got.is_empty() {
            out.failure = Some(Failure::closed());
            return out;
        }
        taken += got.len() as u64;
        let room = &mut scratch[..got.len()];
        room.copy_from_slice(got);
        match reader.take(room, method, true) {
            Ok(Some((head, early))) => break (head, early.to_vec()),
            Ok(None) => {}
            Err(e) => {
                out.failure = Some(Failure::decode(&e));
                return out;
            }
        }
    };
    // Everything read before the body's first byte was a head, interim or final.
    taken -= early.len() as u64;
    out.status = Some(head.status);
    out.framing = Some(head.framing);
    let mut body = BodyDecoder::new(head.framing);
    let mut size = 0u64;
    let mut sink = |data: &[u8]| size += data.len() as u64;
    let mut extra = false;
    let mut fed = |input: &[u8], body: &mut BodyDecoder| -> Result<bool, DecodeError> {
        let used = body.feed(input, &mut sink)?;
        taken += used as u64;
        Ok(used < input.len())
    };
    let result = (|| {
        extra |= fed(&early, &mut body)?;
        while !body.is_done() {
            match read(SCRATCH) {
                [] => body.eof()?,
                got => extra |= fed(got, &mut body)?,
            }
        }
        Ok::<(), DecodeError>(())
    })();
    out.body = size;
    // Bytes that come after the response are found by the look before the connection's next use.
    let more = !read(1).is_empty();
    match result {
        Ok(()) => {
            out.consumed = taken;
            out.reusable = head.keep_alive && !extra && !more;
        }
        Err(e) => out.failure = Some(Failure::decode(&e)),
    }
    out
}
