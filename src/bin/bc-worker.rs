//! `bc-worker`: the reconcilers. Any number may run against one database.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use tokio::net::TcpListener;

use better_compute::config::{ConfigFileOption, DatabaseOptions, LogOptions, SecretKeyOptions};
use better_compute::provider::accounts::{StoreDigitalOceanAccounts, StoreGkeAccounts};
use better_compute::reconcile::{
    DaemonEndpoint, ProviderResources, Resealer, Worker, WorkerConfig, parse_kind_intervals, registry,
};
use better_compute::store::Store;
use better_compute::{shutdown, telemetry};

/// The better-compute worker.
#[derive(Parser, Debug)]
#[command(name = "bc-worker", version, about = "The better-compute worker: reconcilers, metering and the event relay.")]
struct Cli {
    #[command(flatten)]
    database: DatabaseOptions,
    /// The servers' keys: the reconcilers open what they sealed (account credentials, BMC
    /// passwords, private keys) and the re-seal seals it again with the first. Required.
    #[command(flatten)]
    secret_keys: SecretKeyOptions,
    /// How often every sealed value not sealed with the sealing key is sealed again with it, in
    /// milliseconds; it also runs whenever the keys change.
    #[arg(long, env = "BC_WORKER_RESEAL_MS", default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1..))]
    reseal_ms: u64,
    /// The longest an idle worker waits before looking for due work, in milliseconds (writes
    /// wake it at once).
    #[arg(long, env = "BC_WORKER_TICK_MS", default_value_t = 1000)]
    tick_ms: u64,
    /// How long a lease on an object lasts unless renewed, in milliseconds: a dead worker's
    /// objects are taken over after this.
    #[arg(long, env = "BC_WORKER_LEASE_MS", default_value_t = 30_000)]
    lease_ms: u64,
    /// Passes at once.
    #[arg(long, env = "BC_WORKER_CONCURRENCY", default_value_t = 16)]
    concurrency: usize,
    /// Overrides every kind's interval while converging (default 30 s), in milliseconds.
    #[arg(long, env = "BC_WORKER_CONVERGING_MS")]
    converging_ms: Option<u64>,
    /// Overrides every kind's interval once settled (default 5 min), in milliseconds.
    #[arg(long, env = "BC_WORKER_SETTLED_MS")]
    settled_ms: Option<u64>,
    /// Overrides some kinds' intervals: `kind=<converging ms>/<settled ms>`, comma-separated
    /// (`kubernetes-cluster=5000/60000`); wins over the two options above.
    #[arg(long, env = "BC_WORKER_KIND_INTERVALS", default_value = "")]
    kind_intervals: String,
    /// How often usage is metered, in milliseconds.
    #[arg(long, env = "BC_WORKER_METERING_MS", default_value_t = 300_000)]
    metering_ms: u64,
    /// On SIGTERM, how long running passes may finish before their leases are released, in
    /// milliseconds.
    #[arg(long, env = "BC_WORKER_SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    shutdown_grace_ms: u64,
    /// Runs the built-in `noop` kind with passes this long, in milliseconds (tests and
    /// benchmarks only).
    #[arg(long, env = "BC_WORKER_NOOP_PASS_MS")]
    noop_pass_ms: Option<u64>,
    /// Relays every event to this NATS server's JetStream (`nats://127.0.0.1:4222`), on
    /// `bettercompute.<tenant>.<type>`.
    #[arg(long, env = "BC_NATS_URL")]
    nats_url: Option<String>,
    /// An address to serve `/metrics` on (Prometheus: this worker's store and provider calls,
    /// `bc_provider_calls_total` and the like), open to whoever reaches it; not served without it.
    #[arg(long, visible_alias = "metrics-addr", env = "BC_WORKER_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// The API's URL as nodes reach it: the substrates' bcd DaemonSets join through it (without
    /// it a pool substrate goes `error`).
    #[arg(long, env = "BC_API_ENDPOINT")]
    api_endpoint: Option<String>,
    /// The SHA-256 of the API's CA public key (as `bcctl dev --tls` prints it), for bcd to pin; left
    /// out when the API's certificate chains to a public CA.
    #[arg(long, env = "BC_API_CA_SHA256")]
    api_ca_sha256: Option<String>,
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
    let key = cli.secret_keys.require()?;
    let store = Store::connect(url, cli.database.database_max_connections).await.map_err(|e| e.to_string())?;
    let ms = Duration::from_millis;
    let config = WorkerConfig {
        tick: ms(cli.tick_ms),
        lease: ms(cli.lease_ms),
        concurrency: cli.concurrency,
        converging: cli.converging_ms.map(ms),
        settled: cli.settled_ms.map(ms),
        kind_intervals: parse_kind_intervals(&cli.kind_intervals)?,
        metering_interval: ms(cli.metering_ms),
        shutdown_grace: ms(cli.shutdown_grace_ms),
        noop_pass: cli.noop_pass_ms.map(ms),
        nats_url: cli.nats_url,
        ..WorkerConfig::default()
    };
    let gke = StoreGkeAccounts::new(store.clone(), key.clone());
    let digitalocean = StoreDigitalOceanAccounts::new(store.clone(), key.clone());
    let daemon_endpoint = cli.api_endpoint.map(|url| DaemonEndpoint { url, ca_sha256: cli.api_ca_sha256.clone() });
    let resources = ProviderResources { daemon_endpoint, ..ProviderResources::new(gke, digitalocean, key.clone()) };
    let worker = Worker::new(store.clone(), config).with_reconcilers(registry(resources));
    // Neither the passes nor the re-seal write to a schema they do not know.
    worker.check_store().await.map_err(|e| e.to_string())?;
    let (stopped, mut metrics_stop) = tokio::sync::watch::channel(false);
    let metrics = match cli.metrics_listen {
        Some(address) => {
            let listener = TcpListener::bind(address)
                .await
                .map_err(|error| format!("cannot listen on {address} for /metrics: {error}"))?;
            tracing::info!(metrics_listen = %address, "serving /metrics");
            let stop = async move {
                let _ = metrics_stop.wait_for(|stopped| *stopped).await;
            };
            Some(tokio::spawn(telemetry::serve_calls(listener, stop)))
        }
        None => None,
    };
    let mut reseal_stop = stopped.subscribe();
    let resealing = tokio::spawn(Resealer::new(store.clone(), key, ms(cli.reseal_ms)).run(async move {
        let _ = reseal_stop.wait_for(|stopped| *stopped).await;
    }));
    let worked = worker.run(shutdown::signal()).await.map_err(|e| e.to_string());
    let _ = stopped.send(true);
    let _ = resealing.await;
    if let Some(serving) = metrics
        && let Ok(Err(error)) = serving.await
    {
        tracing::warn!(%error, "serving /metrics failed");
    }
    store.close().await;
    worked
}
