//! https targets, against an in-process TLS server (tokio-rustls + hyper on 127.0.0.1 port 0) whose
//! certificates are generated with rcgen when the test runs.
//!
//! The library-level tests drive `planrun::http::Client` directly. The binary-level tests run `planrun`
//! on plans with `defaults.tls`: the default-verification one passes on its own (a client without TLS
//! settings verifies against Mozilla's roots); the `ca`, `insecure` and mutual-TLS ones need the run's TLS
//! configuration to reach each virtual user's client (`Client::with_tls` in src/run/vuser.rs).

use crate::common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use common::{num, run_ok, TempDir};
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use planrun::http::target::Target;
use planrun::http::WireRequest;
use planrun::http::{tls_config, Client, Exchange};
use planrun::plan::model::TlsSettings;
use planrun::sample::ErrorKind;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{HandshakeKind, RootCertStore, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_rustls::TlsAcceptor;

// ---------------------------------------------------------------------------------------------------------
// Certificates
// ---------------------------------------------------------------------------------------------------------

/// A certificate and its key, DER and PEM.
struct Identity {
    cert: CertificateDer<'static>,
    cert_pem: String,
    key: KeyPair,
}

impl Identity {
    fn key_der(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.serialize_der()))
    }
}

/// A test CA, a server certificate it signed for `localhost` and 127.0.0.1, a client certificate it signed,
/// and a self-signed server certificate nobody vouches for.
struct Pki {
    ca: Identity,
    server: Identity,
    client: Identity,
    self_signed: Identity,
    /// Signed by the CA, but for `localhost` only.
    localhost_only: Identity,
}

fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "planrun test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let ca = Identity { cert: ca_cert.der().clone(), cert_pem: ca_cert.pem(), key: ca_key };
    let issuer = Issuer::new(ca_params, KeyPair::from_pem(&ca.key.serialize_pem()).unwrap());
    let leaf = |names: &[&str], usage: ExtendedKeyUsagePurpose| {
        let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("planrun client"));
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        Identity { cert: cert.der().clone(), cert_pem: cert.pem(), key }
    };
    let server = leaf(&["localhost", "127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth);
    let client = leaf(&[], ExtendedKeyUsagePurpose::ClientAuth);
    let localhost_only = leaf(&["localhost"], ExtendedKeyUsagePurpose::ServerAuth);
    let ss = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let self_signed = Identity { cert: ss.cert.der().clone(), cert_pem: ss.cert.pem(), key: ss.signing_key };
    Pki { ca, server, client, self_signed, localhost_only }
}

// ---------------------------------------------------------------------------------------------------------
// The TLS server
// ---------------------------------------------------------------------------------------------------------

#[derive(Default)]
struct Counters {
    /// TCP bytes read and written, TLS records and handshakes included.
    read: AtomicU64,
    written: AtomicU64,
    accepted: AtomicU64,
    handshakes: AtomicU64,
    /// Handshakes that resumed an earlier session.
    resumed: AtomicU64,
    /// Connections whose handling is over (handshake failed, or the connection ended).
    closed: AtomicU64,
    requests: AtomicU64,
    /// Requests that came with a client certificate.
    with_client_cert: AtomicU64,
}

/// An https server: `/ok` answers 200 "ok", `/close` 200 "ok" and closes the connection, `/bytes/N` N bytes,
/// a POST the size of its body, anything else 404.
struct TlsServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
    counters: Arc<Counters>,
}

impl TlsServer {
    /// Serves with `identity`; `client_ca` makes a client certificate signed by it mandatory.
    fn start(identity: &Identity, client_ca: Option<&Identity>) -> TlsServer {
        Self::start_with(identity, client_ca, rustls::DEFAULT_VERSIONS)
    }

    /// Serves with `identity`, speaking only the TLS `versions` given.
    fn start_with(
        identity: &Identity,
        client_ca: Option<&Identity>,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> TlsServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(versions).unwrap();
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                roots.add(ca.cert.clone()).unwrap();
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build().unwrap();
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(vec![identity.cert.clone()], identity.key_der()).unwrap();
        Self::serve(TlsAcceptor::from(Arc::new(config)))
    }

