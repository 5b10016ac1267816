//! One stub route: what requests it answers and how.

use http::{HeaderMap, Method, StatusCode};
use serde::{Deserialize, Deserializer};

use super::http_serde;
use super::latency::Latency;

/// A route of the stub: the first route whose method, path and query match a request answers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The method to match; `None` matches any method.
    #[serde(default, deserialize_with = "http_serde::method")]
    pub method: Option<Method>,
    /// The path to match exactly, without the query string.
    #[serde(deserialize_with = "path")]
    pub path: String,
    /// Query parameters that must all be present, in the order written.
    #[serde(default, deserialize_with = "query")]
    pub query: Vec<QueryParam>,
    /// The status to answer with; 200 unless written.
    #[serde(default = "ok", deserialize_with = "http_serde::status")]
    pub status: StatusCode,
    /// A reason phrase to send instead of the status's canonical one.
    #[serde(default, deserialize_with = "http_serde::reason")]
    pub reason: Option<String>,
    /// Headers to send with every answer of this route.
    #[serde(default, deserialize_with = "http_serde::headers")]
    pub headers: HeaderMap,
    /// The body to answer with; empty unless written.
    #[serde(default)]
    pub body: String,
    /// The delay before answering; `None` answers at once.
    #[serde(default)]
    pub latency: Option<Latency>,
    /// Errors to answer with instead, now and then.
    #[serde(default)]
    pub errors: Option<ErrorRate>,
}

/// A share of requests answered with an error instead of the route's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorRate {
    /// The share of requests that fail, from 0.0 (none) to 1.0 (all).
    #[serde(deserialize_with = "rate")]
    pub rate: f64,
    /// The status of a failed answer; 503 unless written.
    #[serde(default = "unavailable", deserialize_with = "http_serde::status")]
    pub status: StatusCode,
    /// The body of a failed answer; empty unless written.
    #[serde(default)]
    pub body: String,
}

/// A query parameter a route requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParam {
    /// The parameter's name, decoded.
    pub name: String,
    /// The value it must have.
    pub value: QueryValue,
}

/// The value a required query parameter must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryValue {
    /// Any value, even empty: written `"*"`.
    Any,
    /// Exactly this value, compared after percent-decoding (and `+` read as a space).
    Exact(String),
}

impl Route {
    /// Whether this route answers a request with this method, path and raw query string.
    pub fn matches(&self, method: &Method, path: &str, query: Option<&str>) -> bool {
        if self.method.as_ref().is_some_and(|m| m != method) || self.path != path {
            return false;
        }
        let query = query.unwrap_or("");
        self.query.iter().all(|param| param.is_in(query))
    }
}

impl QueryParam {
    /// Whether the raw query string holds this parameter with an accepted value.
    fn is_in(&self, query: &str) -> bool {
        url::form_urlencoded::parse(query.as_bytes()).any(|(name, value)| {
            name == self.name.as_str()
                && match &self.value {
                    QueryValue::Any => true,
                    QueryValue::Exact(expected) => value == expected.as_str(),
                }
        })
    }
}

fn ok() -> StatusCode {
    StatusCode::OK
}

fn unavailable() -> StatusCode {
    StatusCode::SERVICE_UNAVAILABLE
}

fn path<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let path = String::deserialize(d)?;
    if !path.starts_with('/') || path.contains('?') {
        return Err(serde::de::Error::custom(format!(
            "path {path:?} must start with `/` and hold no query string (match the query with `query:`)"
        )));
    }
    Ok(path)
}

fn query<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<QueryParam>, D::Error> {
    let pairs = http_serde::pairs(d)?;
    let params = pairs.into_iter().map(|(name, value)| QueryParam {
        name,
        value: if value == "*" { QueryValue::Any } else { QueryValue::Exact(value) },
    });
    Ok(params.collect())
}

fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let rate = f64::deserialize(d)?;
    if !(0.0..=1.0).contains(&rate) {
        return Err(serde::de::Error::custom(format!("error rate {rate} must be between 0.0 and 1.0")));
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(query: &[(&str, QueryValue)]) -> Route {
        Route {
            method: Some(Method::GET),
            path: "/send".to_string(),
            query: query.iter().map(|(n, v)| QueryParam { name: n.to_string(), value: v.clone() }).collect(),
            status: StatusCode::OK,
            reason: None,
            headers: HeaderMap::new(),
            body: String::new(),
            latency: None,
            errors: None,
        }
    }

    #[test]
    fn matches_method_path_and_every_listed_parameter() {
        let r = route(&[("user", QueryValue::Exact("a b".into())), ("to", QueryValue::Any)]);
        assert!(r.matches(&Method::GET, "/send", Some("to=&user=a+b&x=1")));
        assert!(r.matches(&Method::GET, "/send", Some("user=a%20b&to=%2B7")));
        assert!(!r.matches(&Method::GET, "/send", Some("user=a+b")));
        assert!(!r.matches(&Method::GET, "/send", Some("user=ab&to=1")));
        assert!(!r.matches(&Method::POST, "/send", Some("user=a+b&to=1")));
        assert!(!r.matches(&Method::GET, "/sendx", Some("user=a+b&to=1")));
        assert!(!r.matches(&Method::GET, "/send", None));
    }

    #[test]
    fn no_method_and_no_query_match_anything_on_the_path() {
        let mut r = route(&[]);
        r.method = None;
        assert!(r.matches(&Method::DELETE, "/send", None));
        assert!(r.matches(&Method::GET, "/send", Some("a=1")));
    }
}
