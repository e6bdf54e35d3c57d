//! `bcctl`: the command-line client, and `bcctl dev`.

use better_compute::cli::{self, Cli, Command};
use better_compute::{dev, telemetry};

fn main() {
    better_compute::process::run(|cli: Cli| async move {
        match cli.command {
            Command::Dev { options, log } => {
                telemetry::init_logging(log.log_format);
                dev::run(options).await.map_err(|error| error.to_string())
            }
            Command::Fakecloud { port } => run_fakecloud(port).await,
            _ => cli::run(cli).await,
        }
    })
}

/// `bcctl fakecloud`: serves the fake cloud until Ctrl-C or SIGTERM.
async fn run_fakecloud(port: u16) -> Result<(), String> {
    let config = fakecloud::FakeCloudConfig { port, ..Default::default() };
    let cloud = fakecloud::FakeCloud::start(config)
        .await
        .map_err(|error| format!("cannot start the fake cloud on 127.0.0.1:{port}: {error}"))?;
    println!("the fake cloud is serving on {} (token endpoint {})", cloud.base_url(), cloud.token_uri());
    better_compute::shutdown::signal().await;
    Ok(())
}
