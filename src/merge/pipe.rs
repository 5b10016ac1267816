//! The bytes of the records [`super::split`] found, handed on to the results reader of `planrun report`, so a
//! merged row is read by the same code, with the same errors, as the file it came from.
//!
//! The reader is given exactly the records cut so far: it parses a record as soon as it has its line end, so
//! it never needs a byte beyond them. Asking for one anyway (a bug) is an error, never a silent end.

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

/// Both ends of the pipe: clone it, give one to the reader, [`Pipe::push`] into the other.
#[derive(Debug, Clone, Default)]
pub struct Pipe(Rc<RefCell<State>>);

#[derive(Debug, Default)]
struct State {
    bytes: Vec<u8>,
    /// Bytes before this were read.
    read: usize,
    closed: bool,
}

impl Pipe {
    /// Bytes for the reader.
    pub fn push(&self, bytes: &[u8]) {
        let mut state = self.0.borrow_mut();
        if state.read == state.bytes.len() {
            state.bytes.clear();
            state.read = 0;
        }
        state.bytes.extend_from_slice(bytes);
    }

    /// No more bytes: the reader sees the end of the file.
    pub fn close(&self) {
        self.0.borrow_mut().closed = true;
    }
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.0.borrow_mut();
        let State { bytes, read, closed } = &mut *state;
        let mut left = &bytes[*read..];
        if left.is_empty() && !*closed {
            return Err(io::Error::other("planrun bug: the results reader read past the record it was given"));
        }
        let n = left.read(buf)?;
        *read += n;
        Ok(n)
    }
}
