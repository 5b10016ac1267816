//! The open-file limit: every virtual user holds a socket (and, with the in-process stub, the stub holds
//! the other end), so a big run needs the soft limit raised, and a run that cannot fit says so up front.

/// File descriptors kept aside for the process itself (results files, the listener, the runtime).
const RESERVED: u64 = 64;

/// A run needs more open files than the machine allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this run needs about {needed} open files ({sockets} sockets + {RESERVED} for planrun), but the hard limit is {hard}; \
     lower the thread count, or raise the limit (`ulimit -Hn`, /etc/security/limits.conf, or systemd's LimitNOFILE)"
)]
pub struct TooFewFiles {
    /// Sockets the run will hold at its peak.
    pub sockets: u64,
    /// Sockets plus the reserve.
    pub needed: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft open-file limit to the hard limit; returns the limit now in force.
pub fn raise_open_files() -> Option<u64> {
    imp::raise()
}

/// Checks that `sockets` sockets fit under the open-file limit, raising the soft limit first.
pub fn ensure_open_files(sockets: u64) -> Result<(), TooFewFiles> {
    let Some(limit) = raise_open_files() else { return Ok(()) };
    let needed = sockets + RESERVED;
    if needed > limit {
        return Err(TooFewFiles { sockets, needed, hard: limit });
    }
    Ok(())
}

#[cfg(unix)]
mod imp {
    use rlimit::Resource;

    pub fn raise() -> Option<u64> {
        let (soft, hard) = rlimit::getrlimit(Resource::NOFILE).ok()?;
        if soft < hard && rlimit::setrlimit(Resource::NOFILE, hard, hard).is_ok() {
            return Some(hard);
        }
        Some(soft)
    }
}

#[cfg(not(unix))]
mod imp {
    pub fn raise() -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raises_to_the_hard_limit_and_refuses_what_cannot_fit() {
        let limit = raise_open_files().expect("a unix machine has a limit");
        assert!(ensure_open_files(10).is_ok());
        let err = ensure_open_files(limit).unwrap_err();
        assert_eq!(err.hard, limit);
        assert!(err.to_string().contains("hard limit"), "{err}");
    }
}
