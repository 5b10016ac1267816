//! planrun: a declarative HTTP load-test runner.
//!
//! The data flows one way, one module a stage:
//! plan file ([`source`]) -> parsed tree with positions ([`plan::node`]) -> validated plan ([`plan`])
//! -> compiled execution graph ([`compile`]) -> scheduler and virtual users ([`run`]) -> [`sample::Sample`]
//! records on a bounded channel -> sinks ([`sink`]: JTL, JSON lines, statistics) -> reports ([`report`]);
//! result files of several runs (segments, [`segment`]) made into one ([`merge`]); JMeter plans made into
//! planrun plans ([`import`]); figures streamed to time-series databases while the run goes on ([`live`]) and
//! to a page in a browser ([`dashboard`]).

pub mod cli;
pub mod compile;
pub mod dashboard;
pub mod data_set;
pub mod diag;
pub mod duration;
pub mod files;
pub mod import;
pub mod limits;
pub mod live;
pub mod mask;
pub mod merge;
pub mod metric;
pub mod pipeline;
pub mod plan;
pub mod report;
pub mod run;
pub mod sample;
pub mod segment;
pub mod sink;
pub mod source;
pub mod stub;
pub mod template;
