//! planrun: a declarative HTTP load-test runner.
//!
//! The data flows one way, one module a stage:
//! plan file ([`source`]) -> parsed tree with positions ([`plan::node`]) -> validated plan ([`plan`])
//! -> compiled execution graph ([`compile`]) -> scheduler and virtual users ([`run`]) -> HTTP engine
//! ([`http`]) -> [`sample::Sample`] records on a bounded channel -> sinks ([`sink`]: JTL, JSON lines,
//! statistics) -> reports ([`report`]); requests shown without sending them ([`dry_run`]);
//! result files of several runs (segments, [`segment`]) made into one ([`merge`]); JMeter plans made into
//! planrun plans ([`import`]); figures streamed to time-series databases while the run goes on ([`live`]) and
//! to a page in a browser ([`dashboard`]). A run of a plan with all its outputs is composed in [`session`], for
//! the command line ([`cli`]) and for programs that run plans themselves.
//!
//! The HTTP engine is a floor of its own: it has its own request, target and TLS types and names no plan,
//! run or result type; `compile` and `run` build its requests. No two top-level modules depend on each other,
//! directly or through others: `tests/layers.rs` checks both rules on the source.

pub(crate) mod claim;
pub mod cli;
pub(crate) mod clock;
pub mod compile;
pub(crate) mod csv_scan;
pub(crate) mod dashboard;
pub(crate) mod diag;
pub mod dry_run;
pub(crate) mod duration;
pub(crate) mod files;
pub mod http;
pub(crate) mod import;
pub(crate) mod limits;
pub(crate) mod live;
pub(crate) mod mask;
pub(crate) mod merge;
pub(crate) mod metric;
pub mod pipeline;
pub mod plan;
pub(crate) mod report;
pub mod run;
pub mod sample;
pub(crate) mod segment;
pub mod session;
pub mod sink;
pub mod source;
pub(crate) mod stub;
pub(crate) mod template;
pub(crate) mod url_pool;