    fn serve(acceptor: TlsAcceptor) -> TlsServer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let c = counters.clone();
        rt.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                c.accepted.fetch_add(1, Ordering::SeqCst);
                let (c, acceptor) = (c.clone(), acceptor.clone());
                tokio::spawn(async move {
                    if let Ok(tls) =
                        acceptor.accept(Counted { inner: tcp, counters: c.clone(), client_closed: false }).await
                    {
                        c.handshakes.fetch_add(1, Ordering::SeqCst);
                        if tls.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed) {
                            c.resumed.fetch_add(1, Ordering::SeqCst);
                        }
                        let client_cert = tls.get_ref().1.peer_certificates().is_some_and(|certs| !certs.is_empty());
                        let cs = c.clone();
                        let service = service_fn(move |req| handle(req, client_cert, cs.clone()));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                    }
                    c.closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        TlsServer { rt: Some(rt), addr, counters }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    fn get(&self, counter: fn(&Counters) -> &AtomicU64) -> u64 {
        counter(&self.counters).load(Ordering::SeqCst)
    }

    /// Waits until every accepted connection is over, so the byte counters are final.
    fn settle(&self) {
        for _ in 0..500 {
            if self.get(|c| &c.closed) == self.get(|c| &c.accepted) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the server's connections did not end");
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn handle(
    req: Request<Incoming>,
    client_cert: bool,
    c: Arc<Counters>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    c.requests.fetch_add(1, Ordering::SeqCst);
    if client_cert {
        c.with_client_cert.fetch_add(1, Ordering::SeqCst);
    }
    let path = req.uri().path().to_string();
    if req.method() == http::Method::POST {
        use http_body_util::BodyExt;
        let size = req.into_body().collect().await.map(|b| b.to_bytes().len()).unwrap_or(0);
        return Ok(Response::new(Full::new(Bytes::from(size.to_string()))));
    }
    let (status, body) = match path.strip_prefix("/bytes/").map(str::parse::<usize>) {
        _ if path == "/ok" || path == "/close" => (200, Bytes::from_static(b"ok")),
        Some(Ok(n)) => (200, Bytes::from(vec![b'x'; n])),
        _ => (404, Bytes::from_static(b"not found")),
    };
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = http::StatusCode::from_u16(status).unwrap();
    if path == "/close" {
        resp.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
    Ok(resp)
}

/// The server's TCP socket, counted under TLS. What the server writes once the client has closed (its
/// close_notify alert) is not counted: no client can have read it.
struct Counted {
    inner: TcpStream,
    counters: Arc<Counters>,
    client_closed: bool,
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let room = buf.remaining() > 0;
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.counters.read.fetch_add(n as u64, Ordering::SeqCst);
        if matches!(res, Poll::Ready(Ok(()))) && n == 0 && room {
            self.client_closed = true;
        }
        res
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let (Poll::Ready(Ok(n)), false) = (&res, self.client_closed) {
            self.counters.written.fetch_add(*n as u64, Ordering::SeqCst);
        }
        res
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A TCP listener that accepts and never says a word: a TLS handshake that stalls.
fn silent_listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/ok", listener.local_addr().unwrap());
    (listener, url)
}

// ---------------------------------------------------------------------------------------------------------
// Library level: planrun::http::Client
// ---------------------------------------------------------------------------------------------------------

fn get(url: &str) -> WireRequest {
    let target = Target::absolute(url.to_string()).unwrap();
    WireRequest {
        method: http::Method::GET,
        headers: vec![(http::header::HOST, target.host.clone())],
        target,
        body: Bytes::new(),
        version: Default::default(),
    }
}

/// One request on a runtime of its own (the servers run on theirs), with a timeout of 10 s.
fn fetch(client: &mut Client, url: &str) -> Exchange {
    fetch_within(client, url, Duration::from_secs(10))
}

fn fetch_within(client: &mut Client, url: &str, timeout: Duration) -> Exchange {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(client.execute(&get(url), timeout, true, true))
}

fn client(settings: &TlsSettings) -> Client {
    Client::with_tls(false, 1 << 20, tls_config(settings))
}

fn assert_tls_failure(ex: &Exchange, starts_with: &str) {
    let f = ex.result.as_ref().expect_err("the request must fail");
    assert_eq!(f.kind, ErrorKind::Tls, "{f:?}");
    assert!(f.message.starts_with(starts_with), "message {:?} does not start with {starts_with:?}", f.message);
}

fn assert_ok(ex: &Exchange) {
    let resp = ex.result.as_ref().unwrap_or_else(|f| panic!("the request failed: {f:?}"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body.as_deref(), Some(&b"ok"[..]));
}

/// A PEM file in `dir`.
fn pem(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    dir.write(name, text)
}

#[test]
fn default_verification_refuses_a_self_signed_certificate() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let mut client = Client::new(false, 1 << 20);
    let ex = fetch(&mut client, &server.url("/ok"));
    assert_tls_failure(&ex, "TLS handshake failed: invalid peer certificate: UnknownIssuer");
    assert!(ex.connect > Duration::ZERO && ex.connect <= ex.elapsed, "{ex:?}");
    drop(client);
    server.settle();
    assert_eq!(server.get(|c| &c.requests), 0);
    // The handshake's bytes are the failed sample's: the ClientHello (and the alert) out, the server's flight in.
    assert!(ex.sent > 0 && ex.bytes > 0, "{ex:?}");
    assert_eq!(ex.bytes, server.get(|c| &c.written), "bytes = what the server wrote");
    assert_eq!(ex.sent, server.get(|c| &c.read), "sent = what the server read");
}

#[test]
fn a_trusted_ca_verifies_the_server_and_wire_bytes_are_counted() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_ca");
    let ca = pem(&dir, "ca.pem", &pki.ca.cert_pem);
    let server = TlsServer::start(&pki.server, None);
    let mut client = client(&TlsSettings { ca: Some(ca), ..Default::default() });
    // One runtime for both requests: the kept-alive connection's socket belongs to it.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let timeout = Duration::from_secs(10);
    let first = rt.block_on(client.execute(&get(&server.url("/ok")), timeout, true, true));
    assert_ok(&first);
    assert!(first.connect > Duration::ZERO, "the handshake is connect time: {first:?}");
    assert!(first.latency <= first.elapsed);
    let second = rt.block_on(client.execute(&get(&server.url("/bytes/100000")), timeout, true, true));
    let resp = second.result.as_ref().expect("the second request succeeds");
    assert_eq!(resp.body.as_ref().map(|b| b.len()), Some(100_000));
    assert_eq!(second.connect, Duration::ZERO, "a kept-alive TLS connection is reused");
    assert!(second.bytes > 100_000, "TLS records carry the body and more: {second:?}");
    drop(client);
    server.settle();
    assert_eq!((server.get(|c| &c.accepted), server.get(|c| &c.handshakes)), (1, 1));
    assert_eq!(first.bytes + second.bytes, server.get(|c| &c.written), "every byte the server wrote, once");
    assert_eq!(first.sent + second.sent, server.get(|c| &c.read), "every byte the server read, once");
}

/// Like browsers and JMeter threads, a virtual user resumes its own TLS sessions; another user of the same run
/// (sharing the run's configuration) makes its own full handshake, as a separate client would.
#[test]
fn tls_sessions_are_resumed_by_their_own_user_only() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_resume");
    let ca = pem(&dir, "ca.pem", &pki.ca.cert_pem);
    let server = TlsServer::start(&pki.server, None);
    let run = tls_config(&TlsSettings { ca: Some(ca), ..Default::default() }).unwrap();
    let mut one = Client::with_tls(false, 1 << 20, Ok(run.clone()));
    let mut two = Client::with_tls(false, 1 << 20, Ok(run));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let timeout = Duration::from_secs(10);
    for user in [1, 1, 2] {
        let client = if user == 1 { &mut one } else { &mut two };
        let ex = rt.block_on(client.execute(&get(&server.url("/close")), timeout, true, true));
        assert_ok(&ex);
        assert!(ex.connect > Duration::ZERO, "the server closed the connection: each request opens one");
    }
    assert_eq!(server.get(|c| &c.handshakes), 3);
    assert_eq!(server.get(|c| &c.resumed), 1, "only user one's second connection resumed a session");
}

/// A user that goes back and forth between servers resumes its session with each of them: it remembers the
/// sessions of several server names, not only of the last one.
#[test]
fn a_user_resumes_its_sessions_with_each_server_it_talks_to() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_resume_many");
    let ca = pem(&dir, "ca.pem", &pki.ca.cert_pem);
    let servers = [TlsServer::start(&pki.server, None), TlsServer::start(&pki.server, None)];
    // Two server names (the certificate is valid for both), as sessions are kept by name.
    let urls = [
        format!("https://localhost:{}/close", servers[0].addr.port()),
        format!("https://127.0.0.1:{}/close", servers[1].addr.port()),
    ];
    let mut user = Client::with_tls(false, 1 << 20, tls_config(&TlsSettings { ca: Some(ca), ..Default::default() }));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for round in 0..3 {
        for url in &urls {
            let ex = rt.block_on(user.execute(&get(url), Duration::from_secs(10), true, true));
            assert_ok(&ex);
            assert!(
                ex.connect > Duration::ZERO,
                "round {round}: the server closed the connection: each request opens one"
            );
        }
    }
    for server in &servers {
        assert_eq!(server.get(|c| &c.handshakes), 3);
        assert_eq!(server.get(|c| &c.resumed), 2, "each connection after the first to a server resumed a session");
    }
}

/// Bodies far larger than a TLS record, both ways, on one kept connection: a request body is sent as many
/// records and a response read from records that arrive in parts, request after request.
#[test]
fn large_bodies_cross_tls_both_ways_on_one_connection() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let mut client = client(&TlsSettings { insecure: true, ..Default::default() });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let timeout = Duration::from_secs(10);
    let (mut bytes, mut sent) = (0, 0);
    for size in [1usize, 5_000, 16_384, 16_385, 300_000, 1_000_000] {
        let mut post = get(&server.url("/upload"));
        post.method = http::Method::POST;
        post.body = Bytes::from(vec![b'y'; size]);
        let ex = rt.block_on(client.execute(&post, timeout, true, true));
        let resp = ex.result.as_ref().unwrap_or_else(|f| panic!("POST of {size} bytes failed: {f:?}"));
        assert_eq!(resp.body.as_deref(), Some(size.to_string().as_bytes()), "the server got the whole body");
        let ex2 = rt.block_on(client.execute(&get(&server.url(&format!("/bytes/{size}"))), timeout, true, true));
        let resp = ex2.result.as_ref().unwrap_or_else(|f| panic!("GET of {size} bytes failed: {f:?}"));
        assert_eq!(resp.body.as_ref().map(|b| b.len()), Some(size), "the whole body came");
        assert!(resp.body.as_ref().unwrap().iter().all(|&b| b == b'x'));
        bytes += ex.bytes + ex2.bytes;
        sent += ex.sent + ex2.sent;
    }
    drop(client);
    server.settle();
    assert_eq!((server.get(|c| &c.accepted), server.get(|c| &c.requests)), (1, 12), "one connection for all");
    assert_eq!(bytes, server.get(|c| &c.written), "every byte the server wrote, once");
    assert_eq!(sent, server.get(|c| &c.read), "every byte the server read, once");
}

/// A server that speaks only TLS 1.2 is resumed too (by session id or ticket, not by a TLS 1.3 ticket).
#[test]
fn a_tls12_session_is_resumed_by_its_user() {
    let pki = pki();
    let server = TlsServer::start_with(&pki.self_signed, None, &[&rustls::version::TLS12]);
    let mut user = client(&TlsSettings { insecure: true, ..Default::default() });
    for _ in 0..3 {
        let ex = fetch(&mut user, &server.url("/close"));
        assert_ok(&ex);
        assert!(ex.connect > Duration::ZERO, "the server closed the connection: each request opens one");
    }
    assert_eq!(server.get(|c| &c.handshakes), 3);
    assert_eq!(server.get(|c| &c.resumed), 2, "each connection after the first resumed the session");
}

#[test]
fn insecure_accepts_a_self_signed_certificate() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let mut client = client(&TlsSettings { insecure: true, ..Default::default() });
    assert_ok(&fetch(&mut client, &server.url("/ok")));
}

