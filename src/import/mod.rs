//! `planrun import`: JMeter test plans (.jmx) made into planrun plans; curl commands in [`curl`], browser
//! recordings in [`har`], Postman collections in [`postman`], OpenAPI documents in [`openapi`].
//!
//! - [`xml`] reads the file into the element tree ([`tree`]) with roxmltree, refusing DTDs (so no entity is
//!   expanded or fetched); bad input is an [`ImportError`] with its line and column.
//! - [`convert`] walks the tree: variables and data sets first, then thread groups, samplers, controllers,
//!   and the elements whose scope is every sampler below them (headers, defaults, timers, assertions,
//!   extractors), applied to each request as JMeter applies them.
//! - [`functions`] turns `${var}` and `${__P(...)}`-style functions in strings into templates.
//! - [`yaml`] writes the plan, with a comment where an element was converted in part or dropped.
//!
//! Every element not converted as it is in JMeter is a [`Warning`] with its path in the tree.

pub mod convert;
pub mod curl;
pub mod error;
pub mod functions;
pub mod har;
pub mod names;
pub mod openapi;
pub mod postman;
pub mod requests;
pub mod tree;
pub mod xml;
pub mod yaml;

pub use convert::{Converted, Options};
pub use error::ImportError;

/// The largest .jmx read: far beyond any real plan (a 300 KB plan is large), small enough to hold.
pub const MAX_BYTES: u64 = 64 << 20;

/// Converts the bytes of a .jmx.
pub fn import(bytes: &[u8], options: &Options) -> Result<Converted, ImportError> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ImportError::TooLarge { size: bytes.len() as u64, limit: MAX_BYTES });
    }
    let read = xml::read(bytes)?;
    convert::convert(read, options)
}
