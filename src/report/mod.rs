//! Reports built from statistics and result files.

pub mod summary;
