//! `bc-server`: the API (gRPC, gRPC-web and JSON on one port), and `bc-server migrate`.

use clap::Parser;

use better_compute::authz::Authorizer;
use better_compute::config::{ConfigFileOption, DatabaseOptions, LogOptions, ServerOptions};
use better_compute::methods::MethodTable;
use better_compute::proto::descriptor_pool;
use better_compute::service::{KubernetesModule, Service};
use better_compute::store::Store;
use better_compute::{server, shutdown, telemetry};

/// The better-compute API server.
#[derive(Parser, Debug)]
#[command(name = "bc-server", version, about = "The better-compute API server: gRPC, gRPC-web and JSON on one port.")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    database: DatabaseOptions,
    #[command(flatten)]
    server: ServerOptions,
    #[command(flatten)]
    log: LogOptions,
    #[command(flatten)]
    config: ConfigFileOption,
    /// On SIGTERM, how long `/readyz` answers 503 while calls are still served, before the
    /// listener closes and the calls in flight finish, in seconds: give balancers the time to
    /// take this server out of rotation (at least their readiness probe's period).
    #[arg(long, env = "BC_DRAIN_SECS", default_value_t = 5.0)]
    drain_secs: f64,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Serves the API (what runs without a command).
    Serve,
    /// Applies the database migrations that are not applied yet, then exits.
    Migrate,
    /// Prints the Cedar schema that policy files are validated against, then exits.
    AuthzSchema,
    /// Prints a new operator key (`bck_<id>.<secret>`) to give `--bootstrap-token` on the first
    /// start, e.g. from a Secret; it is made here and kept nowhere.
    NewOperatorKey,
    /// GETs `url` and exits 0 on a 200 answer, 1 otherwise: the health check of an image that
    /// has no shell and no curl (`bc-server probe http://127.0.0.1:8080/readyz`).
    Probe {
        /// What to GET.
        url: String,
    },
}

fn main() {
    better_compute::process::run(run)
}

async fn run(cli: Cli) -> Result<(), String> {
    telemetry::init_logging(cli.log.log_format);
    if let Some(Command::Probe { url }) = &cli.command {
        return probe(url).await;
    }
    if let Some(Command::NewOperatorKey) = cli.command {
        println!("{}", better_compute::service::ApiKeyToken::generate().reveal());
        return Ok(());
    }
    if let Some(Command::AuthzSchema) = cli.command {
        let actions = MethodTable::from_pool(descriptor_pool()).action_specs();
        let authorizer = Authorizer::new(&actions, &cli.server.read_policies()?)?;
        print!("{}", authorizer.schema_text());
        return Ok(());
    }
    let url = cli.database.require_url()?;
    if let Some(Command::Migrate) = cli.command {
        return migrate(url, cli.database.database_max_connections).await;
    }
    let store = Store::connect(url, cli.database.database_max_connections).await.map_err(|e| e.to_string())?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Migrate => unreachable!("handled before connecting"),
        Command::AuthzSchema | Command::NewOperatorKey | Command::Probe { .. } => {
            unreachable!("handled before connecting")
        }
        Command::Serve => {
            let pending = store.pending_migrations().await.map_err(|e| e.to_string())?;
            if !pending.is_empty() {
                return Err(format!("the database lacks migrations {pending:?}; run `bc-server migrate` first"));
            }
            let secret_key = cli.server.require_secret_key()?;
            let tls = cli.server.tls()?;
            let kubernetes =
                KubernetesModule { max_clusters_per_tenant: cli.server.max_clusters_per_tenant, ..Default::default() };
            let services = Service::with_policies(store.clone(), &cli.server.read_policies()?)?
                .with_secret_key(secret_key)
                .with_kubernetes(kubernetes)
                .with_node_heartbeat_interval(std::time::Duration::from_secs(cli.server.node_heartbeat_interval_secs));
            server::bootstrap_and_hand_over(
                &services,
                cli.server.bootstrap_token.as_deref(),
                &cli.server.operator_key_file,
            )
            .await
            .map_err(|e| e.to_string())?;
            let listener = tokio::net::TcpListener::bind(cli.server.listen)
                .await
                .map_err(|error| format!("cannot listen on {}: {error}", cli.server.listen))?;
            let metrics_listener = match cli.server.metrics_listen {
                Some(address) => Some(
                    tokio::net::TcpListener::bind(address)
                        .await
                        .map_err(|error| format!("cannot listen on {address} for /metrics: {error}"))?,
                ),
                None => None,
            };
            let options = server::ServeOptions {
                limits: cli.server.listener_limits(),
                metrics: cli.server.metrics_access(),
                metrics_listener,
                tls,
                drain: std::time::Duration::try_from_secs_f64(cli.drain_secs)
                    .map_err(|error| format!("--drain-secs {}: {error}", cli.drain_secs))?,
            };
            let scheme = if options.tls.is_some() { "https" } else { "http" };
            let listen = listener.local_addr().map_err(|error| format!("the listener has no address: {error}"))?;
            tracing::info!(endpoint = %format!("{scheme}://{listen}"), metrics_listen = ?cli.server.metrics_listen, "serving");
            server::serve_with(listener, services, options, shutdown::signal()).await.map_err(|e| e.to_string())?;
            store.close().await;
            Ok(())
        }
    }
}

/// `bc-server migrate`: makes the database if its server has none of that name, then applies
/// the migrations it lacks. Any failure is an error, so the exit status is not 0.
async fn migrate(url: &str, max_connections: u32) -> Result<(), String> {
    if Store::create_database_if_missing(url).await.map_err(|e| e.to_string())? {
        println!("created the database");
    }
    let store = Store::connect(url, max_connections).await.map_err(|e| e.to_string())?;
    let pending = store.pending_migrations().await.map_err(|e| e.to_string())?;
    store.migrate().await.map_err(|e| e.to_string())?;
    println!("migrations applied ({} new)", pending.len());
    store.close().await;
    Ok(())
}

/// GETs `url` within five seconds: `Ok` on a 200 answer.
async fn probe(url: &str) -> Result<(), String> {
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .map_err(|error| format!("probe: {error}"))?;
    let response = http.get(url).send().await.map_err(|error| format!("probe {url}: {error}"))?;
    match response.status() {
        reqwest::StatusCode::OK => Ok(()),
        status => Err(format!("probe {url}: {status}")),
    }
}
