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
    Run(Box<RunArgs>),
    /// Parse, validate and compile a plan; send nothing. Exit 0 or 2.
    Validate(PlanArgs),
    /// Print the first requests of each group exactly as they would go on the wire; send nothing.
    DryRun(DryRunArgs),
    /// Serve a stub target.
    Stub(StubArgs),
    /// Read a JTL CSV (planrun's or JMeter's) or JSON lines file: print the summary, write an HTML report.
    Report(ReportArgs),
    /// Compare two results (JTL, JSON lines or summary JSON) per label: ratios and a statistical verdict.
    Compare(CompareArgs),
    /// Merge result files (the segments of one test) into one, in timeStamp order; print its summary.
    Merge(MergeArgs),
    /// Print the plan format's JSON Schema (draft-07), for editors and for checking plans.
    Schema,
    /// Convert a JMeter test plan (.jmx), a browser recording (.har), a Postman collection or curl commands into a planrun plan; warnings name what is not converted.
    Import(ImportArgs),
    /// Print a shell's completion script: `planrun completions bash > /etc/bash_completion.d/planrun`.
    Completions(super::shell::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command into a directory.
    Man(super::shell::ManArgs),
}

/// The plan and what the command line adds to it.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The plan file.
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub plan: PathBuf,
    /// Set a property: -D name=value (repeatable).
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = super::parse_define)]
    pub define: Vec<(String, String)>,
    /// The run's seed (wins over the plan's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Send every request through this http:// proxy (`http://user:password@host:port` adds
    /// Proxy-Authorization), or `none` for no proxy; wins over `defaults.proxy` and HTTP_PROXY, HTTPS_PROXY,
    /// ALL_PROXY (NO_PROXY still applies).
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    #[command(flatten)]
    pub files: PropertyFilesArgs,
}

/// Property files that set what -D sets: -D wins over them, a later file over an earlier one.
#[derive(Debug, Args)]
pub(crate) struct PropertyFilesArgs {
    /// Read properties from an environment file: NAME=VALUE lines, as docker's --env-file reads them
    /// (repeatable; see docs/plan.md).
    #[arg(long = "env-file", value_name = "FILE")]
    pub env_file: Vec<PathBuf>,
    /// Read properties from a Java properties file, as JMeter's -q (repeatable; see docs/plan.md).
    #[arg(short = 'p', long = "properties", value_name = "FILE.properties")]
    pub properties: Vec<PathBuf>,
    /// The --env-file and -p files in the order given on the command line.
    #[arg(skip)]
    pub ordered: Vec<(crate::plan::PropertyFormat, PathBuf)>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The JTL file (default: results/<plan name>-<UTC yyyymmdd-HHMMSS>.jtl).
    #[arg(value_parser = output_file, short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write JSON lines, one object per sample.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Add the rows to the JTL and JSON lines files that exist, as JMeter does, instead of replacing them.
    #[arg(long)]
    pub append: bool,
    /// For machines: no progress and no notes on stderr, only warnings and errors (the exit code tells the
    /// outcome; the summary stays on stdout).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub summary: SummaryArgs,
    #[command(flatten)]
    pub report: ReportArg,
    /// The JTL's timeStamp: `ms` since the epoch, or a date as a JMeter (SimpleDateFormat) pattern like
    /// `yyyy-MM-dd HH:mm:ss.SSS`, in the local time zone (TZ), as jmeter.save.saveservice.timestamp_format.
    #[arg(long, value_name = "PATTERN", default_value = "ms")]
    pub timestamp_format: crate::sink::timestamp::TimestampFormat,
    /// Serve a page that follows the run live on ADDR (default 127.0.0.1:5665): `--dashboard` or
    /// `--dashboard=ADDR` (see docs/outputs.md).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true,
          default_missing_value = crate::dashboard::DEFAULT_ADDR)]
    pub dashboard: Option<SocketAddr>,
    #[command(flatten)]
    pub placement: PlacementArgs,
    #[command(flatten)]
    pub extras: ExtrasArgs,
    #[command(flatten)]
    pub live: Box<super::live::LiveArgs>,
    #[command(flatten)]
    pub ci: CiArgs,
}

/// The statistics written beside the results, by `run`, `report` and `merge`.
#[derive(Debug, Args)]
pub(crate) struct SummaryArgs {
    /// Also write the statistics as JSON (see docs/results.md).
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Also write the per-label table as CSV, with JMeter's Aggregate Report columns.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub summary_csv: Option<PathBuf>,
}

