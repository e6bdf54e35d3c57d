//! What every binary does around its work: read the config file, parse the flags, start the
//! runtime, and turn a failure into a message and an exit code.

use std::future::Future;

use bcd::process::run_on;

/// Runs `work` with the parsed command line `C` on a tokio runtime; exits 2 on a bad config
/// file, 1 when `work` fails (printing why), 0 otherwise.
pub fn run<C, F>(work: impl FnOnce(C) -> F) -> !
where
    C: clap::Parser,
    F: Future<Output = Result<(), String>>,
{
    if let Err(message) = crate::config::load_config_file() {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
    let cli = C::parse();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
    run_on(runtime, cli, work)
}
