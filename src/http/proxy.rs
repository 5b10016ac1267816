//! Forward proxies: which requests go through one (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY` read
//! as curl reads them, or one proxy for everything), and how: a plain http request in absolute form
//! (`GET http://host:port/path HTTP/1.1`) to the proxy, an https one through a `CONNECT` tunnel with TLS to
//! the target inside it. A connection through the proxy is kept per origin, as one without, so each virtual
//! user keeps its own.

use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine as _;
use http::header::HeaderValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::counting::Counting;
use super::error::Failure;
use super::outcome::ErrorKind;
use super::target::Origin;

/// The port of a proxy URL that gives none, as curl takes it.
pub const DEFAULT_PORT: u16 = 1080;

/// The longest reply to `CONNECT` read before the tunnel is given up.
const MAX_CONNECT_REPLY: usize = 16 * 1024;

/// A forward proxy: where it listens, and the credentials it is sent, if any.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    host: String,
    port: u16,
    /// `host:port` (an IPv6 address in brackets): how messages name it, credentials left out.
    shown: String,
    /// `Basic ...` of `user:password`, when the URL gives a user.
    authorization: Option<HeaderValue>,
    /// The decoded `user:password` and the password alone: secrets, masked wherever planrun writes.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth = if self.authorization.is_some() { " (with credentials)" } else { "" };
        write!(f, "Proxy(http://{}{auth})", self.shown)
    }
}

impl Proxy {
    /// A proxy URL: `http://[user:password@]host[:port][/]`, or `host[:port]` (http:// assumed, as curl does);
    /// the port is 1080 when none is given, as curl's. The reason given when it is refused never repeats the
    /// URL, which may hold a password.
    pub fn parse(text: &str) -> Result<Proxy, String> {
        let text = text.trim();
        let with_scheme = if text.contains("://") { text.to_string() } else { format!("http://{text}") };
        let url = url::Url::parse(&with_scheme).map_err(|e| format!("not a proxy URL ({e})"))?;
        match url.scheme() {
            "http" => {}
            "https" => return Err("https:// proxies (TLS to the proxy itself) are not supported: use http://".into()),
            other => return Err(format!("proxy scheme `{other}` is not supported: use http://")),
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err("the proxy URL names no host".into());
        };
        if !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err("a proxy URL has no path or query: http://host:port".into());
        }
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let port = url.port().unwrap_or(DEFAULT_PORT);
        let shown = authority(&host, port);
        let mut proxy = Proxy { host, port, shown, authorization: None, secrets: Vec::new() };
        if !url.username().is_empty() || url.password().is_some() {
            let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
            let (user, password) = (decode(url.username()), decode(url.password().unwrap_or_default()));
            let pair = format!("{user}:{password}");
            let token = base64::engine::general_purpose::STANDARD.encode(&pair);
            let mut value = HeaderValue::try_from(format!("Basic {token}"))
                .map_err(|_| "the proxy credentials cannot be sent in a header".to_string())?;
            value.set_sensitive(true);
            proxy.authorization = Some(value);
            proxy.secrets = vec![pair, password];
        }
        Ok(proxy)
    }

    /// `host:port`, as messages name the proxy.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The values to mask: the credentials (`user:password` and the password), none without.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// The `Proxy-Authorization` value sent with each request, when the URL gives credentials.
    pub fn authorization(&self) -> Option<&HeaderValue> {
        self.authorization.as_ref()
    }
}

/// `host:port`, an IPv6 address in brackets.
fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// What a command-line flag or a plan key says of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyChoice {
    /// `none`: no proxy, whatever the environment says.
    Off,
    /// This proxy for every request (but those `NO_PROXY` names).
    Via(Arc<Proxy>),
}

impl ProxyChoice {
    /// `none` (or nothing) turns the proxy off; anything else is a proxy URL ([`Proxy::parse`]).
    pub fn parse(text: &str) -> Result<ProxyChoice, String> {
        match text.trim() {
            "" | "none" => Ok(ProxyChoice::Off),
            url => Proxy::parse(url).map(|p| ProxyChoice::Via(Arc::new(p))),
        }
    }
}

