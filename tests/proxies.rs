//! Forward proxies, through the binary: plain http in absolute form, https through a CONNECT tunnel with TLS
//! to the target inside it, credentials sent and masked, which proxy a run takes (`--proxy` over
//! `defaults.proxy` over the environment, `NO_PROXY`), and proxies that refuse.
//!
//! The proxy is an in-process one (a forward proxy on 127.0.0.1 port 0 that counts what it is asked) and,
//! when it is installed, Debian's tinyproxy. The targets are named `*.proxy-only.test`: a name only the
//! proxy resolves (the in-process proxy maps it; tinyproxy runs in a mount namespace of its own whose
//! /etc/hosts has it), so a request that went around the proxy could not have reached them.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use common::{describe, num, read_jtl, run_guarded, Jtl, Server, TempDir};
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_rustls::TlsAcceptor;

/// The name the plain http target goes by: only the proxies resolve it.
const PLAIN_NAME: &str = "plain.proxy-only.test";
/// The name the https target goes by (its certificate is for it).
const SECURE_NAME: &str = "secure.proxy-only.test";

/// Every variable a proxy may be read from, removed from the binary's environment unless a test sets it.
const PROXY_VARS: [&str; 8] =
    ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"];

// ---------------------------------------------------------------------------------------------------------
// The in-process proxy
// ---------------------------------------------------------------------------------------------------------

/// What the proxy does with each request it reads.
#[derive(Clone)]
enum Mode {
    /// Forwards it (checking `Proxy-Authorization` against this value when given; 407 otherwise).
    Forward { auth: Option<String> },
    /// Answers every request with these bytes, then closes the connection.
    Answer(&'static [u8]),
    /// Closes the connection once the request's head is read.
    Close,
    /// Reads the request's head and never answers.
    Stall,
}

/// One request head the proxy read.
#[derive(Debug, Clone)]
struct Asked {
    /// Which client connection it came on (from 1).
    conn: u64,
    /// The request line.
    line: String,
    /// Its Proxy-Authorization header.
    auth: Option<String>,
}

struct ProxyState {
    mode: Mode,
    /// Names only the proxy resolves.
    hosts: HashMap<String, SocketAddr>,
    asked: Mutex<Vec<Asked>>,
    connections: AtomicU64,
}

/// A forward proxy on 127.0.0.1: absolute-form requests are sent on to their target (one upstream connection
/// each, `Connection: close`) with the client's connection kept; `CONNECT` opens a tunnel. It answers 400 to
/// a request in origin form (one not meant for a proxy).
struct Proxy {
    rt: Option<Runtime>,
    addr: SocketAddr,
    state: Arc<ProxyState>,
}

impl Proxy {
    fn start(mode: Mode, hosts: &[(&str, SocketAddr)]) -> Proxy {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(ProxyState {
            mode,
            hosts: hosts.iter().map(|(n, a)| (n.to_string(), *a)).collect(),
            asked: Mutex::new(Vec::new()),
            connections: AtomicU64::new(0),
        });
        let st = state.clone();
        rt.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let conn = st.connections.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::spawn(serve_client(tcp, conn, st.clone()));
            }
        });
        Proxy { rt: Some(rt), addr, state }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    fn asked(&self) -> Vec<Asked> {
        self.state.asked.lock().unwrap().clone()
    }

    fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Reads one request head (and the bytes after it that came with it); `None` at the end of the stream.