#[test]
fn a_certificate_for_another_name_is_refused() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_name");
    let ca = pem(&dir, "ca.pem", &pki.ca.cert_pem);
    let server = TlsServer::start(&pki.localhost_only, None);
    let mut client = client(&TlsSettings { ca: Some(ca), ..Default::default() });
    let ex = fetch(&mut client, &server.url("/ok"));
    assert_tls_failure(&ex, "TLS handshake failed: invalid peer certificate: certificate not valid for name");
}

#[test]
fn mutual_tls_sends_the_client_certificate() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_mtls");
    let ca = pem(&dir, "ca.pem", &pki.ca.cert_pem);
    let cert = pem(&dir, "client.pem", &pki.client.cert_pem);
    let key = pem(&dir, "client.key", &pki.client.key.serialize_pem());
    let server = TlsServer::start(&pki.server, Some(&pki.ca));

    let mut without = client(&TlsSettings { ca: Some(ca.clone()), ..Default::default() });
    let ex = fetch(&mut without, &server.url("/ok"));
    // TLS 1.3: the client's handshake is over before the server refuses it, so the refusal is an alert that
    // comes back instead of the response.
    assert_tls_failure(&ex, "TLS error: received fatal alert: CertificateRequired");

    let settings = TlsSettings { ca: Some(ca), client_cert: Some(cert), client_key: Some(key), ..Default::default() };
    let mut with = client(&settings);
    assert_ok(&fetch(&mut with, &server.url("/ok")));
    assert_eq!(server.get(|c| &c.with_client_cert), 1);
    assert_eq!(server.get(|c| &c.requests), 1, "the request without a certificate never reached the server");
}

