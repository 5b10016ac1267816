//! A sample on its way to the sinks, as a future: what a request step returns, whichever way it ran.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A sample being handed to the sinks: true once they have it, false when they are gone.
pub enum Emit {
    /// Handed over (or refused) at once.
    Done(bool),
    /// Waiting for room on the channel.
    Wait(Pin<Box<dyn Future<Output = bool> + Send>>),
}

impl Future for Emit {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        match &mut *self {
            Emit::Done(sent) => Poll::Ready(*sent),
            Emit::Wait(wait) => wait.as_mut().poll(cx),
        }
    }
}
