//! TLS for https targets: rustls with the ring provider, Mozilla's roots bundled (a fresh CI machine may have
//! no system certificates, and a bundle behaves the same everywhere), certificate verification on unless the
//! plan says `insecure: true`. One [`ClientConfig`] is built per run: building it reads files and loads
//! ~150 roots, which is no work to repeat per virtual user. Each user then takes a copy with a TLS session
//! cache of its own ([`for_one_user`]), so a user resumes its own sessions, like a browser or a JMeter thread,
//! and never another user's: a thousand users are a thousand clients doing their own full handshakes.
//! That cache ([`UserSessions`]) holds only what the user was given: rustls' own in-memory cache sets aside
//! room for eight tickets a server up front, about 2 KiB a user before the first handshake ends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientSessionStore, Resumption, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, NamedGroup, RootCertStore, SignatureScheme};

/// TLS settings; certificate verification is on unless `insecure`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// Accept any certificate (for self-signed test targets).
    pub insecure: bool,
    /// Extra trusted CA certificates (PEM), resolved relative to the plan.
    pub ca: Option<PathBuf>,
    /// Client certificate chain (PEM) for mutual TLS.
    pub client_cert: Option<PathBuf>,
    /// Client private key (PEM) for mutual TLS.
    pub client_key: Option<PathBuf>,
}

/// A TLS setting that cannot be used: a file that does not read or holds no usable PEM item.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("tls.{key}: cannot read `{}`: {source}", path.display())]
    Read {
        /// The setting (`ca`, `client_cert`, `client_key`).
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is not the PEM it should be.
    #[error("tls.{key}: `{}` holds no usable PEM {what}: {reason}", path.display())]
    Pem {
        /// The setting.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What was looked for: `certificate` or `private key`.
        what: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// rustls refused a certificate or key (a CA that does not parse, a key that does not match).
    #[error("tls.{key}: `{}` was refused: {source}", path.display())]
    Refused {
        /// The setting.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// rustls' reason.
        #[source]
        source: rustls::Error,
    },
}

/// Builds the client configuration for a run's TLS settings: Mozilla's roots plus `ca`, or no verification
/// at all with `insecure`; a client certificate when `client_cert` and `client_key` are given. ALPN offers
/// `h2` and `http/1.1`, as browsers do.
pub fn tls_config(settings: &TlsSettings) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let builder = if settings.insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
    } else {
        let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        if let Some(path) = &settings.ca {
            for cert in certificates("ca", path)? {
                roots.add(cert).map_err(|source| TlsError::Refused { key: "ca", path: path.clone(), source })?;
            }
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match (&settings.client_cert, &settings.client_key) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(certificates("client_cert", cert)?, private_key(key)?)
            .map_err(|source| TlsError::Refused { key: "client_key", path: key.clone(), source })?,
        _ => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The configuration for these settings, built once and shared by every virtual user that asks for it while
/// another still holds it: the users of one run share one, and a later run in the same process (whose files
/// may have changed) builds its own once the earlier run's clients are gone. An error is not remembered.
pub fn shared_tls_config(settings: &TlsSettings) -> Result<Arc<ClientConfig>, TlsError> {
    static SHARED: Mutex<Vec<(TlsSettings, Weak<ClientConfig>)>> = Mutex::new(Vec::new());
    // Held while building, so the users of a run that start together build it once between them.
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    shared.retain(|(_, config)| config.strong_count() > 0);
    if let Some(config) = shared.iter().find(|(s, _)| s == settings).and_then(|(_, c)| c.upgrade()) {
        return Ok(config);
    }
    let config = tls_config(settings)?;
    shared.push((settings.clone(), Arc::downgrade(&config)));
    Ok(config)
}

/// The origins (server names) whose TLS sessions one virtual user remembers; it rarely talks to more than a few.
const SESSIONS_PER_USER: usize = 8;

/// The TLS 1.3 tickets kept for one server name, as rustls' own cache keeps: the newest are used first.
const TICKETS_PER_SERVER: usize = 8;

/// The run's configuration for one virtual user: the same trust and client certificate, and a session cache of
/// the user's own. Cheap: a handful of `Arc`s are cloned.
pub fn for_one_user(run: &ClientConfig) -> Arc<ClientConfig> {
    let mut config = run.clone();
    config.resumption = Resumption::store(Arc::new(UserSessions::default()));
    Arc::new(config)
}

/// One virtual user's TLS sessions: for each of the last [`SESSIONS_PER_USER`] server names it talked to, the
/// key exchange group that server chose, a TLS 1.2 session and up to [`TICKETS_PER_SERVER`] TLS 1.3 tickets.
/// Thousands of users each hold one, so it holds no room it does not use (an empty cache is an empty `Vec`).
#[derive(Default)]
struct UserSessions(Mutex<Vec<ServerSessions>>);

struct ServerSessions {
    name: ServerName<'static>,
    kx_hint: Option<NamedGroup>,
    /// Boxed: 400-odd bytes that a server speaking TLS 1.3 never fills.
    tls12: Option<Box<Tls12ClientSessionValue>>,
    /// Oldest first.
    tls13: Vec<Tls13ClientSessionValue>,
}

impl UserSessions {
    /// What is kept for `name`, when anything is.
    fn with<T>(&self, name: &ServerName<'_>, f: impl FnOnce(&mut ServerSessions) -> T) -> Option<T> {
        let mut servers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        servers.iter_mut().find(|s| s.name == *name).map(f)
    }

    /// What is kept for `name`, made when nothing was (forgetting the server name added first when the user
    /// already remembers [`SESSIONS_PER_USER`]).
    fn edit(&self, name: ServerName<'static>, f: impl FnOnce(&mut ServerSessions)) {
        let mut servers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let i = match servers.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                if servers.len() == SESSIONS_PER_USER {
                    servers.remove(0);
                }
                servers.reserve_exact(1);
                servers.push(ServerSessions { name, kx_hint: None, tls12: None, tls13: Vec::new() });
                servers.len() - 1
            }
        };
        f(&mut servers[i]);
    }
}

