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
            Command::Fakecloud { port } => run_fakecloud(port).await,
            _ => cli::run(cli).await,
        }
    });
    std::process::exit(code);
}

/// `bc fakecloud`: serves the fake cloud until Ctrl-C or SIGTERM.
async fn run_fakecloud(port: u16) -> i32 {
    let config = better_compute::fakecloud::FakeCloudConfig { port, ..Default::default() };
    match better_compute::fakecloud::FakeCloud::start(config).await {
        Ok(cloud) => {
            println!("the fake cloud is serving on {} (token endpoint {})", cloud.base_url(), cloud.token_uri());
            better_compute::shutdown::signal().await;
            0
        }
        Err(error) => {
            eprintln!("error: cannot start the fake cloud on 127.0.0.1:{port}: {error}");
            1
        }
    }
}