async fn read_head(tcp: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = buf[..end + 4].to_vec();
            buf.drain(..end + 4);
            return Some(head);
        }
        let mut chunk = [0u8; 4096];
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn serve_client(mut tcp: TcpStream, conn: u64, st: Arc<ProxyState>) {
    let mut buf = Vec::new();
    while let Some(head) = read_head(&mut tcp, &mut buf).await {
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.split("\r\n");
        let line = lines.next().unwrap_or_default().to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let auth = header("proxy-authorization");
        st.asked.lock().unwrap().push(Asked { conn, line: line.clone(), auth: auth.clone() });
        let auth_wanted = match &st.mode {
            Mode::Answer(bytes) => {
                let _ = tcp.write_all(bytes).await;
                return;
            }
            Mode::Close => return,
            Mode::Stall => {
                let _ = tcp.read(&mut [0u8; 1]).await;
                return;
            }
            Mode::Forward { auth } => auth.clone(),
        };
        if auth_wanted.is_some() && auth != auth_wanted {
            let _ = tcp
                .write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n\
                      Content-Length: 0\r\n\r\n",
                )
                .await;
            continue;
        }
        let mut parts = line.split(' ');
        let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
        let resolve = |authority: &str| -> Option<SocketAddr> {
            let (host, port) = authority.rsplit_once(':')?;
            match st.hosts.get(host) {
                Some(a) => Some(SocketAddr::new(a.ip(), port.parse().ok()?)),
                None => authority.parse().ok(),
            }
        };
        if method == "CONNECT" {
            let upstream = match resolve(target) {
                Some(addr) => TcpStream::connect(addr).await.ok(),
                None => None,
            };
            let Some(mut upstream) = upstream else {
                let _ = tcp.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n").await;
                return;
            };
            let _ = tcp.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
            let _ = tokio::io::copy_bidirectional(&mut tcp, &mut upstream).await;
            return;
        }
        let Some(rest) = target.strip_prefix("http://") else {
            let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").await;
            continue;
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let length: usize = header("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
        while buf.len() < length {
            let mut chunk = [0u8; 4096];
            match tcp.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf.drain(..length).collect();
        let Some(addr) = resolve(authority) else {
            let _ = tcp.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n").await;
            continue;
        };
        let Ok(mut upstream) = TcpStream::connect(addr).await else { return };
        let mut out = format!("{method} {} HTTP/1.1\r\n", if path.is_empty() { "/" } else { path }).into_bytes();
        for (n, v) in &headers {
            if !matches!(n.as_str(), "proxy-authorization" | "connection" | "proxy-connection") {
                out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
            }
        }
        out.extend_from_slice(b"Connection: close\r\n\r\n");
        out.extend_from_slice(&body);
        let mut response = Vec::new();
        if upstream.write_all(&out).await.is_err() || upstream.read_to_end(&mut response).await.is_err() {
            return;
        }
        // The upstream connection was for this request alone: its `Connection: close` is not the client's.
        let text = String::from_utf8_lossy(&response).into_owned();
        let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let kept: Vec<&str> =
            head.split("\r\n").filter(|l| !l.to_ascii_lowercase().starts_with("connection:")).collect();
        let relayed = format!("{}\r\n\r\n{rest}", kept.join("\r\n"));
        if tcp.write_all(relayed.as_bytes()).await.is_err() {
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// An https target
// ---------------------------------------------------------------------------------------------------------

/// An https server for [`SECURE_NAME`], its certificate signed by a CA of the test's own (`ca.pem`).
struct Secure {
    rt: Option<Runtime>,
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    ca_pem: String,
}

impl Secure {
    fn start() -> Secure {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.distinguished_name.push(DnType::CommonName, "planrun proxy test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
        let ca_key = KeyPair::generate().unwrap();
        let ca_pem = ca_params.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(ca_params, ca_key);
        let params = CertificateParams::new(vec![SECURE_NAME.to_string()]).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let count = requests.clone();
        rt.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let (acceptor, count) = (acceptor.clone(), count.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = service_fn(move |req: Request<Incoming>| {
                        count.fetch_add(1, Ordering::SeqCst);
                        let ok = req.uri().path() == "/ok";
                        async move {
                            let mut resp = Response::new(Full::new(Bytes::from_static(b"secure ok")));
                            if !ok {
                                *resp.status_mut() = http::StatusCode::NOT_FOUND;
                            }
                            Ok::<_, std::convert::Infallible>(resp)
                        }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
                });
            }
        });
        Secure { rt: Some(rt), addr, requests, ca_pem }
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for Secure {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------------------------------------

/// A plan of `threads` users looping `loops` times over one GET of `url`, with `defaults` lines (at two spaces).
fn plan(dir: &TempDir, url: &str, threads: u32, loops: u32, defaults: &str) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            "name: proxied\ndefaults:\n  timeout: 20s\n{defaults}thread_groups:\n  - name: g\n    threads: {threads}\n    \
             loops: {loops}\n    steps:\n      - name: get\n        request:\n          url: \"{url}\"\n"
        ),
    )
}

/// `planrun ARGS` in `dir` with `env` as the only proxy variables set.
fn planrun_env(dir: &TempDir, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planrun"));
    cmd.args(args).current_dir(dir.path());
    for v in PROXY_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    run_guarded(&mut cmd, Duration::from_secs(180), "planrun", |_| {})
}

/// `planrun run plan.yaml -o out.jtl ARGS` with `env`; the output and the JTL (empty when none was written).
fn run(dir: &TempDir, args: &[&str], env: &[(&str, &str)]) -> (Output, Jtl) {
    let mut all = vec!["run", "plan.yaml", "-o", "out.jtl"];
    all.extend(args);
    let out = planrun_env(dir, &all, env);
    let jtl = dir.join("out.jtl");
    let jtl = if jtl.exists() { read_jtl(&jtl) } else { Jtl { text: String::new(), header: vec![], rows: vec![] } };
    (out, jtl)
}

/// A row's responseCode, without the `Non HTTP response code: ` JMeter puts before a failure's kind.
fn code(row: &HashMap<String, String>) -> &str {
    row["responseCode"].trim_start_matches("Non HTTP response code: ")
}

/// A row's responseMessage, without the `Non HTTP response message: ` JMeter puts before a failure's.
fn message(row: &HashMap<String, String>) -> &str {
    row["responseMessage"].trim_start_matches("Non HTTP response message: ")
}

fn expect_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", describe(out));
}

/// Every file under `dir`, read as text (lossily), with its name.
fn every_file(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(every_file(&path));
        } else {
            out.push((path.display().to_string(), String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into()));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------------
// Through a proxy
// ---------------------------------------------------------------------------------------------------------

#[test]
fn plain_http_goes_through_the_proxy_in_absolute_form_one_connection_per_user() {
    let server = Server::start();
    let proxy = Proxy::start(Mode::Forward { auth: None }, &[(PLAIN_NAME, server_addr(&server))]);
    let dir = TempDir::new("proxy-plain");
    let url = format!("http://{PLAIN_NAME}:{}/ok", server.port());
    plan(&dir, &url, 3, 4, "");
    let (out, jtl) = run(&dir, &["--proxy", &proxy.url()], &[]);
    expect_exit(&out, 0);
    assert_eq!(jtl.rows.len(), 12);
    assert!(jtl.rows.iter().all(|r| r["responseCode"] == "200" && r["success"] == "true"), "{}", jtl.text);
    let asked = proxy.asked();
    assert_eq!(asked.len(), 12, "the proxy saw every request: {asked:?}");
    assert_eq!(server.count(), 12);
    for a in &asked {
        assert_eq!(a.line, format!("GET {url} HTTP/1.1"), "absolute form");
        assert_eq!(a.auth, None);
    }
    assert_eq!(proxy.connections(), 3, "one kept-alive connection to the proxy per user");
    let mut per_conn: HashMap<u64, usize> = HashMap::new();
    for a in &asked {
        *per_conn.entry(a.conn).or_default() += 1;
    }
    assert!(per_conn.values().all(|&n| n == 4), "each user's four requests on its own connection: {per_conn:?}");
    // Without the proxy, the name resolves nowhere: the requests above did go through it.
    let (out, jtl) = run(&dir, &[], &[]);
    expect_exit(&out, 0);
    assert!(jtl.rows.iter().all(|r| code(r) == "UnknownHost"), "{}", jtl.text);
}

fn server_addr(server: &Server) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], server.port()))
}

