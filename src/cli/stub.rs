//! `planrun stub FILE --listen ADDR`: serve a stub target until Ctrl-C.

use super::args::StubArgs;
use super::exit;
use super::print::{errln, outln};

pub(super) async fn stub(a: StubArgs) -> i32 {
    let config = match crate::stub::load(&a.file) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let handle = match crate::stub::start(config, a.listen).await {
        Ok(h) => h,
        Err(e) => {
            errln!("error: {e}");
            return exit::ABORTED;
        }
    };
    outln!("stub {} listening on {}", a.file.display(), handle.url());
    let _ = tokio::signal::ctrl_c().await;
    let served = handle.stats();
    handle.shutdown().await;
    errln!("stub stopped after {served} request(s)");
    exit::INTERRUPTED
}