/// An environment variable whose proxy cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("the environment's {var}: {reason} (`--proxy none` ignores the environment's proxies)")]
pub struct ProxyError {
    /// The variable, as it is spelled in the environment.
    pub var: &'static str,
    /// What is wrong (the value itself is not repeated: it may hold a password).
    pub reason: String,
}

/// The run's proxies: one for http targets, one for https targets, and the hosts that go around both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    http: Option<Arc<Proxy>>,
    https: Option<Arc<Proxy>>,
    no_proxy: NoProxy,
}

impl Proxies {
    /// The proxies a run uses: the command line's choice, else the plan's, else the environment's
    /// (`http_proxy`, `https_proxy`, `all_proxy`, each in lower case first, then upper case). The
    /// environment's `NO_PROXY` (`no_proxy` first) applies whichever way the proxy was chosen, as in curl.
    /// `env` reads a variable (an empty one counts as unset).
    pub fn resolve(
        flag: Option<&ProxyChoice>,
        plan: Option<&ProxyChoice>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Proxies, ProxyError> {
        let var = |names: [&'static str; 2]| {
            names.into_iter().find_map(|n| env(n).filter(|v| !v.trim().is_empty()).map(|v| (n, v)))
        };
        let no_proxy = var(["no_proxy", "NO_PROXY"]).map(|(_, v)| NoProxy::parse(&v)).unwrap_or_default();
        let parse = |found: Option<(&'static str, String)>| -> Result<Option<Arc<Proxy>>, ProxyError> {
            found
                .map(|(var, v)| Proxy::parse(&v).map(Arc::new).map_err(|reason| ProxyError { var, reason }))
                .transpose()
        };
        let (http, https) = match flag.or(plan) {
            Some(ProxyChoice::Off) => (None, None),
            Some(ProxyChoice::Via(p)) => (Some(p.clone()), Some(p.clone())),
            None => {
                let all = parse(var(["all_proxy", "ALL_PROXY"]))?;
                let http = parse(var(["http_proxy", "HTTP_PROXY"]))?.or_else(|| all.clone());
                let https = parse(var(["https_proxy", "HTTPS_PROXY"]))?.or(all);
                (http, https)
            }
        };
        Ok(Proxies { http, https, no_proxy })
    }

    /// True when no request goes through a proxy.
    pub fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy a request to `origin` goes through, if any.
    pub fn route(&self, origin: &Origin) -> Option<&Arc<Proxy>> {
        let proxy = if origin.https { self.https.as_ref() } else { self.http.as_ref() }?;
        (!self.no_proxy.matches(&origin.host, origin.port)).then_some(proxy)
    }

    /// Every proxy in use (one, or one per scheme).
    pub fn each(&self) -> impl Iterator<Item = &Arc<Proxy>> {
        let https = self.https.as_ref().filter(|s| self.http.as_ref() != Some(*s));
        self.http.iter().chain(https)
    }
}

/// `NO_PROXY`: hosts reached directly. Entries are separated by commas (or white space): `*` alone (every
/// host), a domain (`example.com`, `.example.com` and `*.example.com` all match example.com and every name
/// under it), an IP address (IPv6 with or without brackets) or a CIDR range (`10.0.0.0/8`), each optionally
/// with `:port` to match that port only. Names compare without regard to case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoProxy {
    every_host: bool,
    entries: Vec<(Pattern, Option<u16>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// A domain, lower case, without a leading dot: the name itself or a name under it.
    Domain(String),
    /// An address and how many of its leading bits must match.
    Net(IpAddr, u8),
}

impl NoProxy {
    /// Reads a `NO_PROXY` value; an entry that is neither a name nor an address matches nothing.
    pub fn parse(text: &str) -> NoProxy {
        let mut out = NoProxy::default();
        for entry in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|e| !e.is_empty()) {
            if entry == "*" {
                out.every_host = true;
                continue;
            }
            if let Some(parsed) = pattern(entry) {
                out.entries.push(parsed);
            }
        }
        out
    }