#[test]
fn https_goes_through_a_connect_tunnel_with_tls_to_the_target() {
    let secure = Secure::start();
    let proxy = Proxy::start(Mode::Forward { auth: None }, &[(SECURE_NAME, secure.addr)]);
    let dir = TempDir::new("proxy-connect");
    dir.write("ca.pem", &secure.ca_pem);
    let url = format!("https://{SECURE_NAME}:{}/ok", secure.addr.port());
    plan(&dir, &url, 2, 5, "  tls:\n    ca: ca.pem\n");
    // The environment's https proxy, not its http one, carries https requests.
    let other = Proxy::start(Mode::Forward { auth: None }, &[]);
    let (out, jtl) =
        run(&dir, &["--json", "out.jsonl"], &[("HTTPS_PROXY", &proxy.url()), ("http_proxy", &other.url())]);
    expect_exit(&out, 0);
    assert_eq!(jtl.rows.len(), 10);
    assert!(jtl.rows.iter().all(|r| r["responseCode"] == "200"), "{}", jtl.text);
    assert_eq!(secure.requests(), 10);
    let asked = proxy.asked();
    let to = format!("CONNECT {SECURE_NAME}:{} HTTP/1.1", secure.addr.port());
    assert_eq!(
        asked.iter().map(|a| a.line.as_str()).collect::<Vec<_>>(),
        [to.as_str(), to.as_str()],
        "one tunnel per user"
    );
    assert!(other.asked().is_empty());
    // The CONNECT exchange crossed the wire in the sample that opened the tunnel: counted in its bytes.
    let first: Vec<u64> = jtl.rows.iter().map(|r| num(r, "sentBytes")).collect();
    assert!(first.iter().max() > first.iter().min(), "{first:?}");
}