#[test]
fn https_to_a_plain_http_server_fails_the_handshake_and_says_why() {
    let server = common::Server::start();
    let mut client = client(&TlsSettings::default());
    let url = format!("https://127.0.0.1:{}/ok", server.port());
    let ex = fetch(&mut client, &url);
    assert_tls_failure(&ex, "TLS handshake failed: ");
    assert_eq!(server.count(), 0, "no request was understood");
}

#[test]
fn a_stalled_handshake_is_a_connect_timeout() {
    let (_listener, url) = silent_listener();
    let mut client = client(&TlsSettings::default());
    let ex = fetch_within(&mut client, &url, Duration::from_millis(300));
    let f = ex.result.as_ref().expect_err("no handshake, no response");
    assert_eq!(f.kind, ErrorKind::ConnectTimeout, "{f:?}");
    assert_eq!(f.message, "Connect timed out after 300 ms");
    assert!(ex.sent > 0, "the ClientHello went out and is counted: {ex:?}");
    assert!(ex.connect >= Duration::from_millis(300), "the stalled handshake is connect time: {ex:?}");
    assert_eq!(ex.bytes, 0);
}

#[test]
fn unusable_tls_settings_fail_https_requests_only() {
    let dir = TempDir::new("tls_lib_unusable");
    let junk = pem(&dir, "junk.pem", "this is not PEM\n");
    let settings = TlsSettings { ca: Some(junk), ..Default::default() };
    let e = tls_config(&settings).expect_err("a CA file without a certificate");
    assert!(e.to_string().contains("junk.pem"), "{e}");
    let mut client = Client::with_tls(false, 1 << 20, Err(e));
    let ex = fetch(&mut client, "https://127.0.0.1:9/ok");
    assert_tls_failure(&ex, "TLS settings cannot be used: tls.ca: `");
    assert_eq!(ex.connect, Duration::ZERO, "nothing was connected");
    let plain = common::Server::start();
    assert_ok(&fetch(&mut client, &format!("{}/ok", plain.url())));
}

