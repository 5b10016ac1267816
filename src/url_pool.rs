//! URL buffers handed back from the drain, which frees the samples, to the users' threads, which make them.
//! glibc's allocator takes its slow path for nearly every block that one thread frees and another then asks
//! for: about 400 instructions a request for the URL alone. Through this pool a buffer goes round instead.
//! Only URLs too long to be kept inside their sample ([`SampleUrl::Heap`]) travel with it and come back here;
//! a short one's buffer stays with its user for the next request (see `wire::SpareHeaders`), or is freed
//! where the request was made by a user that pauses.

use std::sync::{Mutex, PoisonError};

use crate::sample::{Sample, SampleUrl};

/// Buffers kept at most (about 1 MB at the usual size).
const KEPT: usize = 4096;
/// A buffer larger than this is freed rather than kept.
const LARGEST: usize = 1024;

/// The run's pool.
static POOL: Pool = Pool::new();

/// Empty URL buffers, ready for another request.
struct Pool(Mutex<Vec<String>>);

impl Pool {
    const fn new() -> Self {
        Pool(Mutex::new(Vec::new()))
    }

    /// Never waits: a pool that another thread holds just now is a miss.
    fn take(&self) -> Option<String> {
        self.0.try_lock().ok().and_then(|mut kept| kept.pop())
    }

    fn reclaim(&self, samples: &mut Vec<Sample>) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken where they lie: moving each sample out of the batch first cost a copy of it.
        for sample in samples.iter_mut() {
            match sample.url.take() {
                Some(SampleUrl::Heap(mut url)) if kept.len() < KEPT && url.capacity() <= LARGEST => {
                    url.clear();
                    kept.push(url);
                }
                _ => {}
            }
        }
        samples.clear();
    }
}

/// An empty buffer for a URL: one handed back, or a new one of `capacity` bytes.
pub(crate) fn url_buffer(capacity: usize) -> String {
    POOL.take().unwrap_or_else(|| String::with_capacity(capacity))
}

/// Empties `samples`, keeping their URL buffers for [`url_buffer`].
pub(crate) fn reclaim(samples: &mut Vec<Sample>) {
    POOL.reclaim(samples);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::tests::sample;

    #[test]
    fn a_reclaimed_url_comes_back_empty_and_an_oversized_one_is_not_kept() {
        let pool = Pool::new();
        let mut kept = sample("a");
        let mut url = String::with_capacity(777);
        url.push_str("http://x/");
        kept.url = Some(SampleUrl::Heap(url));
        let mut big = sample("b");
        big.url = Some(SampleUrl::Heap("y".repeat(LARGEST + 1)));
        let mut none = sample("c");
        none.url = None;
        let mut inline = sample("d");
        inline.url = Some(SampleUrl::from("http://x/"));
        let mut samples = vec![kept, big, none, inline];
        pool.reclaim(&mut samples);
        assert!(samples.is_empty());
        let back = pool.take().unwrap();
        assert_eq!((back.len(), back.capacity()), (0, 777));
        assert_eq!(pool.take(), None, "the oversized buffer was freed, the inline URL had none");
    }

    #[test]
    fn the_pool_keeps_a_bounded_number_of_buffers() {
        let pool = Pool::new();
        let mut samples: Vec<Sample> = (0..KEPT + 10)
            .map(|_| {
                let mut s = sample("a");
                s.url = Some(SampleUrl::Heap(String::from("u")));
                s
            })
            .collect();
        pool.reclaim(&mut samples);
        assert_eq!(pool.0.lock().unwrap().len(), KEPT);
    }
}
