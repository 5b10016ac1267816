//! Why a .jmx could not be converted, and what was converted only in part.

use std::fmt;

/// A .jmx that cannot be converted at all. Each names the line and column where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file is larger than planrun reads.
    #[error("the file is {size} bytes; planrun import reads plans of at most {limit} bytes")]
    TooLarge { size: u64, limit: u64 },
    /// The bytes are not UTF-8.
    #[error("{line}:{column}: not UTF-8 text (JMeter saves plans as UTF-8)")]
    NotUtf8 {
        /// Line of the first byte that is not UTF-8.
        line: u32,
        column: u32,
    },
    /// Not well-formed XML (a truncated file ends up here).
    #[error("{line}:{column}: not well-formed XML: {message}")]
    Xml {
        line: u32,
        column: u32,
        /// The parser's words.
        message: String,
    },
    /// A document type declaration: entities are never expanded, external ones never fetched.
    #[error(
        "{line}:{column}: the file declares a document type (<!DOCTYPE>); planrun import refuses DTDs and \
         entities, so nothing is expanded or fetched (JMeter never writes one)"
    )]
    Dtd { line: u32, column: u32 },
    /// XML, but not a JMeter test plan.
    #[error("{line}:{column}: not a JMeter test plan: {found}")]
    NotJmeter {
        line: u32,
        column: u32,
        /// What was found instead.
        found: String,
    },
    /// Saved by a JMeter version this converter does not know.
    #[error("{line}:{column}: saved by JMeter `{version}`; planrun import reads plans of JMeter 2.x to 5.x")]
    UnknownVersion {
        line: u32,
        column: u32,
        /// The `jmeter` attribute.
        version: String,
    },
    /// Elements nested deeper than any real plan.
    #[error("{line}:{column}: test elements nested more than {max} deep")]
    TooDeep { line: u32, column: u32, max: usize },
    /// A curl command that cannot be read.
    #[error("{}", at(*line, *column, message))]
    Curl {
        line: u32,
        column: u32,
        /// What is wrong there.
        message: String,
    },
    /// A HAR file that cannot be read (line 0: an option of the command line, no place in the file).
    #[error("{}", at(*line, *column, message))]
    Har {
        line: u32,
        column: u32,
        /// What is wrong there.
        message: String,
    },
    /// A Postman collection or environment that cannot be read.
    #[error("{line}:{column}: {message}")]
    Postman {
        line: u32,
        column: u32,
        /// What is wrong there.
        message: String,
    },
    /// An OpenAPI document that cannot be read (line and column 0 where there is no position).
    #[error("{}", at(*line, *column, message))]
    OpenApi {
        line: u32,
        column: u32,
        /// What is wrong there.
        message: String,
    },
    /// A file the import reads beside its input (a Postman environment) that cannot be read.
    #[error("cannot read `{path}`: {message}")]
    SideFile { path: String, message: String },
    /// Nothing left that planrun can send.
    #[error("nothing to convert: {0}")]
    Empty(String),
}

fn at(line: u32, column: u32, message: &str) -> String {
    if line == 0 {
        message.to_string()
    } else {
        format!("{line}:{column}: {message}")
    }
}

/// An element converted only in part, or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where it is: `Test Plan > Group 1 > Login > JSR223 PostProcessor "token"`.
    pub path: String,
    /// What was done instead.
    pub message: String,
    /// Line of the element in the .jmx (0 where there is none: a HAR entry).
    pub line: u32,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // A HAR's entries are named by their number: the JSON reader keeps no lines.
            write!(f, "{}: {}", self.path, self.message)
        } else {
            write!(f, "{} (line {}): {}", self.path, self.line, self.message)
        }
    }
}
