//! "Did you mean": the closest known name by edit distance.

/// The candidate closest to `word`, when it is close enough to be a likely typo.
///
/// The edit distance is computed only for candidates whose length could be close enough (the distance is at
/// least the difference of the lengths), so a plan with thousands of names and as many typos stays fast.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let len = lower.chars().count();
    let without_separators = |s: &'a str| s.chars().filter(|c| *c != '_');
    candidates
        .into_iter()
        .filter_map(|c| {
            let c_len = c.chars().count();
            let limit = (c.len().max(word.len()) / 3).max(1);
            let same_words = || without_separators(c).eq(lower.chars().filter(|ch| *ch != '_' && *ch != '-'));
            let close = c_len.abs_diff(len) <= limit;
            if !close && !same_words() {
                return None;
            }
            let d = strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase());
            (d <= limit || same_words()).then_some((d, c))
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