#[test]
fn a_client_key_that_does_not_match_its_certificate_is_refused() {
    let pki = pki();
    let dir = TempDir::new("tls_lib_mismatch");
    let cert = pem(&dir, "client.pem", &pki.client.cert_pem);
    let other_key = pem(&dir, "other.key", &pki.server.key.serialize_pem());
    let settings = TlsSettings { client_cert: Some(cert), client_key: Some(other_key), ..Default::default() };
    let e = tls_config(&settings).expect_err("the key is not the certificate's").to_string();
    assert!(e.starts_with("tls.client_key: `") && e.contains("was refused"), "{e}");
}

// ---------------------------------------------------------------------------------------------------------
// Binary level: planrun run
// ---------------------------------------------------------------------------------------------------------

fn plan(url: &str, tls: &str) -> String {
    format!(
        r#"
name: tls
defaults:
  timeout: 5s
{tls}
thread_groups:
  - name: g
    threads: 2
    loops: 2
    steps:
      - name: get
        request: {{ url: "{url}" }}
"#
    )
}

fn run(test: &str, pki: &Pki, server: &TlsServer, tls: &str) -> common::Jtl {
    let dir = TempDir::new(test);
    dir.write("ca.pem", &pki.ca.cert_pem);
    dir.write("client.pem", &pki.client.cert_pem);
    dir.write("client.key", pki.client.key.serialize_pem());
    let plan = dir.write("plan.yaml", plan(&server.url("/ok"), tls));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 4, "{}", jtl.text);
    jtl
}

fn assert_all_ok(jtl: &common::Jtl) {
    for row in &jtl.rows {
        assert_eq!((row["responseCode"].as_str(), row["success"].as_str()), ("200", "true"), "{row:?}");
        assert!(num(row, "bytes") > 0 && num(row, "sentBytes") > 0, "{row:?}");
    }
}