/// The HTML report written beside the results, by `run` and `merge`.
#[derive(Debug, Args)]
pub(crate) struct ReportArg {
    /// Also write the HTML report of the results into this directory (as `planrun report` does).
    #[arg(long = "report", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Where and when the run's users run: a segment of the plan, on how many cores, from which instant.
#[derive(Debug, Args)]
pub(crate) struct PlacementArgs {
    /// Run only segment I of N of the plan (I from 0): users, arrivals, shared data rows and counter values
    /// are dealt round-robin; setup and teardown groups run in segment 0 (see docs/distributed.md).
    #[arg(long, value_name = "I/N")]
    pub segment: Option<crate::segment::Segment>,
    /// Wait for this instant before sending anything: RFC 3339 (2026-12-01T16:00:00Z) or Unix milliseconds.
    #[arg(long, value_name = "TIME", value_parser = super::start_at::parse)]
    pub start_at: Option<std::time::SystemTime>,
    /// Spread the users over N cores, one runtime each (default: every core, less one for the embedded stub).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::run::MAX_CORES))]
    pub cores: Option<u64>,
}

/// What a run records beyond the columns: exchanges on stderr, sub-results, failed bodies.
#[derive(Debug, Args)]
pub(crate) struct ExtrasArgs {
    /// Print each failed sample's request and response heads on stderr; `=full` adds the bodies (2 KiB).
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "heads",
          value_parser = ["heads", "full"])]
    pub http_debug: Option<String>,
    /// Also print the first N requests of the run on stderr, failed or not (as --http-debug does).
    #[arg(long, value_name = "N")]
    pub http_debug_first: Option<u64>,
    /// Write the requests of a followed redirect as JMeter 5's sub-results (label-0, label-1, ...).
    #[arg(long)]
    pub sub_results: bool,
    /// Write each failed response's body (64 KiB, secrets masked) to a file in DIR.
    #[arg(long, value_name = "DIR")]
    pub failed_bodies: Option<PathBuf>,
    /// Add each failed response's body (64 KiB, secrets masked) to its JSON line (with --json).
    #[arg(long, requires = "json")]
    pub json_failed_bodies: bool,
    /// Print at most N failed samples with --http-debug (the first N; the others are counted).
    #[arg(long, value_name = "N", default_value_t = crate::run::DEBUG_MAX)]
    pub http_debug_max: u64,
    /// Keep at most N failed responses' bodies for --failed-bodies and --json-failed-bodies (the first N; the
    /// others are counted).
    #[arg(long, value_name = "N", default_value_t = crate::run::BODIES_MAX)]
    pub failed_bodies_max: u64,
}

