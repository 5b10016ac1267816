//! The look-behind window of one input: rows held in memory and given out earliest first.
//!
//! A JTL is written as samples end, so a row's `timeStamp` (the start) may be earlier than the rows written
//! before it: by less than its own elapsed time. The window holds the next rows of its input, up to a budget
//! of bytes, and always gives out the earliest it holds; so an input comes out in `timeStamp` order as long as
//! no row comes after more than a window's worth of rows that started after it.
//!
//! Rows that come in order wait in a queue (taken in constant time); the others in a heap of their keys
//! beside it, the rows themselves in slots that do not move. The earlier of the two fronts goes out first.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use std::borrow::Cow;

use crate::report::results::Record;

/// One row: where it goes in the order, its bytes, and what the statistics read from it.
#[derive(Debug)]
pub struct Row {
    /// `timeStamp`, ms since the epoch.
    pub ts: u64,
    /// Its place in its file (0, 1, ...): rows of one input with the same `timeStamp` keep their order.
    pub seq: u64,
    /// The record as it is in the file, line end included.
    pub bytes: Vec<u8>,
    /// The record as `planrun report` read it; its texts in one string (one allocation, not four).
    text: String,
    /// Where the label, response code, response message and failure message end in `text`.
    ends: [usize; 4],
    line: u64,
    elapsed_us: u64,
    success: bool,
    received: u64,
    sent: u64,
    all_threads: Option<u32>,
    transaction: bool,
    /// Memory it holds, about: what the window counts against its budget.
    size: usize,
}

impl Row {
    /// A row of `bytes`, read as `record`, the `seq`th of its file.
    pub fn new(seq: u64, bytes: Vec<u8>, record: &Record<'_>) -> Self {
        let fields = [&record.label, &record.response_code, &record.response_message, &record.failure_message];
        let mut text = String::with_capacity(fields.iter().map(|f| f.len()).sum());
        let ends = fields.map(|f| {
            text.push_str(f);
            text.len()
        });
        // Each allocation costs its header and rounding too.
        let size = std::mem::size_of::<Row>() + bytes.capacity() + text.capacity() + 2 * 16;
        Row {
            ts: record.start_ms,
            seq,
            bytes,
            text,
            ends,
            line: record.line,
            elapsed_us: record.elapsed_us,
            success: record.success,
            received: record.bytes,
            sent: record.sent_bytes,
            all_threads: record.all_threads,
            transaction: record.transaction,
            size,
        }
    }

    /// The record, as read.
    pub fn record(&self) -> Record<'_> {
        let [label, code, message, failure] = self.ends;
        let text = |from: usize, to: usize| Cow::Borrowed(&self.text[from..to]);
        Record {
            line: self.line,
            start_ms: self.ts,
            elapsed_us: self.elapsed_us,
            label: text(0, label),
            response_code: text(label, code),
            response_message: text(code, message),
            success: self.success,
            failure_message: text(message, failure),
            bytes: self.received,
            sent_bytes: self.sent,
            all_threads: self.all_threads,
            transaction: self.transaction,
        }
    }

    /// Where it goes: by timeStamp, then by its place in the file.
    pub fn key(&self) -> (u64, u64) {
        (self.ts, self.seq)
    }
}

/// A row's key packed in one number: compared in one step (the heap compares a lot).
fn packed(ts: u64, seq: u64) -> u128 {
    (u128::from(ts) << 64) | u128::from(seq)
}

/// A row in the heap: its key and where it is. Keys are unique (`seq` is), so the slot never decides.
#[derive(Debug, PartialEq, Eq)]
struct Slot {
    key: u128,
    slot: usize,
}

impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Slot {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// Rows of one input, earliest out first, at most `budget` bytes of them (and at least one).
#[derive(Debug)]
pub struct Window {
    /// Rows that came in order.
    queue: VecDeque<Row>,
    /// The keys of the rows that came earlier than the last one queued, and their slots.
    heap: BinaryHeap<Reverse<Slot>>,
    slots: Vec<Option<Row>>,
    free: Vec<usize>,
    bytes: usize,
    budget: usize,
}

impl Window {
    /// An empty window of `budget` bytes.
    pub fn new(budget: usize) -> Self {
        Window {
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            bytes: 0,
            budget,
        }
    }

    /// Takes a row; gives out the earliest one held when the window is over its budget.
    pub fn push(&mut self, row: Row) -> Option<Row> {
        self.bytes += row.size;
        match self.queue.back() {
            Some(last) if row.key() < last.key() => {
                let (ts, seq) = row.key();
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot] = Some(row);
                        slot
                    }
                    None => {
                        self.slots.push(Some(row));
                        self.slots.len() - 1
                    }
                };
                self.heap.push(Reverse(Slot { key: packed(ts, seq), slot }));
            }
            _ => self.queue.push_back(row),
        }
        if self.bytes > self.budget {
            self.pop()
        } else {
            None
        }
    }

    /// The earliest row held.
    pub fn pop(&mut self) -> Option<Row> {
        let from_heap = match (self.queue.front(), self.heap.peek()) {
            (Some(q), Some(Reverse(h))) => h.key < packed(q.ts, q.seq),
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let row = if from_heap {
            let Reverse(Slot { slot, .. }) = self.heap.pop()?;
            self.free.push(slot);
            self.slots[slot].take()?
        } else {
            self.queue.pop_front()?
        };
        self.bytes -= row.size;
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ts: u64, seq: u64) -> Record<'static> {
        Record {
            line: seq + 2,
            start_ms: ts,
            elapsed_us: 0,
            label: Cow::Borrowed("l"),
            response_code: Cow::Borrowed("200"),
            response_message: Cow::Borrowed(""),
            success: true,
            failure_message: Cow::Borrowed(""),
            bytes: 0,
            sent_bytes: 0,
            all_threads: None,
            transaction: false,
        }
    }

    fn row(ts: u64, seq: u64) -> Row {
        Row::new(seq, format!("{ts}\n").into_bytes(), &record(ts, seq))
    }

    #[test]
    fn a_row_gives_back_the_record_it_was_made_of() {
        let mut record = record(7, 0);
        record.label = Cow::Borrowed("lab,el");
        record.failure_message = Cow::Borrowed("f");
        record.all_threads = Some(3);
        let row = Row::new(0, b"x\n".to_vec(), &record);
        assert_eq!(row.record(), record);
        assert_eq!((row.bytes.as_slice(), row.key()), (&b"x\n"[..], (7, 0)));
    }

    #[test]
    fn earliest_first_within_the_budget_ties_in_file_order() {
        let size = row(0, 0).size;
        let mut w = Window::new(3 * size);
        let mut out = Vec::new();
        for (seq, ts) in [50, 10, 30, 10, 20, 60, 40, 5].into_iter().enumerate() {
            out.extend(w.push(row(ts, seq as u64)).map(|r| (r.ts, r.seq)));
        }
        while let Some(r) = w.pop() {
            out.push((r.ts, r.seq));
        }
        // 50 waits 7 rows for its turn; 5 comes when 30 is out already: too late for a window of 3 rows.
        assert_eq!(out, [(10, 1), (10, 3), (20, 4), (30, 2), (5, 7), (40, 6), (50, 0), (60, 5)]);
    }
}
