//! "Did you mean": the closest known name by edit distance.

/// The candidate closest to `word`, when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| {
            *d <= (c.len().max(word.len()) / 3).max(1) || c.replace('_', "") == lower.replace(['_', '-'], "")
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn finds_typos() {
        let keys = ["threads", "ramp_up", "loops", "duration"];
        assert_eq!(did_you_mean("treads", keys), Some("threads"));
        assert_eq!(did_you_mean("rampup", keys), Some("ramp_up"));
        assert_eq!(did_you_mean("ramp-up", keys), Some("ramp_up"));
        assert_eq!(did_you_mean("banana", keys), None);
    }
}
