//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// planrun: declarative HTTP load tests with JMeter-compatible results.
#[derive(Debug, Parser)]
#[command(name = "planrun", version, about, after_help = "`planrun PLAN.yaml` is short for `planrun run PLAN.yaml`.")]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a plan: send the load, write the JTL, print the summary.
    Run(RunArgs),
    /// Parse, validate and compile a plan; send nothing. Exit 0 or 2.
    Validate(PlanArgs),
    /// Print the first requests of each group exactly as they would go on the wire; send nothing.
    DryRun(DryRunArgs),
    /// Serve a stub target.
    Stub(StubArgs),
}

/// The plan and what the command line adds to it.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The plan file.
    pub plan: PathBuf,
    /// Set a property: -D name=value (repeatable).
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = super::parse_define)]
    pub define: Vec<(String, String)>,
    /// The run's seed (wins over the plan's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The JTL file (default: results/<plan name>-<UTC yyyymmdd-HHMMSS>.jtl).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write JSON lines, one object per sample.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DryRunArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// How many requests of each group to print.
    #[arg(short = 'n', default_value_t = 3)]
    pub count: usize,
}

#[derive(Debug, Args)]
pub(crate) struct StubArgs {
    /// The stub file.
    pub file: PathBuf,
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
}

/// `planrun PLAN.yaml ...` means `planrun run PLAN.yaml ...`.
pub fn with_default_command(mut args: Vec<String>) -> Vec<String> {
    const COMMANDS: &[&str] = &["run", "validate", "dry-run", "stub", "help"];
    if let Some(first) = args.get(1) {
        if !first.starts_with('-') && !COMMANDS.contains(&first.as_str()) {
            args.insert(1, "run".into());
        }
    }
    args
}