/// Passes without any wiring: a client with no TLS settings verifies against Mozilla's roots.
#[test]
fn the_binary_refuses_a_self_signed_certificate_by_default() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let jtl = run("tls_bin_default", &pki, &server, "");
    for row in &jtl.rows {
        assert_eq!(row["success"], "false", "{row:?}");
        assert_eq!(row["responseCode"], "Non HTTP response code: Tls", "{row:?}");
        assert_eq!(
            row["responseMessage"],
            "Non HTTP response message: TLS handshake failed: invalid peer certificate: UnknownIssuer"
        );
        assert!(num(row, "sentBytes") > 0 && num(row, "bytes") > 0, "the handshake's bytes: {row:?}");
    }
    assert_eq!(server.get(|c| &c.requests), 0);
}

/// Needs `Client::with_tls` wired in src/run/vuser.rs.
#[test]
fn the_binary_trusts_the_plan_ca() {
    let pki = pki();
    let server = TlsServer::start(&pki.server, None);
    let jtl = run("tls_bin_ca", &pki, &server, "  tls: { ca: ca.pem }");
    assert_all_ok(&jtl);
    // Two users, one kept-alive connection each; the rows hold every byte of both, handshakes included.
    assert_eq!(server.get(|c| &c.handshakes), 2);
    server.settle();
    let sum = |col: &str| jtl.rows.iter().map(|r| num(r, col)).sum::<u64>();
    assert_eq!(sum("bytes"), server.get(|c| &c.written), "{}", jtl.text);
    assert_eq!(sum("sentBytes"), server.get(|c| &c.read), "{}", jtl.text);
}

/// Needs `Client::with_tls` wired in src/run/vuser.rs.
#[test]
fn the_binary_with_insecure_accepts_a_self_signed_certificate() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let jtl = run("tls_bin_insecure", &pki, &server, "  tls: { insecure: true }");
    assert_all_ok(&jtl);
}

/// Needs `Client::with_tls` wired in src/run/vuser.rs.
#[test]
fn the_binary_sends_the_client_certificate() {
    let pki = pki();
    let server = TlsServer::start(&pki.server, Some(&pki.ca));
    let tls = "  tls: { ca: ca.pem, client_cert: client.pem, client_key: client.key }";
    let jtl = run("tls_bin_mtls", &pki, &server, tls);
    assert_all_ok(&jtl);
    assert_eq!(server.get(|c| &c.with_client_cert), 4);
}

// ---------------------------------------------------------------------------------------------------------
// Hostile servers after the handshake: whatever they send, the request ends as a failure with its reason
// ---------------------------------------------------------------------------------------------------------

/// What a hostile server does once the handshake is over and it has read the request.
#[derive(Clone, Copy, Debug)]
enum Misdeed {
    /// Answers in cleartext on the TLS connection.
    Cleartext,
    /// Sends a record header announcing 65,535 bytes, more than a TLS record may hold.
    OversizeRecord,
    /// Sends the first 3 bytes of a record header and closes.
    HalfHeaderThenClose,
    /// Sends the first 3 bytes of a record header and says nothing more.
    HalfHeaderThenStall,
    /// Sends a head announcing 100,000 bytes, 5,000 of them, and closes without close_notify.
    ShortBodyNoCloseNotify,
    /// Resets the connection (SO_LINGER 0) instead of answering.
    Reset,
}

/// One connection at a time: a TLS handshake with `identity`, the request read, then the misdeed.
fn hostile_server(identity: &Identity, misdeed: Misdeed) -> (Runtime, SocketAddr) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![identity.cert.clone()], identity.key_der())
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                match misdeed {
                    Misdeed::Cleartext => {
                        let tcp = tls.get_mut().0;
                        let _ = tcp.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    Misdeed::OversizeRecord => {
                        let tcp = tls.get_mut().0;
                        let mut record = vec![0x17, 0x03, 0x03, 0xff, 0xff];
                        record.extend_from_slice(&[0xab; 4096]);
                        let _ = tcp.write_all(&record).await;
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    Misdeed::HalfHeaderThenClose => {
                        let _ = tls.get_mut().0.write_all(&[0x17, 0x03, 0x03]).await;
                    }
                    Misdeed::HalfHeaderThenStall => {
                        let _ = tls.get_mut().0.write_all(&[0x17, 0x03, 0x03]).await;
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    Misdeed::ShortBodyNoCloseNotify => {
                        let mut response = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".to_vec();
                        response.extend_from_slice(&[b'x'; 5000]);
                        let _ = tls.write_all(&response).await;
                        let _ = tls.flush().await;
                    }
                    Misdeed::Reset => {
                        let _ = tls.get_mut().0.set_zero_linger();
                    }
                }
            });
        }
    });
    (rt, addr)
}

