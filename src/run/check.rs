//! Assertions evaluated against a response: the first one that fails gives the sample's failure message.

use std::cell::OnceCell;

use crate::http::content_coding::{self, Decoded};
use crate::http::Response;
use crate::plan::model::{Assertion, Check, JsonExpect, TextExpect};
use crate::template::Tpl;

/// What assertions and extractors can see of a sample.
pub struct Observed<'a> {
    pub response: &'a Response,
    /// The sample's elapsed time in ms.
    pub elapsed_ms: u64,
    /// Wire bytes received.
    pub bytes: u64,
    json: OnceCell<Option<serde_json::Value>>,
    /// The body with its content codings undone, made the first time something reads the body: a sample
    /// whose checks never read it never decodes it. `None` inside when it has no coding.
    decoded: OnceCell<Option<Decoded>>,
    /// Bytes a decoded body may have (`max_body`).
    limit: usize,
}

impl<'a> Observed<'a> {
    /// A view of a response whose decoded body may have `limit` bytes.
    pub fn new(response: &'a Response, elapsed_ms: u64, bytes: u64, limit: usize) -> Self {
        Self { response, elapsed_ms, bytes, json: OnceCell::new(), decoded: OnceCell::new(), limit }
    }

    /// The body as the server meant it: decoded from its Content-Encoding, once (empty when it was not kept).
    pub fn bytes(&self) -> &[u8] {
        let decoded = self.decoded.get_or_init(|| {
            let body = self.response.body.as_ref()?;
            content_coding::decode(&self.response.headers, body, self.limit)
        });
        match decoded {
            Some(d) => &d.body,
            None => self.response.body.as_deref().unwrap_or_default(),
        }
    }

    /// The body as text (lossy UTF-8; empty when it was not kept).
    pub fn body(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.bytes())
    }

    /// The body parsed as JSON, once, when it is JSON.
    pub fn json(&self) -> Option<&serde_json::Value> {
        self.json.get_or_init(|| serde_json::from_slice(self.bytes()).ok()).as_ref()
    }

    /// The decoded body, when something read a body that had content codings.
    pub fn into_decoded(self) -> Option<Decoded> {
        self.decoded.into_inner().flatten()
    }
}

/// The verdict on a response: success, and the first failed assertion's message (JTL `failureMessage`).
/// `expr` renders an `expr:` assertion's template and says whether it came out true.
///
/// As in JMeter, a status of 400 or more fails the sample unless a `status` assertion accepts it, and
/// that failure has no assertion message: the status and reason phrase say it.
pub fn check(
    asserts: &[Assertion],
    seen: &Observed,
    expr: &mut dyn FnMut(&Tpl) -> Result<bool, String>,
) -> (bool, Option<String>) {
    let status = seen.response.status;
    let mut status_checked = false;
    for a in asserts {
        // The common assertion, passed, without the call of `failure`, which is large (the messages of every
        // check) and so saves and restores every register it may use.
        if let Check::Status(accepted) = &a.check {
            status_checked = true;
            if accepted.iter().any(|m| m.accepts(status)) {
                continue;
            }
        }
        if let Some(problem) = failure(&a.check, seen, expr) {
            return (false, Some(format!("Assertion failed (line {}): {problem}", a.span.line)));
        }
    }
    (status_checked || status < 400, None)
}

#[inline(never)]
fn failure(check: &Check, seen: &Observed, expr: &mut dyn FnMut(&Tpl) -> Result<bool, String>) -> Option<String> {
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
            (!seen.body().contains(text.as_str())).then(|| format!("body expected to contain \"{text}\""))
        }
        Check::BodyNotContains(text) => {
            seen.body().contains(text.as_str()).then(|| format!("body expected not to contain \"{text}\""))
        }
        Check::BodyMatches(re) => {
            (!re.is_match(&seen.body())).then(|| format!("body expected to match /{}/", re.as_str()))
        }
        Check::MaxMs(max) => {
            (seen.elapsed_ms > *max).then(|| format!("response took {} ms, expected at most {max} ms", seen.elapsed_ms))
        }
        Check::MaxBytes(max) => {
            (seen.bytes > *max).then(|| format!("response was {} bytes, expected at most {max}", seen.bytes))
        }
        Check::JsonPath { text, path, expect } => {
            let Some(json) = seen.json() else { return Some(format!("jsonpath {text}: the body is not JSON")) };
            let found = path.query(json).first();
            match (expect, found) {
                (JsonExpect::Exists(true), None) => Some(format!("jsonpath {text} expected to exist")),
                (JsonExpect::Exists(false), Some(_)) => Some(format!("jsonpath {text} expected not to exist")),
                (JsonExpect::Exists(_), _) => None,
                (JsonExpect::Equals(want), Some(got)) if got == want => None,
                (JsonExpect::Equals(want), got) => Some(format!(
                    "jsonpath {text} expected {want}, got {}",
                    got.map_or("nothing".to_string(), ToString::to_string)
                )),
                (JsonExpect::Matches(re), Some(got)) if re.is_match(&json_text(got)) => None,
                (JsonExpect::Matches(re), got) => Some(format!(
                    "jsonpath {text} expected to match /{}/, got {}",
                    re.as_str(),
                    got.map_or("nothing".to_string(), ToString::to_string)
                )),
            }
        }
        Check::Header { name, expect } => {
            let value = seen.response.headers.get(name.as_str()).map(|v| String::from_utf8_lossy(v.as_bytes()));
            match (expect, value) {
                (TextExpect::Exists, Some(_)) | (TextExpect::Absent, None) => None,
                (TextExpect::Absent, Some(got)) => Some(format!("header {name} expected to be absent, got \"{got}\"")),
                (_, None) => Some(format!("header {name} expected, but the response has none")),
                (TextExpect::Equals(want), Some(got)) => {
                    (got != *want).then(|| format!("header {name} expected \"{want}\", got \"{got}\""))
                }
                (TextExpect::Matches(re), Some(got)) => (!re.is_match(&got))
                    .then(|| format!("header {name} expected to match /{}/, got \"{got}\"", re.as_str())),
            }
        }
        Check::Expr(tpl) => match expr(tpl) {
            Ok(true) => None,
            Ok(false) => Some(format!("expression {} is false", tpl.source())),
            Err(e) => Some(format!("expression {} failed: {e}", tpl.source())),
        },
    }
}

/// A JSON node as text: strings without quotes, the rest as JSON.
pub fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a rendered condition counts as true.
pub fn truthy(rendered: &str) -> bool {
    !matches!(rendered.trim(), "" | "false" | "False" | "0" | "none" | "None" | "[]" | "{}")
}
