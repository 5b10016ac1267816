//! The ranges of a plan's whole numbers. Every count is checked against its range when the plan loads, so no
//! number is silently cut to fit (`threads: 10000000000` is an error, not 4294967295) and the run's arithmetic
//! on them (threads x loops, sums of weights, a body buffer's size) cannot overflow.

use std::ops::RangeInclusive;

/// Virtual users of a group: `threads`, `max_threads`, a closed stage's `target`. Each user holds a socket,
/// and a million is already past what one process can open on most systems.
pub const MAX_THREADS: u64 = 1_000_000;

/// Iterations: `loops` per user, a `loop` block's count, a `while` block's `max`.
pub const MAX_LOOPS: u64 = 1_000_000_000;

/// A `random` branch's `weight`; the weights of one `random` block also add up to at most `u32::MAX`.
pub const MAX_WEIGHT: u64 = 1_000_000;

/// `max_body`: bytes of a response kept in memory for assertions and extractors (1 GiB).
pub const MAX_BODY: u64 = 1 << 30;

/// `threads`, `max_threads`.
pub const THREADS: RangeInclusive<u64> = 1..=MAX_THREADS;
/// A closed stage's `target` (0 retires every user).
pub const STAGE_TARGET: RangeInclusive<u64> = 0..=MAX_THREADS;
/// `loops`, `loop`, `max`.
pub const LOOPS: RangeInclusive<u64> = 1..=MAX_LOOPS;
/// `weight`.
pub const WEIGHT: RangeInclusive<u64> = 1..=MAX_WEIGHT;
/// `max_body`.
pub const BODY: RangeInclusive<u64> = 0..=MAX_BODY;
/// `max_ms` written as a number: at most [`crate::duration::MAX`], in milliseconds.
pub const MAX_MS: RangeInclusive<u64> = 0..=crate::duration::MAX.as_millis() as u64;
/// Counts that are only compared with, never computed on: `seed`, `max_bytes`, a regex `group`.
pub const ANY: RangeInclusive<u64> = 0..=u64::MAX;