#[test]
fn a_hostile_server_after_the_handshake_fails_the_request_with_its_reason() {
    let pki = pki();
    let cases = [
        (Misdeed::Cleartext, ErrorKind::Tls),
        (Misdeed::OversizeRecord, ErrorKind::Tls),
        (Misdeed::HalfHeaderThenClose, ErrorKind::ConnectionReset),
        (Misdeed::HalfHeaderThenStall, ErrorKind::ReadTimeout),
        (Misdeed::ShortBodyNoCloseNotify, ErrorKind::ConnectionReset),
        (Misdeed::Reset, ErrorKind::ConnectionReset),
    ];
    for (misdeed, kind) in cases {
        let (rt, addr) = hostile_server(&pki.self_signed, misdeed);
        let mut client = client(&TlsSettings { insecure: true, ..Default::default() });
        let url = format!("https://{addr}/ok");
        let started = std::time::Instant::now();
        let ex = fetch_within(&mut client, &url, Duration::from_secs(2));
        // A generous guard against a hang, not a measurement.
        assert!(started.elapsed() < Duration::from_secs(20), "{misdeed:?} took {:?}", started.elapsed());
        let failure = ex.result.as_ref().expect_err(&format!("{misdeed:?} must fail the request"));
        eprintln!("{misdeed:?}: {:?} {}", failure.kind, failure.message);
        assert_eq!(failure.kind, kind, "{misdeed:?}: {failure:?}");
        assert!(!failure.message.is_empty(), "{misdeed:?}: no reason given");
        rt.shutdown_background();
    }
}

/// Many users on one thread share its TLS buffers: records of each connection, cut anywhere by the reads,
/// reach only their own connection, and every byte is counted once.
#[test]
fn users_on_one_thread_read_large_bodies_over_tls_at_once() {
    let pki = pki();
    let server = TlsServer::start(&pki.self_signed, None);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let users = 16usize;
    let totals = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for user in 0..users {
            let mut client = client(&TlsSettings { insecure: true, ..Default::default() });
            let (upload, download) = (server.url("/upload"), server.url(&format!("/bytes/{}", 70_001 + user * 7_919)));
            set.spawn(async move {
                let timeout = Duration::from_secs(20);
                let (mut bytes, mut sent) = (0, 0);
                for round in 0..3 {
                    let size = 40_000 + user * 1_231 + round;
                    let mut post = get(&upload);
                    post.method = http::Method::POST;
                    post.body = Bytes::from(vec![b'y'; size]);
                    let ex = client.execute(&post, timeout, true, true).await;
                    let resp = ex.result.as_ref().unwrap_or_else(|f| panic!("user {user}: POST failed: {f:?}"));
                    assert_eq!(resp.body.as_deref(), Some(size.to_string().as_bytes()), "user {user}");
                    let ex2 = client.execute(&get(&download), timeout, true, true).await;
                    let resp = ex2.result.as_ref().unwrap_or_else(|f| panic!("user {user}: GET failed: {f:?}"));
                    assert_eq!(resp.body.as_ref().map(|b| b.len()), Some(70_001 + user * 7_919), "user {user}");
                    bytes += ex.bytes + ex2.bytes;
                    sent += ex.sent + ex2.sent;
                }
                (bytes, sent)
            });
        }
        let (mut bytes, mut sent) = (0, 0);
        while let Some(done) = set.join_next().await {
            let (b, s) = done.unwrap();
            bytes += b;
            sent += s;
        }
        (bytes, sent)
    });
    drop(rt);
    server.settle();
    assert_eq!(server.get(|c| &c.accepted), users as u64, "one connection a user");
    assert_eq!(server.get(|c| &c.requests), users as u64 * 6, "every request reached the server");
    assert_eq!(totals.0, server.get(|c| &c.written), "every byte the server wrote, once");
    assert_eq!(totals.1, server.get(|c| &c.read), "every byte the server read, once");
}
