//! Execution segments: a run split into `count` parts that together do exactly what the whole run does.
//!
//! Everything a run deals out (closed groups' users, open groups' arrivals, shared data rows, `counter()`
//! values) is numbered from 0 in plan order, and item `g` belongs to segment `g mod count`: round-robin, so
//! 10 users over 4 segments give 3/3/2/2 and every segment ramps up over the whole ramp-up. A segment of a
//! segment is a segment again ([`Segment::split`]), which is how one process deals its share to its cores.
//! What users take in turn from one sequence (shared data rows, `counter()` values) is dealt by [`Turns`].

use std::fmt;
use std::str::FromStr;

/// Part `index` (from 0) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    index: u64,
    count: u64,
}

/// A segment that cannot be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Not `I/N` with two whole numbers.
    #[error("`{0}` is not I/N (two whole numbers, I from 0, e.g. 0/4)")]
    Syntax(String),
    /// `N` is 0.
    #[error("`{0}`: a run splits into at least 1 segment")]
    NoSegments(String),
    /// `I` is not below `N`.
    #[error("`{text}`: segments are numbered from 0 to {last}")]
    OutOfRange {
        /// What was given.
        text: String,
        /// The last segment's index.
        last: u64,
    },
    /// More segments than [`MAX_SEGMENTS`].
    #[error("{0} segments are too many (at most {MAX_SEGMENTS})")]
    TooMany(u64),
}

/// The most segments a run splits into, cores included: no item count comes near it.
pub const MAX_SEGMENTS: u64 = 1 << 40;

impl Default for Segment {
    fn default() -> Self {
        Self::WHOLE
    }
}

impl Segment {
    /// The whole run.
    pub const WHOLE: Segment = Segment { index: 0, count: 1 };

    /// Part `index` of `count`.
    pub fn new(index: u64, count: u64) -> Result<Self, SegmentError> {
        let text = format!("{index}/{count}");
        if count == 0 {
            return Err(SegmentError::NoSegments(text));
        }
        if count > MAX_SEGMENTS {
            return Err(SegmentError::TooMany(count));
        }
        if index >= count {
            return Err(SegmentError::OutOfRange { text, last: count - 1 });
        }
        Ok(Self { index, count })
    }

    /// Its index, from 0.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// How many segments the run has.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True for the whole run (`0/1`).
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// True for the segment that runs setup and teardown groups: the first.
    pub fn is_first(&self) -> bool {
        self.index == 0
    }

    /// Whether item `g` (from 0) is this segment's.
    pub fn owns(&self, g: u64) -> bool {
        g % self.count == self.index
    }

    /// How many of the items `base..base + n` are this segment's.
    pub fn share(&self, base: u64, n: u64) -> u64 {
        self.owned_below(base.saturating_add(n)) - self.owned_below(base)
    }

    /// The `j`-th (from 0) of this segment's items at or after `base`.
    pub fn nth_from(&self, base: u64, j: u64) -> u64 {
        let first = base + (self.index + self.count - base % self.count) % self.count;
        first.saturating_add(j.saturating_mul(self.count))
    }

    /// Part `part` of `parts` of this segment, as a segment of the whole run: item `g` of this segment's
    /// goes to the part `(g / count) mod parts`, so the parts of a segment are dealt round-robin too.
    pub fn split(&self, part: u64, parts: u64) -> Result<Segment, SegmentError> {
        let inner = Segment::new(part, parts)?;
        let count = self.count.checked_mul(parts).ok_or(SegmentError::TooMany(u64::MAX))?;
        Segment::new(self.index + inner.index * self.count, count)
    }

    /// Items `0..x` that are this segment's.
    fn owned_below(&self, x: u64) -> u64 {
        if x <= self.index {
            0
        } else {
            (x - self.index - 1) / self.count + 1
        }
    }
}

/// A segment's share of a sequence the run's users take items from in turn (shared data rows, `counter()`
/// values). In each cycle of `users` items (the plan's main users) the segment takes as many as it has users,
/// at its users' places: when every user takes alike, the segments together take exactly the items the
/// whole run takes, and in any case no item goes to two segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turns {
    segment: Segment,
    cycle: u64,
    per_cycle: u64,
}

impl Turns {
    /// `segment`'s turns when the run has `users` main users.
    pub fn new(segment: Segment, users: u64) -> Self {
        let per_cycle = segment.share(0, users);
        if per_cycle == 0 {
            // No user of its own (setup groups only, or more segments than users): every count-th item.
            return Self { segment, cycle: segment.count, per_cycle: 1 };
        }
        Self { segment, cycle: users, per_cycle }
    }

