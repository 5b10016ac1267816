//! `--env-file FILE` and `-p FILE.properties`: property files whose values `-D` could set. The values apply
//! in this order, each over the ones before: the plan's defaults, the files in the order given on the
//! command line (a later file over an earlier one, whichever its kind), then `-D`.

use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::args::{Cli, Command, PropertyFilesArgs};
use super::exit;
use super::print::errln;
use crate::plan::{read_property_file, PlanOptions, PropertyFormat};

/// Parses the command line, as `Cli::try_parse_from` does, and keeps the order in which the `--env-file` and
/// `-p` files were given (two options, so two lists in the parsed arguments).
pub fn parse(args: Vec<String>) -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut Cli::command()))?;
    if let Some((_, sub)) = matches.subcommand() {
        let files = match &mut cli.command {
            Command::Run(a) => Some(&mut a.plan.files),
            Command::Validate(a) => Some(&mut a.files),
            Command::DryRun(a) => Some(&mut a.plan.files),
            Command::Merge(a) => Some(&mut a.files),
            _ => None,
        };
        if let Some(files) = files {
            files.ordered = ordered(sub);
        }
    }
    Ok(cli)
}

/// The files of both options, by their place on the command line.
fn ordered(m: &ArgMatches) -> Vec<(PropertyFormat, std::path::PathBuf)> {
    let mut placed = Vec::new();
    for (id, format) in [("env_file", PropertyFormat::Env), ("properties", PropertyFormat::Java)] {
        let Ok(Some(paths)) = m.try_get_many::<std::path::PathBuf>(id) else { continue };
        let places = m.indices_of(id).into_iter().flatten();
        placed.extend(places.zip(paths).map(|(at, path)| (at, (format, path.clone()))));
    }
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, file)| file).collect()
}

impl PropertyFilesArgs {
    /// The plan options: the files' values, then `-D`'s; or, printed, why a file cannot be read (exit 2).
    pub(super) fn options(&self, define: &[(String, String)], seed: Option<u64>) -> Result<PlanOptions, i32> {
        let mut overrides = Vec::new();
        for (format, path) in &self.ordered {
            match read_property_file(path, *format) {
                Ok(values) => overrides.extend(values),
                Err(e) => {
                    errln!("error: {} {e}", format.option());
                    return Err(exit::BAD_INPUT);
                }
            }
        }
        let from_files = overrides.len();
        overrides.extend_from_slice(define);
        Ok(PlanOptions { overrides, seed, stub_url: None, from_files, proxy: None })
    }
}
