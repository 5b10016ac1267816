//! Reading HTTP values (method, status, reason phrase, header and query maps) from a stub file.
//!
//! Each reader checks its value while deserializing, so a bad one is reported at its place in the file.

use std::fmt;

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde::de::{Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// An optional method such as `GET`; written in lower case it is taken in upper case.
pub(crate) fn method<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Method>, D::Error> {
    let text = String::deserialize(d)?;
    Method::from_bytes(text.to_ascii_uppercase().as_bytes())
        .map(Some)
        .map_err(|_| D::Error::custom(format!("`{text}` is not an HTTP method")))
}

/// A status code from 100 to 999.
pub(crate) fn status<'de, D: Deserializer<'de>>(d: D) -> Result<StatusCode, D::Error> {
    let code = u16::deserialize(d)?;
    StatusCode::from_u16(code).map_err(|_| D::Error::custom(format!("status {code} is not between 100 and 999")))
}

/// An optional reason phrase; it must fit on the status line.
pub(crate) fn reason<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    match hyper::ext::ReasonPhrase::try_from(text.as_bytes()) {
        Ok(_) => Ok(Some(text)),
        Err(_) => Err(D::Error::custom(format!("reason phrase {text:?} has characters a status line cannot hold"))),
    }
}

/// Response headers, in the order written; headers the server computes itself are refused.
pub(crate) fn headers<'de, D: Deserializer<'de>>(d: D) -> Result<HeaderMap, D::Error> {
    let mut map = HeaderMap::new();
    for (name, value) in d.deserialize_map(PairsVisitor)? {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| D::Error::custom(format!("`{name}` is not a valid header name")))?;
        if header == http::header::CONTENT_LENGTH || header == http::header::TRANSFER_ENCODING {
            return Err(D::Error::custom(format!("header `{name}` is set by the server from the body; remove it")));
        }
        let value = HeaderValue::from_str(&value)
            .map_err(|_| D::Error::custom(format!("header `{name}` has a value that cannot be sent: {value:?}")))?;
        map.append(header, value);
    }
    Ok(map)
}

/// A mapping of strings to strings, in the order written; `1234` and `yes` are read as the text written.
pub(crate) fn pairs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    d.deserialize_map(PairsVisitor)
}

/// Collects a mapping into a list, keeping its order.
struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping of names to text values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(0));
        while let Some((name, value)) = access.next_entry::<String, String>()? {
            if pairs.iter().any(|(seen, _)| *seen == name) {
                return Err(A::Error::custom(format!("`{name}` is given twice")));
            }
            pairs.push((name, value));
        }
        Ok(pairs)
    }
}