impl std::fmt::Debug for UserSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let servers = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("UserSessions").field("servers", &servers.len()).finish()
    }
}

impl ClientSessionStore for UserSessions {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.edit(name, |s| s.kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.with(name, |s| s.kx_hint).flatten()
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(name, |s| s.tls12 = Some(Box::new(value)));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.with(name, |s| s.tls12.as_deref().cloned()).flatten()
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.with(name, |s| s.tls12 = None);
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.edit(name, |s| {
            if s.tls13.len() == TICKETS_PER_SERVER {
                s.tls13.remove(0);
            }
            s.tls13.reserve_exact(1);
            s.tls13.push(value);
        });
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.with(name, |s| s.tls13.pop()).flatten()
    }
}

/// The name the server's certificate must be valid for: a DNS name, or an IP address (sent without SNI).
pub fn server_name(host: &str) -> Option<ServerName<'static>> {
    ServerName::try_from(host.to_string()).ok()
}

fn read(key: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read { key, path: path.to_owned(), source })
}

fn certificates(key: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read(key, path)?;
    let bad = |reason: String| TlsError::Pem { key, path: path.to_owned(), what: "certificate", reason };
    let certs = CertificateDer::pem_slice_iter(&pem).collect::<Result<Vec<_>, _>>().map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no `-----BEGIN CERTIFICATE-----` section".into()));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read("client_key", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| TlsError::Pem {
        key: "client_key",
        path: path.to_owned(),
        what: "private key",
        reason: match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no `-----BEGIN PRIVATE KEY-----` (PKCS#8), `RSA PRIVATE KEY` or `EC PRIVATE KEY` section".into()
            }
            e => e.to_string(),
        },
    })
}

/// `insecure: true`: any certificate for any name is accepted, but the handshake's signatures are still
/// checked, so the connection is encrypted with the key of whoever presented the certificate.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_build_and_are_shared_while_held() {
        let settings = TlsSettings::default();
        let a = shared_tls_config(&settings).unwrap();
        let b = shared_tls_config(&settings).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one configuration while one is held");
        assert_eq!(a.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        let insecure = shared_tls_config(&TlsSettings { insecure: true, ..Default::default() }).unwrap();
        assert!(!Arc::ptr_eq(&a, &insecure), "other settings, another configuration");
    }

    #[test]
    fn unusable_files_say_which_setting_and_why() {
        let dir = std::env::temp_dir().join(format!("planrun-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let missing = dir.join("missing.pem");
        let e = tls_config(&TlsSettings { ca: Some(junk.clone()), ..Default::default() }).unwrap_err().to_string();
        assert!(e.starts_with("tls.ca: `") && e.contains("holds no usable PEM certificate"), "{e}");
        let e = tls_config(&TlsSettings { ca: Some(missing), ..Default::default() }).unwrap_err().to_string();
        assert!(e.starts_with("tls.ca: cannot read `") && e.contains("missing.pem"), "{e}");
        let e = tls_config(&TlsSettings {
            client_cert: Some(junk.clone()),
            client_key: Some(junk.clone()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("tls.client_cert: "), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ip_addresses_and_dns_names_are_server_names() {
        assert!(matches!(server_name("127.0.0.1"), Some(ServerName::IpAddress(_))));
        assert!(matches!(server_name("::1"), Some(ServerName::IpAddress(_))));
        assert!(matches!(server_name("example.com"), Some(ServerName::DnsName(_))));
        assert!(server_name("bad name").is_none());
    }
}
