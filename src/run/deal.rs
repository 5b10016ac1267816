//! Which of a group's users run in this segment of a run spread over several processes or runtimes.

use crate::segment::Segment;

/// Which of a group's users (or an open group's workers) run here. The main groups' users are numbered
/// across the groups in plan order, so a group's users 1..=threads are the run's items `base..base+threads`;
/// item `g` runs in the segment that [owns](Segment::owns) it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deal {
    pub segment: Segment,
    pub base: u64,
}

impl Deal {
    /// Whether user `vu` (from 1) runs here.
    pub fn owns_user(&self, vu: u32) -> bool {
        self.segment.owns(self.base + u64::from(vu) - 1)
    }

    /// How many of users 1..=n run here.
    pub fn users(&self, n: u64) -> u64 {
        self.segment.share(self.base, n)
    }

    /// The number of the `j`-th (from 0) user that runs here.
    pub fn nth_user(&self, j: u64) -> u32 {
        u32::try_from(self.segment.nth_from(self.base, j) - self.base + 1).unwrap_or(u32::MAX)
    }
}
