//! Masking secret values (`{ value: ..., secret: true }`) as `***` in everything planrun writes: samples (and so
//! the JTL, JSON lines, summaries and reports), dry-run output and plan errors. See `docs/security.md`.

mod decoded;
mod encodings;
mod prefix;

pub(crate) use prefix::masked_prefix;

use std::borrow::Cow;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::sample::{Outcome, Sample};

/// The shortest secret a plan may declare: a shorter one would hide unrelated text (every `1` of an address).
pub const MIN_SECRET_LEN: usize = 4;

/// What a masked value is replaced with.
const MASK: &str = "***";

/// The secret values of one virtual user, in every encoding, as one matcher. Cheap to clone; empty (no work
/// at all) when the plan has no secrets.
#[derive(Debug, Clone, Default)]
pub struct Masks(Option<Arc<Inner>>);

#[derive(Debug)]
struct Inner {
    matcher: Matcher,
    /// The most bytes one masked value can take in a text: its longest form, percent-encoded.
    reach: usize,
}

#[derive(Debug)]
enum Matcher {
    /// Every encoding of every secret.
    Patterns(AhoCorasick),
    /// Secrets too large for a matcher: every text that could hold one is masked whole.
    Everything,
}

impl Masks {
    /// The masks for these secret values (empty ones are ignored).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut patterns: Vec<String> = secrets.into_iter().flat_map(encodings::encodings).collect();
        if patterns.is_empty() {
            return Self(None);
        }
        patterns.sort_unstable();
        patterns.dedup();
        let reach = 3 * patterns.iter().map(String::len).max().unwrap_or(0);
        // Standard semantics, searched for overlapping matches: every occurrence of every pattern is found, so
        // a secret that is a prefix of, or overlaps, another cannot leave a piece of the other in view.
        let matcher = match AhoCorasick::builder().match_kind(MatchKind::Standard).build(&patterns) {
            Ok(ac) => Matcher::Patterns(ac),
            Err(_) => Matcher::Everything,
        };
        Self(Some(Arc::new(Inner { matcher, reach })))
    }

    /// The most bytes one secret can take in a text, in any form looked for (0 without secrets): a text cut
    /// after it is masked keeps no piece of a secret when it was masked with this much more than it keeps.
    pub fn reach(&self) -> usize {
        self.0.as_ref().map_or(0, |inner| inner.reach)
    }

    /// True when there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `bytes` with every secret in it replaced by `***`; borrowed when there is none.
    pub fn mask_bytes<'t>(&self, bytes: &'t [u8]) -> Cow<'t, [u8]> {
        let Some(inner) = &self.0 else { return Cow::Borrowed(bytes) };
        let ac = match &inner.matcher {
            Matcher::Patterns(ac) => ac,
            Matcher::Everything if bytes.is_empty() => return Cow::Borrowed(bytes),
            Matcher::Everything => return Cow::Owned(MASK.as_bytes().to_vec()),
        };
        let mut spans: Vec<(usize, usize)> = ac.find_overlapping_iter(bytes).map(|m| (m.start(), m.end())).collect();
        // Percent-encoded, with `%20` or `+` for a space: the plain forms are looked for in the decoded text.
        for plus_is_space in [false, true] {
            if let Some(view) = decoded::Decoded::of(bytes, plus_is_space) {
                spans.extend(ac.find_overlapping_iter(&view.bytes).map(|m| view.span(m.start(), m.end())));
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(bytes);
        }
        spans.sort_unstable();
        let mut out = Vec::with_capacity(bytes.len());
        let mut at = 0;
        let mut spans = spans.into_iter().peekable();
        while let Some((start, mut end)) = spans.next() {
            // Overlapping or touching matches become one mask.
            while let Some(&(s, e)) = spans.peek() {
                if s > end {
                    break;
                }
                end = end.max(e);
                spans.next();
            }
            out.extend_from_slice(&bytes[at..start.max(at)]);
            out.extend_from_slice(MASK.as_bytes());
            at = at.max(end);
        }
        out.extend_from_slice(&bytes[at..]);
        Cow::Owned(out)
    }

    /// `text` with every secret in it replaced by `***`; borrowed when there is none.
    pub fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.mask_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // A match of a UTF-8 pattern in UTF-8 text starts and ends on character boundaries.
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// Masks `text` where it is.
    pub fn mask_in_place(&self, text: &mut String) {
        if let Cow::Owned(masked) = self.mask(text) {
            *text = masked;
        }
    }

    /// Masks every text of a sample that can hold a value from the request or the response: the URL, the
    /// response or error message and the assertion failure message. Labels and thread names are the plan's
    /// own text and are left as they are.
    #[inline]
    pub fn apply_to(&self, sample: &mut Sample) {
        if !self.is_empty() {
            self.apply_each(sample);
        }
    }

    // Out of line: most runs have no secrets, and every sample's path passes here.
    #[inline(never)]
    fn apply_each(&self, sample: &mut Sample) {
        if let Some(url) = &mut sample.url {
            url.edit(|u| self.mask_in_place(u));
        }
        match &mut sample.outcome {
            Outcome::Response { reason, .. } => {
                if let Cow::Owned(masked) = self.mask(reason) {
                    *reason = Cow::Owned(masked);
                }
            }
            Outcome::Error { message, .. } => self.mask_in_place(message),
            Outcome::Transaction { .. } => {}
        }
        if let Some(failure) = &mut sample.failure {
            self.mask_in_place(failure);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_secrets_no_work() {
        let m = Masks::new([""]);
        assert!(m.is_empty());
        assert!(matches!(m.mask("anything"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_secret_that_starts_another_does_not_leave_the_rest_in_view() {
        let m = Masks::new(["Sup3r", "Sup3r-Sup3rS3cret"]);
        assert_eq!(m.mask("p=Sup3r-Sup3rS3cret&q=Sup3r"), "p=***&q=***");
        let m = Masks::new(["abcd1234", "1234wxyz"]);
        assert_eq!(m.mask("x=abcd1234wxyz."), "x=***.");
    }

    #[test]
    fn every_encoding_is_masked_and_the_rest_kept() {
        let m = Masks::new(["hunter 2"]);
        assert_eq!(
            m.mask("http://127.0.0.1:8800/a?pw=hunter%202&f=hunter+2&b=aHVudGVyIDI%3D&r=hunter 2"),
            "http://127.0.0.1:8800/a?pw=***&f=***&b=***&r=***"
        );
    }

    #[test]
    fn every_percent_encoding_is_masked() {
        use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
        let secret = "hunter 2/ü'\"~+";
        let m = Masks::new([secret]);
        let urlencode = |s: &str| minijinja::filters::urlencode(&minijinja::Value::from(s)).unwrap();
        let mut redirect = url::Url::parse("http://h/").unwrap();
        redirect.set_query(Some(secret));
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, secret);
        let forms = [
            url::form_urlencoded::byte_serialize(secret.as_bytes()).collect::<String>(),
            utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
            utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string().to_lowercase(),
            urlencode(secret),
            redirect.query().unwrap().to_string(),
            urlencode(&b64),
            url::form_urlencoded::byte_serialize(b64.as_bytes()).collect::<String>(),
            urlencode(serde_json::Value::from(secret).to_string().trim_matches('"')),
        ];
        for form in forms {
            assert_eq!(m.mask(&format!("/x?a={form}&b=1")), "/x?a=***&b=1", "{form}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_masked_too() {
        let m = Masks::new(["Sup3rS3cret"]);
        assert_eq!(&*m.mask_bytes(b"\xff\xfeSup3rS3cret\x00"), b"\xff\xfe***\x00");
    }
}
