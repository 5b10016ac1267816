//! URL buffers handed back from the drain, which frees the samples, to the users' threads, which make them.
//! glibc's allocator takes its slow path for nearly every block that one thread frees and another then asks
//! for: about 400 instructions a request for the URL alone. Through this pool a buffer goes round instead.

use std::sync::{Mutex, PoisonError};

use crate::sample::Sample;

/// Buffers kept at most (about 1 MB at the usual size).
const KEPT: usize = 4096;
/// A buffer larger than this is freed rather than kept.
const LARGEST: usize = 1024;

static POOL: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// An empty buffer for a URL: one handed back, or a new one of `capacity` bytes. Never waits: a pool that
/// another thread holds just now is a miss.
pub(crate) fn url_buffer(capacity: usize) -> String {
    let reused = POOL.try_lock().ok().and_then(|mut pool| pool.pop());
    reused.unwrap_or_else(|| String::with_capacity(capacity))
}

/// Empties `samples`, keeping their URL buffers for [`url_buffer`].
pub(crate) fn reclaim(samples: &mut Vec<Sample>) {
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    for sample in samples.drain(..) {
        match sample.url {
            Some(mut url) if pool.len() < KEPT && url.capacity() <= LARGEST => {
                url.clear();
                pool.push(url);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::jtl::tests::sample;

    #[test]
    fn a_reclaimed_url_comes_back_empty_and_an_oversized_one_is_not_kept() {
        let mut kept = sample("a");
        let mut url = String::with_capacity(777);
        url.push_str("http://x/");
        kept.url = Some(url);
        let mut big = sample("b");
        big.url = Some("y".repeat(LARGEST + 1));
        let mut samples = vec![kept, big];
        reclaim(&mut samples);
        assert!(samples.is_empty());
        // Other tests of this binary may use the pool at the same time: look for ours among what is there.
        let taken: Vec<String> = std::mem::take(&mut *POOL.lock().unwrap());
        assert!(taken.iter().all(String::is_empty));
        assert!(taken.iter().any(|s| s.capacity() == 777));
        assert!(taken.iter().all(|s| s.capacity() <= LARGEST));
    }
}
