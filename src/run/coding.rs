//! A response body's Content-Encoding as the runner tells it: the failure of a sample whose body did not
//! decode whole, and the decoded response that `--failed-bodies` and `--http-debug` show.

use std::borrow::Cow;

use super::options::{DEBUG_BODY_LIMIT, KEPT_BODY_LIMIT};
use crate::http::content_coding::{self, CodingError, Decoded};
use crate::http::Response;

/// The failure message of a sample whose body a check or an extractor read, and which did not decode whole;
/// `max_body` is the plan's.
pub(super) fn failure(problem: &CodingError, resp: &Response, max_body: usize) -> String {
    let received_cut = resp.body.as_ref().is_some_and(|b| b.len() >= max_body);
    match problem {
        CodingError::TooLarge { coding, .. } => {
            format!("Content-Encoding {coding}: the decoded body is longer than max_body ({max_body} bytes): cut there")
        }
        CodingError::Truncated { coding } if received_cut => format!(
            "Content-Encoding {coding}: the body as received is longer than max_body ({max_body} bytes): cut there, \
             before it could be decoded whole"
        ),
        other => format!("Content-Encoding: {other}"),
    }
}

/// The last response as the results show it: its body decoded (`decoded`, when a check already did it, or
/// now, as far as the views show), and the size the views tell, with the decoded size when it decoded whole.
pub(super) fn shown<'a>(
    resp: &'a Response,
    decoded: Option<&Decoded>,
    size: u64,
) -> (Cow<'a, Response>, u64, Option<u64>) {
    let fresh;
    let decoded = match (decoded, &resp.body) {
        (Some(d), _) => d,
        (None, Some(body)) if resp.headers.content_encoded() => {
            match content_coding::decode(&resp.headers, body, KEPT_BODY_LIMIT.max(DEBUG_BODY_LIMIT)) {
                Some(d) => {
                    fresh = d;
                    &fresh
                }
                None => return (Cow::Borrowed(resp), size, None),
            }
        }
        _ => return (Cow::Borrowed(resp), size, None),
    };
    let whole = decoded.problem.is_none().then_some(decoded.body.len() as u64);
    let mut shown = resp.clone();
    shown.body = Some(decoded.body.clone());
    (Cow::Owned(shown), decoded.body.len() as u64, whole)
}
