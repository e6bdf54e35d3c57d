//! How every binary of the project ends: a failure becomes a message on stderr and exit code 1.

use std::future::Future;

/// Runs `work(cli)` on `runtime`; exits 1 when it fails (printing why), 0 otherwise. `bcd` gives a
/// runtime of one thread; the control plane's binaries one of their own making.
pub fn run_on<C, F>(runtime: tokio::runtime::Runtime, cli: C, work: impl FnOnce(C) -> F) -> !
where
    F: Future<Output = Result<(), String>>,
{
    match runtime.block_on(work(cli)) {
        Ok(()) => std::process::exit(0),
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(1);
        }
    }
}
