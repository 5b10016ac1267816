//! What a run says about its placement (`--segment`, `--cores`, `--start-at`).

use std::time::SystemTime;

use super::print::errln;
use crate::session::placement::{available_cores, Placement};

/// Says what this segment runs and when it starts (stderr; the warning even with --quiet).
pub(super) fn announce(placement: &Placement, quiet: bool, stub: bool) {
    if !quiet {
        if !placement.segment.is_whole() {
            let setup = if placement.share.setup_users > 0 { "; it runs the setup and teardown groups" } else { "" };
            errln!(
                "planrun: segment {}: {} of the plan's {} users{setup}",
                placement.segment,
                placement.share.users,
                placement.share.of
            );
        }
        let stub_core = match (stub, placement.cores < available_cores()) {
            (false, _) => "",
            (true, true) => ", the embedded stub on the main thread",
            (true, false) => ", sharing them with the embedded stub",
        };
        errln!("planrun: users on {} core(s){stub_core}", placement.cores);
    }
    if placement.share.is_empty() {
        errln!(
            "planrun: segment {} has nothing to run: the plan's {} users are dealt round-robin to segments \
             0-{}, and setup and teardown groups run in segment 0",
            placement.segment,
            placement.share.of,
            placement.share.of.min(placement.segment.count()).saturating_sub(1)
        );
    }
    if let Some(at) = placement.start_at {
        match at.duration_since(SystemTime::now()) {
            Ok(ahead) if !quiet => errln!("planrun: starting in {:.1}s (--start-at)", ahead.as_secs_f64()),
            Ok(_) => {}
            Err(late) => {
                errln!("warning: --start-at is {:.1}s in the past; starting now", late.duration().as_secs_f64())
            }
        }
    }
}
