//! `bcd`: the node daemon (`bcd join`, `bcd run`, `bcd leave`, `bcd status`).

use clap::Parser;

use better_compute::daemon::{self, Cli};
use better_compute::telemetry::LogFormat;

fn main() {
    let cli = Cli::parse();
    better_compute::telemetry::init_logging(LogFormat::Text);
    // One thread: a heartbeat every few seconds needs no more, and the daemon stays small.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime starts");
    better_compute::process::run_on(runtime, cli, daemon::run)
}
