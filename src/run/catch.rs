//! Panics inside a virtual user become failed samples: a bug in planrun (or in a crate it uses) must cost
//! one sample, said in its row, not the user and every sample it would have sent.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Once;
use std::task::Poll;

thread_local! {
    /// How many [`catch`]es are polling on this thread; the hook stays quiet while any is.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
    /// Where the last caught panic happened, noted by the hook for the sample's message.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Polls `work`; a panic while polling it ends it and comes back as the panic's message and place.
///
/// `work` is pinned by the caller (`pin!` in its own async fn), so this future holds a pointer to it, not a
/// copy: the futures caught are an iteration and a request, kilobytes each, and moving them into this
/// future and pinning them again here cost two copies per request and doubled every user's task.
///
/// Whatever `work` borrowed may be half-updated afterwards: the caller resets what it cannot trust.
///
/// Not an `async fn`: one would wrap the polling in a state machine of its own, a layer more on every
/// request's path (measured: see docs/performance.md).
pub fn catch<'a, F: Future>(mut work: Pin<&'a mut F>) -> impl Future<Output = Result<F::Output, String>> + 'a {
    install_hook();
    poll_fn(move |cx| {
        CATCHING.with(|c| c.set(c.get() + 1));
        let polled = catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx)));
        CATCHING.with(|c| c.set(c.get() - 1));
        match polled {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(describe(payload.as_ref()))),
        }
    })
}

/// The panic's message, and where it happened when the hook saw it.
fn describe(payload: &(dyn Any + Send)) -> String {
    let message = match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_string(),
    };
    match LOCATION.with(|l| l.borrow_mut().take()) {
        Some(at) => format!("internal error (planrun bug, please report): {message} at {at}"),
        None => format!("internal error (planrun bug, please report): {message}"),
    }
}

/// A panic hook that notes where caught panics happen instead of printing them (each is a failed sample
/// that says so); any other panic goes to the hook that was there before.
fn install_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) > 0 {
                let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    #[tokio::test]
    async fn a_panic_while_polling_comes_back_as_its_message_and_place() {
        let out = catch(pin!(async {
            tokio::task::yield_now().await;
            let v: Vec<u32> = Vec::new();
            v[usize::from(v.is_empty())]
        }))
        .await;
        let message = out.unwrap_err();
        assert!(message.starts_with("internal error (planrun bug, please report): index out of bounds"), "{message}");
        assert!(message.contains("src/run/catch.rs:"), "{message}");
    }

    #[tokio::test]
    async fn work_that_does_not_panic_is_untouched() {
        assert_eq!(catch(pin!(async { 42 })).await, Ok(42));
    }
}
