//! `bcd`: the node daemon (`bcd join`, `bcd run`, `bcd leave`, `bcd status`).

use clap::Parser;

use bcd::daemon::{self, Cli};
use bcd::logging::{LogFormat, init_logging};

fn main() {
    let cli = Cli::parse();
    init_logging(LogFormat::Text);
    // One thread: a heartbeat every few seconds needs no more, and the daemon stays small.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime starts");
    bcd::process::run_on(runtime, cli, daemon::run)
}
