//! The library's front door: a plan file in, a compiled graph (and its stub, listening) out.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use crate::compile::{compile, Graph};
use crate::diag::Warnings;
use crate::http::Proxies;
use crate::mask::MIN_SECRET_LEN;
use crate::plan::{PlanError, PlanFile, PlanOptions};
use crate::stub::{StubError, StubHandle};

/// The address the stub of a plan listens on: loopback, a free port.
const STUB_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

/// A plan ready to run.
pub struct ReadyPlan {
    /// The execution graph.
    pub graph: Arc<Graph>,
    /// The plan's stub, listening, when it has one and it was asked to start.
    pub stub: Option<StubHandle>,
}

/// Why a plan cannot run.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The plan is unreadable or invalid.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The plan's stub is unreadable, invalid, or could not listen.
    #[error(transparent)]
    Stub(#[from] StubError),
    /// The plan's TLS files cannot be used (not PEM, a key that does not match its certificate).
    #[error("defaults.tls: {0}")]
    Tls(#[from] crate::http::TlsError),
    /// A proxy the environment names cannot be used.
    #[error(transparent)]
    Proxy(#[from] crate::http::ProxyError),
}

/// Whether to start the plan's stub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubMode {
    /// Start it on a free loopback port (run, dry-run).
    Start,
    /// Only check it (validate): `stub.url` is a placeholder.
    CheckOnly,
}

/// Reads, validates and compiles a plan, starting its stub first when asked (its URL is `stub.url`).
/// What looks wrong but does not stop the plan goes to `warnings`, whether the plan is ready or not.
pub async fn prepare(
    path: &Path,
    mut opts: PlanOptions,
    mode: StubMode,
    warnings: &mut Warnings,
) -> Result<ReadyPlan, PrepareError> {
    let file = PlanFile::read(path)?;
    warnings.items.extend(file.warnings(&opts).items);
    let mut stub = None;
    if let Some(stub_path) = file.stub_path(&opts.overrides)? {
        let config = crate::stub::load(&stub_path)?;
        match mode {
            StubMode::Start => {
                let handle = crate::stub::start(config, STUB_ADDR).await?;
                opts.stub_url = Some(handle.url());
                stub = Some(handle);
            }
            StubMode::CheckOnly => opts.stub_url = Some("http://127.0.0.1:0".into()),
        }
    }
    let mut plan = file.validate(&opts)?;
    warnings.items.extend(crate::plan::load_warnings(&plan).items);
    let proxies = Proxies::resolve(opts.proxy.as_ref(), plan.defaults.proxy.as_ref(), |v| std::env::var(v).ok())?;
    // The proxy's credentials are masked wherever planrun writes, as the plan's secrets are.
    let credentials = proxies.each().flat_map(|p| p.secrets()).filter(|s| s.chars().count() >= MIN_SECRET_LEN);
    plan.secrets.values.extend(credentials.cloned());
    plan.defaults.proxies = Arc::new(proxies);
    let graph = compile(plan);
    if graph.defaults.tls != Default::default() {
        // Checked once here so that a bad certificate or key stops the run before anything is sent.
        crate::http::tls_config(&graph.defaults.tls)?;
    }
    Ok(ReadyPlan { graph: Arc::new(graph), stub })
}