    /// Whether item `k` (from 0) of the sequence is this segment's.
    pub fn owns(&self, k: u64) -> bool {
        self.segment.owns(k % self.cycle)
    }

    /// The segment's `j`-th item (from 0), as a place in the whole sequence.
    pub fn nth(&self, j: u64) -> u64 {
        let (cycle, within) = (j / self.per_cycle, j % self.per_cycle);
        cycle.wrapping_mul(self.cycle).wrapping_add(self.segment.nth_from(0, within))
    }
}

impl Default for Turns {
    fn default() -> Self {
        Turns::new(Segment::WHOLE, 1)
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Segment {
    type Err = SegmentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || SegmentError::Syntax(s.to_string());
        let (i, n) = s.trim().split_once('/').ok_or_else(syntax)?;
        let number = |t: &str| {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            t.parse::<u64>().map_err(|_| syntax())
        };
        Segment::new(number(i)?, number(n)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(i: u64, n: u64) -> Segment {
        Segment::new(i, n).unwrap()
    }

    #[test]
    fn ten_users_over_four_segments_are_three_three_two_two() {
        let shares: Vec<u64> = (0..4).map(|i| seg(i, 4).share(0, 10)).collect();
        assert_eq!(shares, [3, 3, 2, 2]);
        for i in 0..4 {
            let owned = (0..10).filter(|g| seg(i, 4).owns(*g)).count() as u64;
            assert_eq!(owned, shares[i as usize]);
        }
    }

    #[test]
    fn every_item_has_exactly_one_segment_whatever_the_base() {
        for n in 1..7 {
            for base in 0..9 {
                for len in 0..20 {
                    let total: u64 = (0..n).map(|i| seg(i, n).share(base, len)).sum();
                    assert_eq!(total, len, "n={n} base={base} len={len}");
                    for i in 0..n {
                        let s = seg(i, n);
                        let owned: Vec<u64> = (base..base + len).filter(|g| s.owns(*g)).collect();
                        let nth: Vec<u64> = (0..s.share(base, len)).map(|j| s.nth_from(base, j)).collect();
                        assert_eq!(owned, nth, "n={n} i={i} base={base} len={len}");
                    }
                }
            }
        }
    }

    #[test]
    fn parts_of_a_segment_partition_it() {
        let s = seg(1, 3);
        let parts: Vec<Segment> = (0..2).map(|c| s.split(c, 2).unwrap()).collect();
        for g in 0..60 {
            let in_parts = parts.iter().filter(|p| p.owns(g)).count();
            assert_eq!(in_parts, usize::from(s.owns(g)), "item {g}");
        }
        assert_eq!(Segment::WHOLE.split(1, 2).unwrap(), seg(1, 2));
        assert!(seg(0, MAX_SEGMENTS).split(0, 2).is_err());
    }

    #[test]
    fn turns_follow_the_users_so_equal_takers_take_the_whole_sequence() {
        // 10 users over 4 segments (3/3/2/2), each taking 5 items: the segments take 15, 15, 10 and 10.
        let mut taken: Vec<u64> = Vec::new();
        for (i, n) in [(0, 15), (1, 15), (2, 10), (3, 10)] {
            let t = Turns::new(seg(i, 4), 10);
            let mine: Vec<u64> = (0..n).map(|j| t.nth(j)).collect();
            assert!(mine.iter().all(|k| t.owns(*k)), "segment {i}");
            assert_eq!(mine, (0..50).filter(|k| t.owns(*k)).take(n as usize).collect::<Vec<_>>());
            taken.extend(mine);
        }
        taken.sort();
        assert_eq!(taken, (0..50).collect::<Vec<_>>());
        let lone = Turns::new(seg(5, 6), 3);
        assert_eq!((0..3).map(|j| lone.nth(j)).collect::<Vec<_>>(), [5, 11, 17]);
        assert_eq!((0..4).map(|j| Turns::default().nth(j)).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn parses_i_over_n_and_refuses_the_rest() {
        assert_eq!("2/4".parse::<Segment>(), Ok(seg(2, 4)));
        assert_eq!(" 0/1 ".parse::<Segment>(), Ok(Segment::WHOLE));
        for bad in ["4/4", "0/0", "x/3", "1", "", "-1/3", "1/+3", "1/3/5", "99999999999999999999/3", "0/2000000000000"]
        {
            assert!(bad.parse::<Segment>().is_err(), "{bad}");
        }
        assert_eq!("4/4".parse::<Segment>().unwrap_err().to_string(), "`4/4`: segments are numbered from 0 to 3");
    }
}
