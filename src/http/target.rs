//! Where a request goes: the full URL, its origin and the request target, computed without a full URL
//! parse on the hot path (a relative URL reuses the base URL's origin, parsed once).

use std::sync::Arc;

use http::header::HeaderValue;

/// Scheme, host and port: requests to the same origin share a virtual user's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// True for https.
    pub https: bool,
    /// The host name or address, without IPv6 brackets.
    pub host: String,
    /// The port (default for the scheme when the URL has none).
    pub port: u16,
}

/// A base URL, parsed once when the plan is compiled.
#[derive(Debug, Clone)]
pub struct Base {
    /// The base URL without a trailing slash.
    prefix: String,
    origin: Arc<Origin>,
    host: HeaderValue,
    path_at: usize,
}

/// A request's URL, resolved.
#[derive(Debug, Clone)]
pub struct Target {
    /// The full URL, query included.
    pub url: String,
    /// Its origin.
    pub origin: Arc<Origin>,
    /// The Host header.
    pub host: HeaderValue,
    path_at: usize,
}

impl Base {
    /// Parses a base URL; it must be absolute http or https.
    pub fn parse(url: &str) -> Result<Self, String> {
        let prefix = url.trim_end_matches('/').to_string();
        let (origin, host, path_at) = split_absolute(&prefix)?;
        Ok(Self { prefix, origin: Arc::new(origin), host, path_at })
    }
}

impl Base {
    /// The base URL without a trailing slash, which a relative URL follows.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

impl Target {
    /// Resolves a rendered URL: absolute as it is, relative appended to the base's path.
    pub fn resolve(base: Option<&Base>, raw: String) -> Result<Self, String> {
        let mut url = base.map_or_else(String::new, |b| b.prefix.clone());
        let from = url.len();
        url.push_str(&raw);
        Self::resolve_after_prefix(base, url, from, raw.len())
    }

    /// [`resolve`](Self::resolve) of a URL rendered straight after the base's prefix, so that a relative one
    /// (nearly every one) is not moved behind the prefix afterwards: `url` is the base's
    /// [`prefix`](Base::prefix) (nothing without a base) up to `from`, then the rendered URL; `scheme_within`
    /// is how much of the rendered URL may hold `://` (all of it, or the part before a form-encoded query,
    /// which cannot).
    pub fn resolve_after_prefix(
        base: Option<&Base>,
        mut url: String,
        from: usize,
        scheme_within: usize,
    ) -> Result<Self, String> {
        let raw = url.get(from..).unwrap_or_default();
        if raw.starts_with("http://") || raw.starts_with("https://") {
            url.drain(..from);
            return Self::absolute(url);
        }
        if raw.get(..scheme_within).unwrap_or(raw).contains("://") {
            return Err(format!("`{raw}` is not an http:// or https:// URL"));
        }
        let Some(base) = base else {
            return Err(format!("`{raw}` is relative and the plan sets no defaults.base_url"));
        };
        if !raw.starts_with('/') {
            url.insert(from, '/');
        }
        Ok(Self { url, origin: base.origin.clone(), host: base.host.clone(), path_at: base.path_at })
    }

    /// An absolute http or https URL.
    pub fn absolute(url: String) -> Result<Self, String> {
        let (origin, host, path_at) = split_absolute(&url)?;
        Ok(Self { origin: Arc::new(origin), host, path_at, url })
    }

    /// The request target: path and query, as in the request line.
    pub fn path_and_query(&self) -> &str {
        match &self.url[self.path_at..] {
            "" => "/",
            p => p,
        }
    }

    /// The URL parsed in full, for the cookie jar and redirects (off the hot path).
    pub fn parsed(&self) -> Option<url::Url> {
        url::Url::parse(&self.url).ok()
    }
}

/// Origin, Host header and where the path starts, of an absolute http(s) URL.
fn split_absolute(url: &str) -> Result<(Origin, HeaderValue, usize), String> {
    let bad = || format!("`{url}` is not a valid http:// or https:// URL");
    let (https, rest_at) = if url.starts_with("https://") {
        (true, 8)
    } else if url.starts_with("http://") {
        (false, 7)
    } else {
        return Err(bad());
    };
    let rest = &url[rest_at..];
    let auth_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_len];
    if authority.is_empty() || authority.contains('@') || authority.contains(char::is_whitespace) {
        return Err(bad());
    }
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => {
            let port = authority[i + 1..].parse::<u16>().map_err(|_| bad())?;
            (&authority[..i], port)
        }
        _ => (authority, if https { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad());
    }
    let header = HeaderValue::from_str(authority).map_err(|_| bad())?;
    Ok((Origin { https, host: host.to_string(), port }, header, rest_at + auth_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_urls_join_the_base_path() {
        let base = Base::parse("http://127.0.0.1:8080/api/").unwrap();
        let t = Target::resolve(Some(&base), "/users?id=1".into()).unwrap();
        assert_eq!(t.url, "http://127.0.0.1:8080/api/users?id=1");
        assert_eq!(t.path_and_query(), "/api/users?id=1");
        assert_eq!(t.host, "127.0.0.1:8080");
        assert_eq!(*t.origin, Origin { https: false, host: "127.0.0.1".into(), port: 8080 });
        let t = Target::resolve(Some(&base), "x".into()).unwrap();
        assert_eq!(t.path_and_query(), "/api/x");
    }

    #[test]
    fn a_url_rendered_after_the_prefix_resolves_as_one_rendered_alone() {
        let base = Base::parse("http://h:1/api?x=1").unwrap();
        for raw in ["/u?id=1", "u", "", "http://o/p", "https://o:2", "ftp://o/x", "/r?to=http://a", "?q", "a://"] {
            for base in [Some(&base), None] {
                let alone = Target::resolve(base, raw.to_string());
                let mut url = base.map_or_else(String::new, |b| b.prefix().to_string());
                let from = url.len();
                url.push_str(raw);
                let after = Target::resolve_after_prefix(base, url, from, raw.len());
                let show =
                    |t: Result<Target, String>| t.map(|t| (t.url.clone(), t.path_and_query().to_string(), t.host));
                assert_eq!(show(alone), show(after), "{raw}");
            }
        }
    }

    #[test]
    fn absolute_urls_keep_their_origin() {
        let t = Target::resolve(None, "https://[::1]/a b".into()).unwrap();
        assert_eq!(*t.origin, Origin { https: true, host: "::1".into(), port: 443 });
        assert_eq!(t.host, "[::1]");
        let t = Target::absolute("http://h".into()).unwrap();
        assert_eq!(t.path_and_query(), "/");
        assert!(Target::resolve(None, "/x".into()).is_err());
        assert!(Target::resolve(None, "ftp://h/x".into()).is_err());
        assert!(Target::absolute("http://:80/".into()).is_err());
    }
}
