//! Assertions evaluated against a response: the first one that fails gives the sample's failure message.

use crate::plan::model::{Assertion, Check};
use crate::run::http::Response;

/// What an assertion can see of a sample.
pub struct Observed<'a> {
    /// The response.
    pub response: &'a Response,
    /// The sample's elapsed time in ms.
    pub elapsed_ms: u64,
    /// Wire bytes received.
    pub bytes: u64,
}

/// The verdict on a response: success, and the first failed assertion's message (JTL `failureMessage`).
///
/// As in JMeter, a status of 400 or more fails the sample unless a `status` assertion accepts it, and
/// that failure has no assertion message: the status and reason phrase say it.
pub fn check(asserts: &[Assertion], seen: &Observed) -> (bool, Option<String>) {
    for a in asserts {
        if let Some(problem) = failure(&a.check, seen) {
            return (false, Some(format!("Assertion failed (line {}): {problem}", a.span.line)));
        }
    }
    let status_checked = asserts.iter().any(|a| matches!(a.check, Check::Status(_)));
    (status_checked || seen.response.status < 400, None)
}

fn failure(check: &Check, seen: &Observed) -> Option<String> {
    let body = || seen.response.body.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    match check {
        Check::Status(accepted) => {
            let status = seen.response.status;
            if accepted.iter().any(|m| m.accepts(status)) {
                return None;
            }
            let list: Vec<String> = accepted.iter().map(ToString::to_string).collect();
            let expected = if list.len() == 1 { list[0].clone() } else { format!("one of {}", list.join(", ")) };
            Some(format!("status expected {expected}, got {status}"))
        }
        Check::BodyContains(text) => {
            (!body().contains(text.as_str())).then(|| format!("body expected to contain {text:?}"))
        }
        Check::BodyNotContains(text) => {
            body().contains(text.as_str()).then(|| format!("body expected not to contain {text:?}"))
        }
        Check::BodyMatches(re) => (!re.is_match(&body())).then(|| format!("body expected to match /{}/", re.as_str())),
        Check::MaxMs(max) => {
            (seen.elapsed_ms > *max).then(|| format!("response took {} ms, expected at most {max} ms", seen.elapsed_ms))
        }
        Check::MaxBytes(max) => {
            (seen.bytes > *max).then(|| format!("response was {} bytes, expected at most {max}", seen.bytes))
        }
    }
}