#[test]
fn proxy_credentials_are_sent_and_masked_everywhere() {
    let server = Server::start();
    let (user, password) = ("planrun", "Pr0xyS3cret");
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let proxy =
        Proxy::start(Mode::Forward { auth: Some(format!("Basic {token}")) }, &[(PLAIN_NAME, server_addr(&server))]);
    let dir = TempDir::new("proxy-credentials");
    let proxy_url = format!("http://{user}:{password}@127.0.0.1:{}", proxy.addr.port());
    // A request that fails (500) so that --http-debug and the failed bodies show it.
    plan(
        &dir,
        &format!("http://{PLAIN_NAME}:{}/status/500", server.port()),
        2,
        2,
        &format!("  proxy: \"{proxy_url}\"\n"),
    );
    let (out, jtl) = run(
        &dir,
        &["--json", "out.jsonl", "--http-debug=full", "--failed-bodies", "bodies", "--json-failed-bodies"],
        &[],
    );
    expect_exit(&out, 0);
    assert_eq!(jtl.rows.len(), 4);
    assert!(jtl.rows.iter().all(|r| r["responseCode"] == "500"), "{}", jtl.text);
    assert_eq!(server.count(), 4);
    let asked = proxy.asked();
    assert_eq!(asked.len(), 4);
    assert!(asked.iter().all(|a| a.auth.as_deref() == Some(&format!("Basic {token}"))), "{asked:?}");
    let dry = planrun_env(&dir, &["dry-run", "plan.yaml", "-n", "2"], &[]);
    expect_exit(&dry, 0);
    let through =
        format!("(through the proxy 127.0.0.1:{}, in absolute form, with Proxy-Authorization: ***)", proxy.addr.port());
    assert!(common::stdout(&dry).contains(&through), "{}", describe(&dry));
    // The wrong password: the proxy says 407, each sample fails with it.
    let (bad, bad_jtl) =
        run(&dir, &["--proxy", &format!("http://{user}:Wr0ngS3cret@127.0.0.1:{}", proxy.addr.port())], &[]);
    expect_exit(&bad, 0);
    assert!(bad_jtl.rows.iter().all(|r| r["responseCode"] == "407" && r["success"] == "false"), "{}", bad_jtl.text);
    let mut texts = every_file(dir.path());
    texts.retain(|(name, _)| !name.ends_with("plan.yaml"));
    for (what, o) in [("run", &out), ("dry-run", &dry), ("wrong password", &bad)] {
        texts.push((format!("{what} stdout"), String::from_utf8_lossy(&o.stdout).into()));
        texts.push((format!("{what} stderr"), String::from_utf8_lossy(&o.stderr).into()));
    }
    assert!(texts.iter().any(|(n, _)| n.contains("bodies")), "failed bodies were written");
    assert!(texts.iter().any(|(n, t)| n == "run stderr" && t.contains("500")), "--http-debug printed");
    let wrong_token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:Wr0ngS3cret"));
    for (name, text) in &texts {
        for secret in [password, token.as_str(), "Wr0ngS3cret", wrong_token.as_str()] {
            assert!(!text.contains(secret), "{name} shows `{secret}`:\n{text}");
        }
    }
}

