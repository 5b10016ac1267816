//! Durations in stub files, read with planrun's one duration grammar ([`crate::duration`]): `250ms`, `1.5s`,
//! `1h30m`, `20ns`, at most [`crate::duration::MAX`].

use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// Deserializes a duration string with [`crate::duration::parse`], so a bad duration is an error at its
/// place in the file, saying how to write it.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    crate::duration::parse(&text).map_err(|e| serde::de::Error::custom(format!("{e}; {}", e.hint())))
}

/// A duration read from a stub file; exists so sequences like `uniform: [1ms, 5ms]` can be deserialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StubDuration(pub(crate) Duration);

impl<'de> Deserialize<'de> for StubDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer).map(StubDuration)
    }
}
