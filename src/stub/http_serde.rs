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

/// A mapping of strings to strings, in the order written.
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
        while let Some((name, value)) = access.next_entry::<String, Scalar>()? {
            if pairs.iter().any(|(seen, _)| *seen == name) {
                return Err(A::Error::custom(format!("`{name}` is given twice")));
            }
            pairs.push((name, value.0));
        }
        Ok(pairs)
    }
}

/// A text value that may be written as a YAML number or boolean (`password: 1234`), kept as text.
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// Turns any scalar into its text.
struct ScalarVisitor;

impl Visitor<'_> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a text, number or boolean value")
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar(v))
    }

    fn visit_bool<E: Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
}
