//! The look-behind window of one input: rows held in memory and given out earliest first.
//!
//! A JTL is written as samples end, so a row's `timeStamp` (the start) may be earlier than the rows written
//! before it: by less than its own elapsed time. The window holds the next rows of its input, up to a budget
//! of bytes, and always gives out the earliest it holds; so an input comes out in `timeStamp` order as long as
//! no row comes after more than a window's worth of rows that started after it.
//!
//! Rows mostly come in order: those that do wait in a queue (taken in constant time), the few that do not in
//! a heap beside it; the earlier of the two fronts goes out first.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

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
    /// The record as `planrun report` reads it.
    pub record: Record<'static>,
    /// Memory it holds, about: what the window counts against its budget.
    size: usize,
}

impl Row {
    /// A row of `bytes`, read as `record`, the `seq`th of its file.
    pub fn new(seq: u64, bytes: Vec<u8>, record: Record<'static>) -> Self {
        let r = &record;
        let text = r.label.len() + r.response_code.len() + r.response_message.len() + r.failure_message.len();
        // Each allocation costs its header and rounding too.
        let size = std::mem::size_of::<Row>() + bytes.capacity() + text + 5 * 16;
        Row { ts: record.start_ms, seq, bytes, record, size }
    }

    fn key(&self) -> (u64, u64) {
        (self.ts, self.seq)
    }
}

/// Rows ordered by (timeStamp, place in the file).
#[derive(Debug)]
struct Keyed(Row);

impl PartialEq for Keyed {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}

impl Eq for Keyed {}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key().cmp(&other.0.key())
    }
}

/// Rows of one input, earliest out first, at most `budget` bytes of them (and at least one).
#[derive(Debug)]
pub struct Window {
    /// Rows that came in order.
    queue: VecDeque<Row>,
    /// Rows that came earlier than the last one queued.
    heap: BinaryHeap<Reverse<Keyed>>,
    bytes: usize,
    budget: usize,
}

impl Window {
    /// An empty window of `budget` bytes.
    pub fn new(budget: usize) -> Self {
        Window { queue: VecDeque::new(), heap: BinaryHeap::new(), bytes: 0, budget }
    }

    /// Takes a row; gives out the earliest one held when the window is over its budget.
    pub fn push(&mut self, row: Row) -> Option<Row> {
        self.bytes += row.size;
        match self.queue.back() {
            Some(last) if row.key() < last.key() => self.heap.push(Reverse(Keyed(row))),
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
            (Some(q), Some(Reverse(Keyed(h)))) => h.key() < q.key(),
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let row = if from_heap { self.heap.pop().map(|Reverse(Keyed(row))| row) } else { self.queue.pop_front() }?;
        self.bytes -= row.size;
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn row(ts: u64, seq: u64) -> Row {
        let record = Record {
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
        };
        Row::new(seq, format!("{ts}\n").into_bytes(), record)
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
