//! `bc-worker`: the reconcilers. Any number may run against one database.

use std::time::Duration;

use clap::Parser;

use better_compute::config::{ConfigFileOption, DatabaseOptions, LogOptions};
use better_compute::reconcile::Worker;
use better_compute::store::Store;
use better_compute::{shutdown, telemetry};

/// The better-compute worker.
#[derive(Parser, Debug)]
#[command(name = "bc-worker", version, about = "The better-compute worker: reconcilers, metering and the event relay.")]
struct Cli {
    #[command(flatten)]
    database: DatabaseOptions,
    /// How often an idle worker looks for due work, in milliseconds.
    #[arg(long, env = "BC_WORKER_TICK_MS", default_value_t = 1000)]
    tick_ms: u64,
    #[command(flatten)]
    log: LogOptions,
    #[command(flatten)]
    config: ConfigFileOption,
}

fn main() {
    better_compute::process::run(run)
}

async fn run(cli: Cli) -> Result<(), String> {
    telemetry::init_logging(cli.log.log_format);
    let url = cli.database.require_url()?;
    let store = Store::connect(url, cli.database.database_max_connections).await.map_err(|e| e.to_string())?;
    let worker = Worker::new(store.clone(), Duration::from_millis(cli.tick_ms));
    worker.run(shutdown::signal()).await.map_err(|e| e.to_string())?;
    store.close().await;
    Ok(())
}
