//! `bc`: the command-line client, and `bc dev`.

use clap::Parser;

use better_compute::cli::{self, Cli, Command};
use better_compute::{dev, telemetry};

fn main() {
    if let Err(message) = better_compute::config::load_config_file() {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
    let cli = Cli::parse();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
    let code = runtime.block_on(async move {
        match cli.command {
            Command::Dev { options, log } => {
                telemetry::init_logging(log.log_format);
                match dev::run(options).await {
                    Ok(()) => 0,
                    Err(error) => {
                        eprintln!("error: {error}");
                        1
                    }
                }
            }
            _ => cli::run(cli).await,
        }
    });
    std::process::exit(code);
}