    /// Whether a request to `host` (as in the URL, no brackets) on `port` goes around the proxy.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.every_host {
            return true;
        }
        if self.entries.is_empty() {
            return false;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let ip = host.parse::<IpAddr>().ok();
        self.entries.iter().any(|(pattern, p)| {
            p.is_none_or(|p| p == port)
                && match (pattern, ip) {
                    (Pattern::Domain(d), _) => {
                        host == *d || host.strip_suffix(d.as_str()).is_some_and(|h| h.ends_with('.'))
                    }
                    (Pattern::Net(net, bits), Some(ip)) => in_net(ip, *net, *bits),
                    (Pattern::Net(..), None) => false,
                }
        })
    }
}

/// One `NO_PROXY` entry: its pattern and port.
fn pattern(entry: &str) -> Option<(Pattern, Option<u16>)> {
    // `[::1]:8080`, `[::1]`
    if let Some(rest) = entry.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return net(addr).map(|n| (n, port));
    }
    // More than one colon: an IPv6 address without brackets, as curl takes them (no port then).
    if entry.matches(':').count() > 1 {
        return net(entry).map(|n| (n, None));
    }
    let (name, port) = match entry.rsplit_once(':') {
        Some((name, port)) => (name, Some(port.parse().ok()?)),
        None => (entry, None),
    };
    if let Some(n) = net(name) {
        return Some((n, port));
    }
    let domain = name.trim_start_matches("*.").trim_start_matches('.').trim_end_matches('.').to_ascii_lowercase();
    (!domain.is_empty() && !domain.contains('/')).then_some((Pattern::Domain(domain), port))
}