impl ExtrasArgs {
    /// The run's options.
    pub fn options(&self) -> crate::run::RunOptions {
        let first = self.http_debug_first.unwrap_or(0);
        let http_debug = (self.http_debug.is_some() || first > 0).then(|| {
            let full = self.http_debug.as_deref() == Some("full");
            crate::run::HttpDebug::new(full, self.http_debug.is_some(), first, self.http_debug_max)
        });
        crate::run::RunOptions {
            sub_results: self.sub_results,
            http_debug,
            failed_bodies: self.failed_bodies.is_some() || self.json_failed_bodies,
            bodies_cap: std::sync::Arc::new(crate::run::Cap::new(self.failed_bodies_max)),
            ..Default::default()
        }
    }
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

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The results: a JTL CSV file (planrun's, or JMeter's 2.13 to 5.x with a header) or planrun JSON lines.
    pub results: PathBuf,
    /// The directory for index.html and summary.json (default: `<RESULTS without extension>-report`).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub summary: SummaryArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The baseline: a JTL, JSON lines or summary JSON file.
    pub a: PathBuf,
    /// The candidate, compared with A (ratios are B/A).
    pub b: PathBuf,
    /// Write the comparison as HTML, with both distributions overlaid per label.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the comparison as JSON.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Exit 1 when a label's (or TOTAL's) --metric got worse by more than PCT percent.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// The figure --fail-if-slower watches: min, mean, p50, p90, p95, p99, p99.9, max or throughput.
    #[arg(long, default_value = "p95", value_parser = crate::report::compare::watched_metric)]
    pub metric: crate::metric::Metric,
    #[command(flatten)]
    pub ci: CiArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The result files: all JTL (with the same header line) or all JSON lines.
    #[arg(required = true, value_name = "RESULTS")]
    pub inputs: Vec<PathBuf>,
    /// The merged file.
    #[arg(value_parser = output_file, short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    #[command(flatten)]
    pub summary: SummaryArgs,
    #[command(flatten)]
    pub report: ReportArg,
    /// Judge this plan's thresholds on the merged rows (exit 1 when one fails), and refuse rows whose
    /// label the plan does not have.
    #[arg(long, value_name = "PLAN.yaml")]
    pub plan: Option<PathBuf>,
    /// Set a property of --plan: -D name=value (repeatable), as the segments were run with.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = super::parse_define, requires = "plan")]
    pub define: Vec<(String, String)>,
    /// Read properties of --plan from environment files (--env-file) and properties files (-p), as the
    /// segments were run with.
    #[command(flatten)]
    pub files: PropertyFilesArgs,
    /// The look-behind window for rows out of timeStamp order, MiB for all inputs together.
    #[arg(long, value_name = "MIB", default_value_t = crate::merge::DEFAULT_WINDOW_MIB,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub window_mib: u64,
    /// Also write --plan's thresholds judged on the merged rows as JUnit XML, a test case each.
    #[arg(value_parser = output_file, long, value_name = "FILE", requires = "plan")]
    pub junit: Option<PathBuf>,
    /// Also write the summary (and --plan's thresholds) as Markdown.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub summary_md: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The JMeter plan (.jmx), browser recording (.har), Postman collection, OpenAPI 3 document (.yaml,
    /// .json), or file of curl commands (as "Copy as cURL" writes them).
    #[arg(value_name = "FILE", required_unless_present = "curl", conflicts_with = "curl")]
    pub jmx: Option<PathBuf>,
    /// A curl command line to convert instead of a file: --curl 'curl -X POST https://...'.
    #[arg(long, value_name = "COMMAND")]
    pub curl: Option<String>,
    /// HAR: only the entries to this host (repeatable).
    #[arg(long, value_name = "HOST")]
    pub include_host: Vec<String>,
    /// HAR: leave out the entries whose URL matches this regular expression (repeatable).
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// HAR: keep images, fonts, styles, scripts and analytics, which are left out by default.
    #[arg(long)]
    pub keep_static: bool,
    /// HAR: no think steps from the gaps between entries.
    #[arg(long)]
    pub no_think: bool,
    /// Postman: the environment file whose values the collection's variables take.
    #[arg(long, value_name = "FILE")]
    pub postman_env: Option<PathBuf>,
    /// Write the plan to this file (default: stdout).
    #[arg(value_parser = output_file, short = 'o', long = "output", value_name = "PLAN.yaml")]
    pub output: Option<PathBuf>,
    /// Exit 2, writing nothing, when any element is not converted as JMeter runs it.
    #[arg(long)]
    pub strict: bool,
    /// OpenAPI: only the operation with this operationId (repeatable).
    #[arg(long, value_name = "ID")]
    pub operation: Vec<String>,
    /// OpenAPI: only the operations with this tag (repeatable).
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,
}

/// The verdicts for CI systems, by `run` and `compare` (`merge` has its own, tied to `--plan`).
#[derive(Debug, Args)]
pub(crate) struct CiArgs {
    /// Also write the verdicts as JUnit XML: a test case per threshold (per label for compare), for CI.
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the summary and the verdicts as Markdown (for $GITHUB_STEP_SUMMARY, a merge request).
    #[arg(value_parser = output_file, long, value_name = "FILE")]
    pub summary_md: Option<PathBuf>,
}

/// A first argument that is no subcommand and no plan file, but close to a subcommand's name.
#[derive(Debug, thiserror::Error)]
#[error("unknown subcommand '{given}'; did you mean '{suggestion}'?")]
pub struct UnknownSubcommand {
    /// The argument as typed.
    pub given: String,
    /// The subcommand it is closest to.
    pub suggestion: String,
}

/// `planrun PLAN.yaml ...` means `planrun run PLAN.yaml ...`. A first argument that is neither a subcommand
/// nor a file, does not look like a path (no `/`, no `.`), and is a likely typo of a subcommand
/// (`valdiate`) is refused with the subcommand it resembles, rather than read as a plan to run.
pub fn with_default_command(mut args: Vec<String>) -> Result<Vec<String>, UnknownSubcommand> {
    use clap::CommandFactory;
    let Some(first) = args.get(1) else { return Ok(args) };
    let cli = Cli::command();
    let names: Vec<&str> = cli
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .chain(["help"])
        .collect();
    if first.starts_with('-') || names.contains(&first.as_str()) {
        return Ok(args);
    }
    let path_like = first.contains(['/', '.', std::path::MAIN_SEPARATOR]) || std::path::Path::new(first).exists();
    if !path_like {
        if let Some(near) = crate::diag::did_you_mean(first, names.iter().copied()) {
            return Err(UnknownSubcommand { given: first.clone(), suggestion: near.to_string() });
        }
    }
    args.insert(1, "run".into());
    Ok(args)
}

/// An output file's path: `-` is standard output, as most tools read it (`/dev/stdout`, written as
/// docs/results.md says), not a file named `-`.
fn output_file(value: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(if value == "-" { "/dev/stdout" } else { value }))
}
