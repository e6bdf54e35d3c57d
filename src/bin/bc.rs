//! `bc`: the command-line client, and `bc dev`.

use better_compute::cli::{self, Cli, Command};
use better_compute::{dev, telemetry};

fn main() {
    better_compute::process::run(|cli: Cli| async move {
        match cli.command {
            Command::Dev { options, log } => {
                telemetry::init_logging(log.log_format);
                dev::run(options).await.map_err(|error| error.to_string())
            }
            _ => cli::run(cli).await,
        }
    })
}
