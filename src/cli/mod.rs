//! The command line: a thin shell over the library. The only place that prints.

mod args;
mod compare;
mod dry_run;
pub mod exit;
mod http_debug;
mod import;
mod live;
mod merge;
mod outputs;
mod placement;
mod prepare;
mod print;
mod progress;
mod property_files;
mod report;
mod run;
mod schema;
mod shell;
mod signals;
mod start_at;
mod stub;
mod validate;

pub use args::{with_default_command, Cli, UnknownSubcommand};
pub use property_files::parse;

use args::Command;

/// Runs the command and returns the process exit code.
pub async fn main(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(a) => run::run(*a).await,
        Command::Validate(a) => validate::validate(a).await,
        Command::DryRun(a) => dry_run::dry_run(a).await,
        Command::Stub(a) => stub::stub(a).await,
        Command::Report(a) => report::report(a),
        Command::Compare(a) => compare::compare(a),
        Command::Merge(a) => merge::merge(a).await,
        Command::Schema => schema::schema(),
        Command::Import(a) => import::import(a),
        Command::Completions(a) => shell::completions(a),
        Command::Man(a) => shell::man(a),
    }
}

/// `--proxy URL` (or `none`), parsed here rather than by clap, whose error would repeat the URL and the
/// password it may hold: a proxy that cannot be used is said without it, and the exit code is 2.
pub(crate) fn proxy_flag(value: Option<&str>) -> Result<Option<crate::http::ProxyChoice>, i32> {
    value
        .map(|v| {
            crate::http::ProxyChoice::parse(v).map_err(|why| {
                print::errln!("error: --proxy: {why}");
                exit::BAD_INPUT
            })
        })
        .transpose()
}

/// Parses `-D name=value`.
pub(crate) fn parse_define(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not name=value")),
    }
}