/// An address, or `address/bits`.
fn net(text: &str) -> Option<Pattern> {
    let (addr, bits) = match text.split_once('/') {
        Some((a, b)) => (a, Some(b.parse::<u8>().ok()?)),
        None => (text, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(max);
    (bits <= max).then_some(Pattern::Net(addr, bits))
}

/// Whether `ip` is in `net/bits` (an IPv4-mapped IPv6 address is taken as its IPv4 one).
fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let canon = |a: IpAddr| match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(a, IpAddr::V4),
        v4 => v4,
    };
    match (canon(ip), canon(net)) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Makes an encoded request head (from [`super::encode::encode`]) one for the proxy: the target in absolute
/// form, and `Proxy-Authorization` when the proxy has credentials and the request sets none of its own.
pub(super) fn to_absolute_form(wire: &mut Vec<u8>, host: &HeaderValue, proxy: &Proxy, has_own_auth: bool) {
    if let Some(space) = wire.iter().position(|&b| b == b' ') {
        let mut scheme_host = b"http://".to_vec();
        scheme_host.extend_from_slice(host.as_bytes());
        wire.splice(space + 1..space + 1, scheme_host);
    }
    if let (Some(auth), false) = (&proxy.authorization, has_own_auth) {
        if let Some(end) = memchr::memmem::find(wire, b"\r\n\r\n") {
            let mut line = b"\r\nProxy-Authorization: ".to_vec();
            line.extend_from_slice(auth.as_bytes());
            wire.splice(end..end, line);
        }
    }
}

/// Opens a TCP connection to the proxy, and for an https `origin` a tunnel through it to the origin
/// (`CONNECT`); the caller does the TLS handshake to the origin over what this returns.
pub(super) async fn open(
    proxy: &Proxy,
    origin: &Origin,
    stats: Arc<super::counting::WireStats>,
) -> Result<Counting<TcpStream>, Failure> {
    let tcp = super::client::connect_tcp(&proxy.host, proxy.port)
        .await
        .map_err(|f| Failure::new(f.kind, format!("Proxy {}: {}", proxy.shown, f.message)))?;
    let mut stream = Counting::new(tcp, stats);
    if origin.https {
        tunnel(&mut stream, proxy, origin).await?;
    }
    Ok(stream)
}

/// Asks the proxy for a tunnel to `origin` and reads its reply: a 2xx opens it; anything else, or a close,
/// fails the sample, naming the proxy.
async fn tunnel(stream: &mut Counting<TcpStream>, proxy: &Proxy, origin: &Origin) -> Result<(), Failure> {
    let to = authority(&origin.host, origin.port);
    let refused = |kind: ErrorKind, why: String| {
        Failure::new(kind, format!("Proxy {} refused the tunnel (CONNECT {to}): {why}", proxy.shown))
    };
    let mut head = format!("CONNECT {to} HTTP/1.1\r\nHost: {to}\r\n").into_bytes();
    if let Some(auth) = &proxy.authorization {
        head.extend_from_slice(b"Proxy-Authorization: ");
        head.extend_from_slice(auth.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    stream.write_all(&head).await.map_err(|e| refused(ErrorKind::ConnectFailed, Failure::io(&e).message))?;
    let mut reply = Vec::with_capacity(256);
    let mut chunk = [0u8; 1024];
    let end = loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) => {
                return Err(refused(
                    ErrorKind::ConnectionReset,
                    "the proxy closed the connection without a reply".into(),
                ))
            }
            Ok(n) => n,
            Err(e) => return Err(refused(ErrorKind::ConnectionReset, Failure::io(&e).message)),
        };
        let from = reply.len().saturating_sub(3);
        reply.extend_from_slice(&chunk[..n]);
        if let Some(at) = memchr::memmem::find(&reply[from..], b"\r\n\r\n") {
            break from + at + 4;
        }
        if reply.len() > MAX_CONNECT_REPLY {
            return Err(refused(
                ErrorKind::InvalidResponse,
                format!("its reply is longer than {MAX_CONNECT_REPLY} bytes without an end"),
            ));
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Response::new(&mut headers);
    let (code, reason) = match parsed.parse(&reply[..end]) {
        Ok(httparse::Status::Complete(_)) => (parsed.code.unwrap_or(0), parsed.reason.unwrap_or("").to_string()),
        _ => {
            let shown: String = String::from_utf8_lossy(&reply[..end.min(40)])
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            return Err(refused(ErrorKind::InvalidResponse, format!("its reply is not HTTP: `{}`", shown.trim())));
        }
    };
    if !(200..300).contains(&code) {
        return Err(refused(ErrorKind::ConnectFailed, format!("{code} {reason}").trim_end().to_string()));
    }
    // The client speaks first in TLS: a proxy that sends more before it is out of step.
    if end < reply.len() {
        return Err(refused(ErrorKind::InvalidResponse, "it sent bytes after its 2xx reply".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(https: bool, host: &str, port: u16) -> Origin {
        Origin { https, host: host.into(), port }
    }

    #[test]
    fn proxy_urls_parse_as_curl_takes_them() {
        let p = Proxy::parse("http://127.0.0.1:3128").unwrap();
        assert_eq!((p.host.as_str(), p.port, p.shown()), ("127.0.0.1", 3128, "127.0.0.1:3128"));
        assert!(p.authorization().is_none() && p.secrets().is_empty());
        let p = Proxy::parse("proxy.example").unwrap();
        assert_eq!((p.port, p.shown()), (DEFAULT_PORT, "proxy.example:1080"));
        let p = Proxy::parse("http://[::1]:8080/").unwrap();
        assert_eq!((p.host.as_str(), p.shown()), ("::1", "[::1]:8080"));
        let p = Proxy::parse("http://al%40ice:s%3Acret@h:1").unwrap();
        // base64("al@ice:s:cret")
        assert_eq!(p.authorization().unwrap().to_str().unwrap(), "Basic YWxAaWNlOnM6Y3JldA==");
        assert_eq!(p.secrets(), ["al@ice:s:cret", "s:cret"]);
        assert!(!format!("{p:?}").contains("cret"));
        for bad in ["socks5://h:1", "https://h:1", "http://h:1/path", "http://", "http://h:99999"] {
            let e = Proxy::parse(bad).unwrap_err();
            assert!(!e.contains("h:1"), "{bad}: {e}");
        }
        let e = Proxy::parse("http://u:hunter22@h:1/x").unwrap_err();
        assert!(!e.contains("hunter22"), "{e}");
        assert_eq!(ProxyChoice::parse("none").unwrap(), ProxyChoice::Off);
    }

    #[test]
    fn the_environment_is_read_lower_case_first_and_all_proxy_fills_in() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let shown = |p: &Proxies, https: bool| p.route(&origin(https, "t.example", 80)).map(|p| p.shown().to_string());
        let p = Proxies::resolve(None, None, env(&[("HTTP_PROXY", "up:1"), ("http_proxy", "low:1")])).unwrap();
        assert_eq!((shown(&p, false), shown(&p, true)), (Some("low:1".into()), None));
        let p = Proxies::resolve(None, None, env(&[("ALL_PROXY", "all:1"), ("HTTPS_PROXY", "s:1")])).unwrap();
        assert_eq!((shown(&p, false), shown(&p, true)), (Some("all:1".into()), Some("s:1".into())));
        let p = Proxies::resolve(None, None, env(&[("http_proxy", ""), ("HTTP_PROXY", "up:1")])).unwrap();
        assert_eq!(shown(&p, false), Some("up:1".into()), "an empty variable is unset");
        let flag = ProxyChoice::parse("flag:1").unwrap();
        let plan = ProxyChoice::parse("plan:1").unwrap();
        let vars = env(&[("http_proxy", "env:1"), ("no_proxy", "other.example")]);
        let p = Proxies::resolve(Some(&flag), Some(&plan), vars).unwrap();
        assert_eq!(shown(&p, true), Some("flag:1".into()));
        let p = Proxies::resolve(None, Some(&plan), vars).unwrap();
        assert_eq!(shown(&p, false), Some("plan:1".into()));
        let p = Proxies::resolve(Some(&ProxyChoice::Off), Some(&plan), vars).unwrap();
        assert!(p.is_empty());
        let p = Proxies::resolve(None, Some(&plan), env(&[("NO_PROXY", "t.example")])).unwrap();
        assert_eq!(shown(&p, false), None, "NO_PROXY applies to the plan's proxy too");
        let e = Proxies::resolve(None, None, env(&[("HTTPS_PROXY", "socks5://u:pw12345@h:1")])).unwrap_err();
        assert_eq!(e.var, "HTTPS_PROXY");
        assert!(!e.to_string().contains("pw12345"), "{e}");
    }

    #[test]
    fn no_proxy_matches_domains_addresses_ranges_and_ports() {
        let n = NoProxy::parse("example.com, .internal.test,*.wild.test ,10.0.0.0/8,::1,[fe80::1]:8443 api.test:8080");
        for (host, port, expected) in [
            ("example.com", 80, true),
            ("www.EXAMPLE.com.", 443, true),
            ("notexample.com", 80, false),
            ("example.com.org", 80, false),
            ("internal.test", 80, true),
            ("a.b.internal.test", 80, true),
            ("wild.test", 80, true),
            ("x.wild.test", 80, true),
            ("10.1.2.3", 80, true),
            ("11.1.2.3", 80, false),
            ("::1", 80, true),
            ("::2", 80, false),
            ("fe80::1", 8443, true),
            ("fe80::1", 443, false),
            ("api.test", 8080, true),
            ("api.test", 80, false),
        ] {
            assert_eq!(n.matches(host, port), expected, "{host}:{port}");
        }
        assert!(NoProxy::parse("*").matches("anything", 1));
        assert!(!NoProxy::parse("").matches("anything", 1));
        assert!(!NoProxy::parse("*.x, /8, a:b").matches("y", 1), "junk entries match nothing");
        assert!(NoProxy::parse("127.0.0.0/8").matches("::ffff:127.0.0.1", 80));
    }

    #[test]
    fn a_request_head_goes_in_absolute_form_with_the_proxy_credentials() {
        let proxy = Proxy::parse("http://user:pass@p:1").unwrap();
        let host = HeaderValue::from_static("t.example:8080");
        let mut wire = b"GET /a?b HTTP/1.1\r\nHost: t.example:8080\r\n\r\nbody".to_vec();
        to_absolute_form(&mut wire, &host, &proxy, false);
        assert_eq!(
            String::from_utf8(wire).unwrap(),
            "GET http://t.example:8080/a?b HTTP/1.1\r\nHost: t.example:8080\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\nbody"
        );
        let mut wire = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
        to_absolute_form(&mut wire, &HeaderValue::from_static("t"), &proxy, true);
        assert_eq!(String::from_utf8(wire).unwrap(), "GET http://t/ HTTP/1.1\r\nHost: t\r\n\r\n");
    }
}
