//! The most frequent failure messages, per label, in bounded memory.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Distinct (label, message) pairs counted; failures with a pair first seen after that are counted as
/// "other". A run whose messages carry a unique id would otherwise keep one entry per failure.
pub const MAX_DISTINCT: usize = 1000;

/// Messages are cut to this many characters (the start says what went wrong).
pub const MAX_MESSAGE_CHARS: usize = 300;

/// Failure counts by label and message.
#[derive(Debug, Default)]
pub struct Failures {
    by_label: HashMap<Box<str>, HashMap<Box<str>, u64>>,
    distinct: usize,
    other: u64,
    total: u64,
}

/// One message and how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCount {
    /// The label of the failed samples.
    pub label: String,
    /// The failure message (cut to [`MAX_MESSAGE_CHARS`]).
    pub message: String,
    /// How many failed samples had it.
    pub count: u64,
}

/// The most frequent failures, and how many others there were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureData {
    /// The most frequent (label, message) pairs, most frequent first.
    pub top: Vec<FailureCount>,
    /// Failed samples not in `top`.
    pub other: u64,
    /// All failed samples counted.
    pub total: u64,
}

impl Failures {
    /// Nothing counted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one failed sample.
    pub fn record(&mut self, label: &str, message: &str) {
        self.total += 1;
        let message = cut(message);
        if let Some(n) = self.by_label.get_mut(label).and_then(|m| m.get_mut(message)) {
            *n += 1;
            return;
        }
        if self.distinct >= MAX_DISTINCT {
            self.other += 1;
            return;
        }
        self.distinct += 1;
        self.by_label.entry(label.into()).or_default().insert(message.into(), 1);
    }

    /// The `n` most frequent; ties in label, then message order.
    pub fn top(&self, n: usize) -> FailureData {
        let mut all: Vec<FailureCount> = self
            .by_label
            .iter()
            .flat_map(|(label, messages)| {
                messages.iter().map(|(message, &count)| FailureCount {
                    label: label.to_string(),
                    message: message.to_string(),
                    count,
                })
            })
            .collect();
        all.sort_by(|a, b| {
            b.count.cmp(&a.count).then_with(|| a.label.cmp(&b.label)).then_with(|| a.message.cmp(&b.message))
        });
        all.truncate(n);
        let shown: u64 = all.iter().map(|f| f.count).sum();
        FailureData { top: all, other: self.total - shown, total: self.total }
    }
}

fn cut(message: &str) -> &str {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => &message[..i],
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_frequent_first_and_bounded() {
        let mut f = Failures::new();
        for _ in 0..3 {
            f.record("b", "503 Service unavailable");
        }
        f.record("a", "timeout");
        f.record("b", "timeout");
        for i in 0..2000 {
            f.record("c", &format!("id {i}"));
        }
        let d = f.top(2);
        assert_eq!(d.top[0], FailureCount { label: "b".into(), message: "503 Service unavailable".into(), count: 3 });
        assert_eq!((d.top[1].label.as_str(), d.top[1].count), ("a", 1));
        assert_eq!((d.total, d.other), (2005, 2001));
        assert_eq!(f.distinct, MAX_DISTINCT);
        assert_eq!(cut(&"é".repeat(400)).chars().count(), MAX_MESSAGE_CHARS);
    }
}
