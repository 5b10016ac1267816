//! Plan files: read, parse with positions, validate into the model that runs.

mod bounds;
mod compression;
mod data_sets;
mod decode;
mod duplicates;
mod load;
pub mod model;
pub(crate) mod node;
pub mod output_spec;
mod outputs;
mod overrides;
mod property_file;
#[cfg(test)]
mod proptests;
mod request;
mod schema;
mod secret;
mod steps;
mod think;
mod threshold;
mod validate;
pub(crate) mod vocab;
mod yaml;

pub use crate::duration::parse as parse_duration;
pub use load::warnings as load_warnings;
pub use model::Plan;
pub use property_file::{read_property_file, PropertyFileError, PropertyFormat};
pub use schema::plan_schema;

use std::path::{Path, PathBuf};

use crate::diag::{render, Diagnostic, Diagnostics, Warnings};
use crate::source::Source;
use node::Node;

/// What the command line adds to a plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// `-D name=value`, in the order given (the last one of a name wins).
    pub overrides: Vec<(String, String)>,
    /// `--seed`, which wins over the plan's `seed`.
    pub seed: Option<u64>,
    /// The stub's URL once it is listening (`stub.url`).
    pub stub_url: Option<String>,
    /// How many of the first `overrides` come from `--env-file` and `-p` files (the others from `-D`): a
    /// name nothing in the plan uses is warned about when `-D` gives it, not when a file does (a file often
    /// holds more than one plan reads).
    pub from_files: usize,
    /// `--proxy`, which wins over the plan's `defaults.proxy` and the environment.
    pub proxy: Option<crate::http::ProxyChoice>,
}

/// A plan that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file could not be read.
    #[error("cannot read plan {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The plan has problems; the rendered text names each with its position.
    #[error("{rendered}")]
    Invalid {
        /// Every problem, rendered with file, line, column, carets and hints.
        rendered: String,
        /// The problems.
        diags: Diagnostics,
    },
}

/// A plan file, read and parsed into a tree with positions, not yet validated.
#[derive(Debug)]
pub struct PlanFile {
    /// The file.
    pub source: Source,
    root: Node,
}

impl PlanFile {
    /// Reads and parses a plan file.
    pub fn read(path: &Path) -> Result<Self, PlanError> {
        let text =
            crate::files::read_plan_text(path).map_err(|source| PlanError::Io { path: path.to_owned(), source })?;
        Self::parse(Source::new(path, text))
    }

    /// Parses a plan's text.
    pub fn parse(source: Source) -> Result<Self, PlanError> {
        match node::parse(&source.text) {
            Ok(root) => Ok(Self { source, root }),
            Err(d) => {
                let diags = Diagnostics { items: vec![d] };
                Err(invalid(&source, diags))
            }
        }
    }

    /// The stub file named by `stub:`, resolved relative to the plan; checked to exist.
    pub fn stub_path(&self, overrides: &[(String, String)]) -> Result<Option<PathBuf>, PlanError> {
        let Some(node) = self.root.as_map().and_then(|m| m.iter().find(|(k, _)| k.name == "stub")).map(|(_, v)| v)
        else {
            return Ok(None);
        };
        if node.scalar_text().is_none() {
            let d = Diagnostic::new(node.span, "wrong type").expected("stub: the path of a stub file");
            return Err(invalid(&self.source, Diagnostics { items: vec![d] }));
        }
        let text =
            validate::stub_text(&self.source, &self.root, node, overrides).map_err(|d| invalid(&self.source, d))?;
        let path = self.source.dir().join(&text);
        if let Some(why) = crate::files::why_unreadable(&path) {
            let d = Diagnostic::new(node.span, format!("stub file `{}` {why}", path.display()))
                .hint("the path is relative to the plan file");
            return Err(invalid(&self.source, Diagnostics { items: vec![d] }));
        }
        Ok(Some(path))
    }

    /// What is probably a mistake but does not stop the plan: a `-D` that nothing in the plan uses.
    pub fn warnings(&self, opts: &PlanOptions) -> Warnings {
        overrides::unused_overrides(&self.root, opts.overrides.get(opts.from_files..).unwrap_or_default())
    }

    /// Validates the plan: every problem is reported, with its position.
    pub fn validate(&self, opts: &PlanOptions) -> Result<Plan, PlanError> {
        validate::validate(&self.source, &self.root, opts).map_err(|d| invalid(&self.source, d))
    }
}

fn invalid(source: &Source, diags: Diagnostics) -> PlanError {
    PlanError::Invalid { rendered: render(source, &diags), diags }
}
