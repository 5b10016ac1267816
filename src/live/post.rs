//! One HTTP request to a database, through planrun's own client (keep-alive, TLS with the system's roots).

use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use http::Method;

use crate::http::target::Target;
use crate::http::Client;
use crate::http::WireRequest;
use crate::plan::output_spec::Endpoint;

/// Longest a request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Most of a response body kept, for an error message.
const BODY_KEPT: usize = 1024;

/// What a database answered, or why it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A 2xx status.
    Accepted,
    /// Another status, with the start of the body: retried when `retry`.
    Refused {
        status: u16,
        /// Worth trying again (5xx, 429).
        retry: bool,
        /// Why, as the database says it.
        why: String,
    },
    /// No response (refused, reset, timed out): retried.
    Unreachable(String),
}

impl Answer {
    /// Why it failed, for a message; `None` when accepted.
    pub fn problem(&self) -> Option<String> {
        match self {
            Answer::Accepted => None,
            Answer::Refused { status, why, .. } => Some(format!("HTTP {status}: {why}")),
            Answer::Unreachable(why) => Some(why.clone()),
        }
    }
}

/// A client for one database.
pub struct Poster {
    client: Client,
    auth: Option<HeaderValue>,
}

impl Poster {
    /// A client for `endpoint`'s server.
    pub fn new(endpoint: &Endpoint) -> Self {
        let auth = endpoint.auth.as_deref().and_then(|a| HeaderValue::from_str(a).ok());
        Poster { client: Client::new(false, BODY_KEPT), auth }
    }

    /// Sends `body` to `url` with `content_type` and the other `headers`.
    pub async fn send(
        &mut self,
        method: Method,
        url: &str,
        content_type: &'static str,
        headers: &[(&'static str, &'static str)],
        body: Bytes,
    ) -> Answer {
        let target = match Target::absolute(url.to_string()) {
            Ok(t) => t,
            Err(e) => return Answer::Unreachable(e),
        };
        let mut all = vec![(CONTENT_TYPE, HeaderValue::from_static(content_type))];
        for (name, value) in headers {
            all.push((HeaderName::from_static(name), HeaderValue::from_static(value)));
        }
        if let Some(auth) = &self.auth {
            all.push((AUTHORIZATION, auth.clone()));
        }
        all.push((CONTENT_LENGTH, HeaderValue::from(body.len())));
        let request = WireRequest { method, target, headers: all, body, version: Default::default() };
        let exchange = self.client.execute(&request, TIMEOUT, true, false).await;
        match exchange.result {
            Ok(r) if (200..300).contains(&r.status) => Answer::Accepted,
            Ok(r) => {
                let body = r.body.as_deref().unwrap_or_default();
                let why = String::from_utf8_lossy(body).trim().chars().take(300).collect();
                Answer::Refused { status: r.status, retry: r.status >= 500 || r.status == 429, why }
            }
            Err(f) => Answer::Unreachable(f.message),
        }
    }
}