#[test]
fn flag_wins_over_plan_which_wins_over_environment_and_none_turns_it_off() {
    let server = Server::start();
    let map = [(PLAIN_NAME, server_addr(&server))];
    let (env, in_plan, flag) = (
        Proxy::start(Mode::Forward { auth: None }, &map),
        Proxy::start(Mode::Forward { auth: None }, &map),
        Proxy::start(Mode::Forward { auth: None }, &map),
    );
    let dir = TempDir::new("proxy-choice");
    let url = format!("http://{PLAIN_NAME}:{}/ok", server.port());
    let counts = || (env.asked().len(), in_plan.asked().len(), flag.asked().len());
    let ok = |out: &Output, jtl: &Jtl, expected: &str| {
        expect_exit(out, 0);
        assert!(jtl.rows.iter().all(|r| code(r) == expected), "{}", jtl.text);
    };
    plan(&dir, &url, 1, 2, "");
    let (out, jtl) = run(&dir, &[], &[("HTTP_PROXY", &env.url())]);
    ok(&out, &jtl, "200");
    assert_eq!(counts(), (2, 0, 0), "the upper-case variable alone is read");
    let (out, jtl) = run(&dir, &[], &[("ALL_PROXY", &env.url())]);
    ok(&out, &jtl, "200");
    assert_eq!(counts(), (4, 0, 0), "ALL_PROXY when no scheme's own is set");
    plan(&dir, &url, 1, 2, &format!("  proxy: \"{}\"\n", in_plan.url()));
    let (out, jtl) = run(&dir, &[], &[("http_proxy", &env.url())]);
    ok(&out, &jtl, "200");
    assert_eq!(counts(), (4, 2, 0), "the plan's over the environment's");
    let (out, jtl) = run(&dir, &["--proxy", &flag.url()], &[("http_proxy", &env.url())]);
    ok(&out, &jtl, "200");
    assert_eq!(counts(), (4, 2, 2), "the flag's over the plan's");
    // `none` and NO_PROXY: the request goes straight to the target, which only the proxies can name.
    let (out, jtl) = run(&dir, &["--proxy", "none"], &[("http_proxy", &env.url())]);
    ok(&out, &jtl, "UnknownHost");
    let (out, jtl) = run(&dir, &[], &[("NO_PROXY", ".proxy-only.test")]);
    ok(&out, &jtl, "UnknownHost");
    plan(&dir, &url, 1, 2, "  proxy: none\n");
    let (out, jtl) = run(&dir, &[], &[("http_proxy", &env.url())]);
    ok(&out, &jtl, "UnknownHost");
    plan(&dir, &server.url(), 1, 2, "");
    let (out, jtl) = run(&dir, &[], &[("http_proxy", &env.url()), ("no_proxy", "localhost,127.0.0.0/8")]);
    ok(&out, &jtl, "404");
    assert_eq!(counts(), (4, 2, 2), "none of these went through a proxy");
    assert_eq!(server.count(), 8 + 2);
}

#[test]
fn a_proxy_that_cannot_be_used_is_refused_before_the_run_without_its_password() {
    let dir = TempDir::new("proxy-bad");
    plan(&dir, "http://127.0.0.1:9/x", 1, 1, "  proxy: \"socks5://user:{{ env('PROXY_PASSWORD') }}@127.0.0.1:1080\"\n");
    let out = planrun_env(&dir, &["run", "plan.yaml", "-o", "out.jtl"], &[("PROXY_PASSWORD", "Hunter2Hunter")]);
    expect_exit(&out, 2);
    let err = common::stderr(&out);
    assert!(err.contains("plan.yaml:4:10") && err.contains("proxy scheme `socks5` is not supported"), "{err}");
    assert!(!err.contains("Hunter2Hunter"), "{err}");
    plan(&dir, "http://127.0.0.1:9/x", 1, 1, "");
    let out = planrun_env(&dir, &["run", "plan.yaml", "--proxy", "https://u:Hunter2Hunter@p:1"], &[]);
    expect_exit(&out, 2);
    let err = common::stderr(&out);
    assert!(err.contains("--proxy: https:// proxies") && !err.contains("Hunter2Hunter"), "{err}");
    let out = planrun_env(&dir, &["validate", "plan.yaml"], &[("https_proxy", "socks5h://u:Hunter2Hunter@p:1")]);
    expect_exit(&out, 2);
    let err = common::stderr(&out);
    assert!(err.contains("the environment's https_proxy") && !err.contains("Hunter2Hunter"), "{err}");
    assert!(!dir.join("out.jtl").exists());
}

