//! What an output is: `influxdb=URL` or `prometheus=URL`, from the command line or the plan, and the
//! endpoint it writes to (credentials out of the URL, into a header; a name fit for messages).

use std::fmt;

use base64::Engine as _;

/// The kinds of live output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// InfluxDB 1.x line protocol over HTTP (`/write?db=`).
    Influxdb,
    /// Prometheus remote write (protobuf, snappy).
    Prometheus,
}

/// The kinds' names, as written before `=` and as plan keys.
pub const KINDS: &[&str] = &["influxdb", "prometheus"];

impl OutputKind {
    /// The kind named `name`.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "influxdb" => Some(OutputKind::Influxdb),
            "prometheus" => Some(OutputKind::Prometheus),
            _ => None,
        }
    }

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputKind::Influxdb => "influxdb",
            OutputKind::Prometheus => "prometheus",
        }
    }
}

/// One live output, as asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    /// Which database.
    pub kind: OutputKind,
    /// The URL as written.
    pub url: String,
    /// Also one point per sample (InfluxDB only), like JMeter's raw backend listener.
    pub raw: bool,
}

/// An output that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

impl OutputSpec {
    /// Parses `KIND=URL` (`--out`).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let Some((kind, url)) = text.split_once('=') else {
            return Err(SpecError(format!("`{text}` is not KIND=URL (kinds: {})", KINDS.join(", "))));
        };
        let kind = OutputKind::named(kind.trim()).ok_or_else(|| {
            let near = crate::diag::did_you_mean(kind.trim(), KINDS.iter().copied())
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_default();
            SpecError(format!("unknown output kind `{kind}` (kinds: {}){near}", KINDS.join(", ")))
        })?;
        let spec = OutputSpec { kind, url: url.trim().to_string(), raw: false };
        spec.endpoint()?;
        Ok(spec)
    }

    /// Where it writes.
    pub fn endpoint(&self) -> Result<Endpoint, SpecError> {
        Endpoint::new(self.kind, &self.url)
    }
}

/// Where an output writes, ready to use.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The kind of database it writes to.
    pub kind: OutputKind,
    /// The URL requests go to, without credentials.
    pub write_url: String,
    /// `Authorization: Basic ...` from the URL's user and password.
    pub auth: Option<String>,
    /// InfluxDB's database.
    pub database: Option<String>,
    /// `kind URL` without credentials or query, for messages.
    pub name: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl Endpoint {
    fn new(kind: OutputKind, text: &str) -> Result<Self, SpecError> {
        let bad = |why: &str| SpecError(format!("{} output `{}`: {why}", kind.as_str(), shown(text)));
        let mut url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(bad("not an http:// or https:// URL"));
        }
        let auth = (!url.username().is_empty()).then(|| {
            let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
            let pair = format!("{}:{}", decode(url.username()), decode(url.password().unwrap_or("")));
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
        });
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_fragment(None);
        let mut name = url.clone();
        name.set_query(None);
        let name = format!("{} {}", kind.as_str(), name);
        let (write_url, database) = match kind {
            OutputKind::Prometheus => (url.to_string(), None),
            OutputKind::Influxdb => influx_write_url(url).map_err(|why| bad(&why))?,
        };
        Ok(Endpoint { kind, write_url, auth, database, name })
    }

    /// The URL of a request to another path of the same server (InfluxDB's `/query`, `/ping`).
    pub fn sibling(&self, path_and_query: &str) -> String {
        match url::Url::parse(&self.write_url) {
            Ok(mut u) => {
                u.set_query(None);
                u.set_path("");
                format!("{}{}", u.as_str().trim_end_matches('/'), path_and_query)
            }
            Err(_) => self.write_url.clone(),
        }
    }
}

/// `http://host:8086/DB` or JMeter's `http://host:8086/write?db=DB` -> the write URL (µs precision) and DB.
fn influx_write_url(mut url: url::Url) -> Result<(String, Option<String>), String> {
    let path = url.path().trim_matches('/').to_string();
    let mut pairs: Vec<(String, String)> =
        url.query_pairs().filter(|(k, _)| k != "precision").map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let db = if path == "write" {
        pairs.iter().find(|(k, _)| k == "db").map(|(_, v)| v.clone())
    } else if !path.is_empty() && !path.contains('/') {
        let db = percent_encoding::percent_decode_str(&path).decode_utf8_lossy().into_owned();
        pairs.retain(|(k, _)| k != "db");
        pairs.insert(0, ("db".into(), db.clone()));
        Some(db)
    } else {
        None
    };
    let Some(db) = db.filter(|d| !d.is_empty()) else {
        return Err("name the database: http://HOST:8086/DATABASE (or JMeter's /write?db=DATABASE)".into());
    };
    pairs.push(("precision".into(), "u".into()));
    url.set_path("/write");
    url.query_pairs_mut().clear().extend_pairs(pairs);
    Ok((url.to_string(), Some(db)))
}

/// A URL as written, its password replaced.
fn shown(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn influx_urls_name_their_database() {
        let e = OutputSpec::parse("influxdb=http://127.0.0.1:8086/planrun").unwrap().endpoint().unwrap();
        assert_eq!(e.write_url, "http://127.0.0.1:8086/write?db=planrun&precision=u");
        assert_eq!(e.database.as_deref(), Some("planrun"));
        assert_eq!(e.name, "influxdb http://127.0.0.1:8086/planrun");
        let jmeter = OutputSpec::parse("influxdb=http://h:8086/write?db=jmeter&rp=week").unwrap().endpoint().unwrap();
        assert_eq!(jmeter.write_url, "http://h:8086/write?db=jmeter&rp=week&precision=u");
        assert_eq!(jmeter.sibling("/ping"), "http://h:8086/ping");
        let err = OutputSpec::parse("influxdb=http://h:8086/").unwrap_err().0;
        assert!(err.contains("name the database"), "{err}");
    }

    #[test]
    fn credentials_go_into_a_header_and_out_of_messages() {
        let e = OutputSpec::parse("prometheus=https://me:s%40cret@h/api/v1/write?x=1").unwrap().endpoint().unwrap();
        assert_eq!(e.write_url, "https://h/api/v1/write?x=1");
        assert_eq!(e.auth.as_deref(), Some("Basic bWU6c0BjcmV0"));
        assert_eq!(e.name, "prometheus https://h/api/v1/write");
        let err = OutputSpec::parse("influxdb=ftp://me:pw@h/db").unwrap_err().0;
        assert!(!err.contains("pw") && err.contains("***"), "{err}");
    }

    #[test]
    fn kinds_are_checked() {
        let err = OutputSpec::parse("influx=http://h:8086/db").unwrap_err().0;
        assert!(err.contains("did you mean `influxdb`"), "{err}");
        assert!(OutputSpec::parse("http://h:8086/db").is_err());
    }
}
