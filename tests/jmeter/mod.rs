//! Running a JMeter test plan beside the same planrun plan against one recording server.

pub mod launch;
pub mod recorder;