// ---------------------------------------------------------------------------------------------------------
// Proxies that refuse
// ---------------------------------------------------------------------------------------------------------

#[test]
fn a_proxy_that_refuses_the_tunnel_fails_each_sample_naming_the_proxy() {
    let secure = Secure::start();
    let cases: [(Mode, &str, &str); 5] = [
        (
            Mode::Answer(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"),
            "ConnectFailed",
            "407 Proxy Authentication Required",
        ),
        (Mode::Answer(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 5\r\n\r\nnope!"), "ConnectFailed", "403 Forbidden"),
        (Mode::Answer(b"HTTP/1.0 502 Bad Gateway\r\n\r\n"), "ConnectFailed", "502 Bad Gateway"),
        (Mode::Close, "ConnectionReset", "the proxy closed the connection without a reply"),
        (
            Mode::Answer(b"SSH-2.0-OpenSSH_9.2\r\n\r\n"),
            "InvalidResponse",
            "its reply is not HTTP: `SSH-2.0-OpenSSH_9.2`",
        ),
    ];
    for (mode, kind, why) in cases {
        let proxy = Proxy::start(mode, &[]);
        let dir = TempDir::new("proxy-refuses");
        plan(&dir, &format!("https://{SECURE_NAME}:{}/ok", secure.addr.port()), 2, 3, "  tls:\n    insecure: true\n");
        let (out, jtl) = run(&dir, &["--proxy", &proxy.url()], &[]);
        expect_exit(&out, 0);
        assert_eq!(jtl.rows.len(), 6);
        let expected = format!(
            "Proxy 127.0.0.1:{} refused the tunnel (CONNECT {SECURE_NAME}:{}): {why}",
            proxy.addr.port(),
            secure.addr.port()
        );
        for r in &jtl.rows {
            assert_eq!((code(r), r["success"].as_str()), (kind, "false"), "{}", jtl.text);
            assert_eq!(message(r), expected);
        }
        assert_eq!(proxy.asked().len(), 6, "every sample asked the proxy once: {why}");
    }
    assert_eq!(secure.requests(), 0);
}

#[test]
fn a_proxy_that_fails_plain_http_fails_the_sample_saying_it_went_through_the_proxy() {
    let server = Server::start();
    let url = format!("http://{PLAIN_NAME}:{}/ok", server.port());
    let cases: [(Mode, &str, &str); 3] = [
        (Mode::Close, "ConnectionReset", "Connection closed before the response was complete"),
        (Mode::Answer(b"garbage\r\n\r\n"), "InvalidResponse", "Invalid HTTP response"),
        (Mode::Answer(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"), "502", "Bad Gateway"),
    ];
    for (mode, kind, why) in cases {
        let proxy = Proxy::start(mode, &[]);
        let dir = TempDir::new("proxy-plain-fails");
        plan(&dir, &url, 2, 2, "");
        let (out, jtl) = run(&dir, &["--proxy", &proxy.url()], &[]);
        expect_exit(&out, 0);
        assert_eq!(jtl.rows.len(), 4);
        for r in &jtl.rows {
            assert_eq!((code(r), r["success"].as_str()), (kind, "false"), "{}", jtl.text);
            assert!(message(r).starts_with(why), "{}", jtl.text);
            if kind != "502" {
                let through = format!("(through the proxy 127.0.0.1:{})", proxy.addr.port());
                assert!(message(r).ends_with(&through), "{}", jtl.text);
            }
        }
        assert_eq!(proxy.asked().len(), 4);
    }
    // A proxy nobody listens on.
    let dir = TempDir::new("proxy-refused");
    plan(&dir, &url, 1, 2, "");
    let refused = common::refused_url();
    let (out, jtl) = run(&dir, &["--proxy", &refused], &[]);
    expect_exit(&out, 0);
    let expected = format!("Proxy {}: Connection refused", refused.trim_start_matches("http://"));
    assert!(jtl.rows.iter().all(|r| code(r) == "ConnectionRefused" && message(r) == expected), "{}", jtl.text);
    assert_eq!(server.count(), 0);
}

#[test]
fn a_proxy_that_stalls_times_the_sample_out_saying_it_went_through_the_proxy() {
    // Accepts and reads, never answers.
    let stall = Proxy::start(Mode::Stall, &[]);
    let dir = TempDir::new("proxy-stalls");
    for (url, kind, what) in [
        (format!("https://{SECURE_NAME}:443/ok"), "ConnectTimeout", "Connect timed out after 300 ms"),
        (format!("http://{PLAIN_NAME}/ok"), "ReadTimeout", "Read timed out after 300 ms"),
    ] {
        plan(&dir, &url, 2, 1, "");
        std::fs::write(
            dir.join("plan.yaml"),
            std::fs::read_to_string(dir.join("plan.yaml")).unwrap().replace("20s", "300ms"),
        )
        .unwrap();
        let (out, jtl) = run(&dir, &["--proxy", &stall.url()], &[]);
        expect_exit(&out, 0);
        assert_eq!(jtl.rows.len(), 2);
        let expected = format!("{what} (through the proxy 127.0.0.1:{})", stall.addr.port());
        assert!(jtl.rows.iter().all(|r| code(r) == kind && message(r) == expected), "{}", jtl.text);
    }
    assert_eq!(stall.asked().len(), 4);
}

// ---------------------------------------------------------------------------------------------------------
// Debian's tinyproxy
// ---------------------------------------------------------------------------------------------------------

/// How tinyproxy comes to know the `*.proxy-only.test` names that planrun cannot resolve.
enum Names<'a> {
    /// It resolves them itself: it runs in a mount namespace of its own (`unshare -m`, which needs root)
    /// whose /etc/hosts maps them to 127.0.0.1.
    OwnHosts,
    /// Its `Upstream` rule sends every request for them on to this proxy (an in-process one that maps them),
    /// so it never resolves them; needs nothing beyond tinyproxy.
    Upstream(&'a Proxy),
}

/// tinyproxy, started on a free loopback port with its own configuration and log in `dir`; `None`, said
/// with [`common::skip`], when it is not installed.
struct Tinyproxy {
    child: std::process::Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Tinyproxy {
    fn start(dir: &TempDir, names: Names<'_>) -> Option<Tinyproxy> {
        if Command::new("tinyproxy").arg("-v").output().is_err() {
            common::skip("tinyproxy", "PLANRUN_REQUIRE_PROXY", "it is not installed (apt-get install tinyproxy-bin)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = dir.join("tinyproxy.log");
        let mut conf = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 60\nMaxClients 100\nLogFile \"{}\"\nLogLevel Info\n\
             PidFile \"{}\"\nAllow 127.0.0.1\n",
            log.display(),
            dir.join("tinyproxy.pid").display()
        );
        if let Names::Upstream(next) = &names {
            conf.push_str(&format!("Upstream http 127.0.0.1:{} \".proxy-only.test\"\n", next.addr.port()));
        }
        let conf = dir.write("tinyproxy.conf", conf);
        let mut cmd = match names {
            Names::OwnHosts => {
                let probe = Command::new("unshare").args(["-m", "true"]).output();
                if !probe.as_ref().is_ok_and(|o| o.status.success()) {
                    // Not a missing tool: the same run through tinyproxy is made with `Names::Upstream`.
                    eprintln!("SKIPPED tinyproxy with its own /etc/hosts: `unshare -m` is not allowed here");
                    return None;
                }
                let mut etc_hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
                etc_hosts.push_str(&format!("\n127.0.0.1 {PLAIN_NAME}\n127.0.0.1 {SECURE_NAME}\n"));
                let hosts = dir.write("hosts", etc_hosts);
                let script = format!(
                    "mount --bind '{}' /etc/hosts && exec tinyproxy -d -c '{}'",
                    hosts.display(),
                    conf.display()
                );
                let mut cmd = Command::new("unshare");
                cmd.args(["-m", "--propagation", "private", "sh", "-c", &script]);
                cmd
            }
            Names::Upstream(_) => {
                let mut cmd = Command::new("tinyproxy");
                cmd.arg("-d").arg("-c").arg(&conf);
                cmd
            }
        };
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start tinyproxy");
        let proxy = Tinyproxy { child, port, log };
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(proxy);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("tinyproxy did not listen on {port}");
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_run_through_tinyproxy_counts_every_request_in_its_log() {
    let server = Server::start();
    let secure = Secure::start();
    let next =
        Proxy::start(Mode::Forward { auth: None }, &[(PLAIN_NAME, server_addr(&server)), (SECURE_NAME, secure.addr)]);
    let dir = TempDir::new("tinyproxy-upstream");
    let Some(tiny) = Tinyproxy::start(&dir, Names::Upstream(&next)) else { return };
    through_tinyproxy(&dir, &tiny, &server, &secure);
    // The next proxy saw each of tinyproxy's requests: every plain one, and one CONNECT per tunnel.
    assert_eq!(next.asked().len(), 15, "{:?}", next.asked());
}

#[test]
fn a_run_through_tinyproxy_resolving_the_names_itself_counts_every_request_in_its_log() {
    let server = Server::start();
    let secure = Secure::start();
    let dir = TempDir::new("tinyproxy-hosts");
    let Some(tiny) = Tinyproxy::start(&dir, Names::OwnHosts) else { return };
    through_tinyproxy(&dir, &tiny, &server, &secure);
}

/// Three users, four loops of a plain and an https request, through tinyproxy (the environment's
/// http_proxy and HTTPS_PROXY): every row a 200, and tinyproxy's log counts every request.
fn through_tinyproxy(dir: &TempDir, tiny: &Tinyproxy, server: &Server, secure: &Secure) {
    dir.write("ca.pem", &secure.ca_pem);
    let plain = format!("http://{PLAIN_NAME}:{}/ok", server.port());
    let tls = format!("https://{SECURE_NAME}:{}/ok", secure.addr.port());
    dir.write(
        "plan.yaml",
        format!(
            "name: tinyproxy\ndefaults:\n  timeout: 20s\n  tls:\n    ca: ca.pem\nthread_groups:\n  - name: g\n    \
             threads: 3\n    loops: 4\n    steps:\n      - name: plain\n        request:\n          url: \"{plain}\"\n      \
             - name: tls\n        request:\n          url: \"{tls}\"\n"
        ),
    );
    let proxy = format!("http://127.0.0.1:{}", tiny.port);
    let (out, jtl) = run(dir, &[], &[("http_proxy", &proxy), ("HTTPS_PROXY", &proxy)]);
    expect_exit(&out, 0);
    assert_eq!(jtl.rows.len(), 24);
    assert!(jtl.rows.iter().all(|r| r["responseCode"] == "200"), "{}\n{}", jtl.text, tiny.log());
    assert_eq!(server.count(), 12);
    assert_eq!(secure.requests(), 12);
    // tinyproxy logs each request it reads ("Request (file descriptor N): GET http://... HTTP/1.1"): every
    // plain one, and one CONNECT per tunnel. A tunnel, kept by its user, carries all of that user's https
    // requests.
    let log = tiny.log();
    let requests: Vec<&str> =
        log.lines().filter_map(|l| l.split_once("Request (file descriptor ")).map(|(_, r)| r).collect();
    let plain_seen = requests.iter().filter(|r| r.contains(&format!("GET {plain} HTTP/1.1"))).count();
    let connect = format!("CONNECT {SECURE_NAME}:{} HTTP/1.1", secure.addr.port());
    let connects = requests.iter().filter(|r| r.contains(&connect)).count();
    assert_eq!(plain_seen, 12, "{log}");
    assert_eq!(connects, 3, "one tunnel per user: {log}");
    assert_eq!(requests.len(), 15, "{log}");
}
