//! The API load generator: `kubernetesClusters.create` (each call its own idempotency key),
//! `get`, `list` of a tenant's 500 clusters with their node pools, and `loadBalancers.create`
//! (when this build serves it), over gRPC and over JSON, at concurrency 1, 16 and 64, against a
//! real `bc-server` process on a fresh Postgres database. Beside each figure, in the same run:
//! the transport's limit (an echo server answering the same calls with the same bytes, doing
//! nothing else) and, for creates, the store's limit (pgbench writing as many rows per
//! transaction as one create does). Prints a table; writes `bench/results/api.json`.
//!
//! `cargo bench --bench api`. Settings (environment): `BC_BENCH_SECONDS` measured per run
//! (default 5), `BC_BENCH_WARMUP_SECONDS` (1), `BC_BENCH_CONCURRENCY` (`1,16,64`),
//! `BC_BENCH_LIST_SIZE` (500), `BC_BENCH_METHODS` (only the methods whose name contains one of
//! these, comma-separated: `create,list`), `BC_BENCH_POSTGRES_URL` (the machine's Postgres).
//!
//! No worker runs: the figures are the API's alone (clusters stay `pending`).

#[path = "common/mod.rs"]
mod common;

#[path = "api/calls.rs"]
mod calls;
#[path = "api/echo.rs"]
mod echo;
#[path = "api/load.rs"]
mod load;
#[path = "api/pgbench.rs"]
mod pgbench;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};
use sqlx::Row as _;

use calls::{Api, Context, Protocol};
use common::pg::Database;
use common::platform::{self, Api as Client, serves};
use common::procs::{Server, ServerOptions, mib};
use common::report::{Table, machine, write_json};
use common::stats::{Sample, ratio, round};

/// How a run is set.
struct Settings {
    /// Measured seconds per run.
    seconds: u64,
    /// Unmeasured seconds before.
    warmup: u64,
    /// Concurrencies.
    concurrency: Vec<usize>,
    /// Clusters of the list tenant.
    list_size: usize,
    /// Only the methods whose name contains one of these (`BC_BENCH_METHODS=create,list`).
    methods: Option<Vec<String>>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("echo-server") && args.len() == 4 {
        return echo::serve_main(&args[2], &args[3]);
    }
    if !common::started_by_cargo_bench() {
        println!("api benchmark: run it with `cargo bench --bench api`");
        return;
    }
    let settings = Settings {
        seconds: common::env_or("BC_BENCH_SECONDS", 5),
        warmup: common::env_or("BC_BENCH_WARMUP_SECONDS", 1),
        concurrency: common::env_list("BC_BENCH_CONCURRENCY", &[1, 16, 64]),
        list_size: common::env_or("BC_BENCH_LIST_SIZE", 500),
        methods: std::env::var("BC_BENCH_METHODS").ok().map(|m| m.split(',').map(|s| s.trim().to_owned()).collect()),
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    if let Err(error) = runtime.block_on(run(settings)) {
        eprintln!("api benchmark failed: {error}");
        std::process::exit(1);
    }
}

/// One measured row.
struct Measured {
    api: Api,
    protocol: Protocol,
    concurrency: usize,
    real: Sample,
    echo: Sample,
    server_rss_kib: Option<u64>,
}

async fn run(settings: Settings) -> Result<(), String> {
    let logs = tempfile::Builder::new().prefix("bc-bench-api").tempdir().map_err(|e| e.to_string())?;
    let database = Database::create(&common::pg::admin_url()).await?;
    let options = ServerOptions { max_clusters_per_tenant: 1_000_000, ..ServerOptions::default() };
    let server = Server::start(&database.url, logs.path(), &options).await?;
    let cloud = FakeCloud::start(FakeCloudConfig {
        operation_duration: Duration::ZERO,
        activation_delay: Duration::ZERO,
        ..FakeCloudConfig::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let client = Client::new(&server.endpoint);
    let admin = server.admin_token.clone();
    let load_balancers = serves("bettercompute.compute.v1.LoadBalancers");
    println!(
        "api benchmark: bc-server (pid {}) on Postgres {}, {} s measured per run after {} s warm-up",
        server.process.pid(),
        database.name,
        settings.seconds,
        settings.warmup
    );

    // The platform: load tenants (task k calls as tenant k mod their number), the list tenant,
    // and a tenant whose creates are profiled.
    let platform = platform::seed_platform(&client, &admin, &cloud).await?;
    let tenant_count = settings.concurrency.iter().copied().max().unwrap_or(1);
    let mut tenants = Vec::new();
    for i in 0..tenant_count {
        let id = format!("load-{i:02}");
        tenants.push((id.clone(), platform::seed_tenant(&client, &admin, &platform, &id, 1_000_000).await?));
    }
    let list_tenant = ("list".to_owned(), platform::seed_tenant(&client, &admin, &platform, "list", 1_000_000).await?);
    let profile_token = platform::seed_tenant(&client, &admin, &platform, "profile", 1_000_000).await?;
    let rss_idle = server.process.rss_kib();

    // The list tenant's clusters, made through the API.
    let started = Instant::now();
    fill(&client, &list_tenant, &platform.gke_pool, settings.list_size).await?;
    println!("made {} clusters of the list tenant in {:.1} s", settings.list_size, started.elapsed().as_secs_f64());

    // What one create writes, and the store's baseline from it.
    let mut profiles = BTreeMap::new();
    let profile = pgbench::profile(&database, 100, || async {
        for i in 0..100 {
            let body = platform::cluster_request("profile", &platform.gke_pool, &format!("profile-{i}"));
            client.ok(&profile_token, Api::CreateCluster.json_path(), body).await?;
        }
        Ok(())
    })
    .await?;
    println!("one kubernetesClusters.create writes: {}", profile.describe());
    profiles.insert(Api::CreateCluster.name(), profile);
    // The load balancer scenario runs only where this build serves the method and the platform
    // above lets it create (its failure skips it, saying why, rather than ending the run).
    let mut load_balancers = load_balancers;
    if load_balancers {
        let result = pgbench::profile(&database, 100, || async {
            for i in 0..100 {
                let body = platform::load_balancer_request("profile", &platform.do_pool, &format!("profile-{i}"));
                client.ok(&profile_token, Api::CreateLoadBalancer.json_path(), body).await?;
            }
            Ok(())
        })
        .await;
        match result {
            Ok(profile) => {
                println!("one loadBalancers.create writes: {}", profile.describe());
                profiles.insert(Api::CreateLoadBalancer.name(), profile);
            }
            Err(error) => {
                println!("loadBalancers.create: skipped, a create failed: {error}");
                load_balancers = false;
            }
        }
    }

    let mut apis = vec![Api::CreateCluster, Api::GetCluster, Api::ListClusters];
    if load_balancers {
        apis.push(Api::CreateLoadBalancer);
    } else if !serves("bettercompute.compute.v1.LoadBalancers") {
        println!(
            "loadBalancers.create: not measured, this build does not serve bettercompute.compute.v1.LoadBalancers \
             (bench/api/calls.rs calls it through the descriptors once it does)"
        );
    }
    if let Some(only) = &settings.methods {
        apis.retain(|api| only.iter().any(|name| api.name().contains(name.as_str())));
    }
    let mut context = Context {
        gke_pool: platform.gke_pool.clone(),
        do_pool: platform.do_pool.clone(),
        tenants,
        list_tenant,
        cluster_ids: Vec::new(),
    };
    context.cluster_ids = cluster_ids(&database, &context).await?;
    database.analyze().await?;

    // The echo baseline answers with what the server answered.
    let recorded = record(&apis, &context, &server.endpoint).await?;
    let recorded_dir = logs.path().join("recorded");
    recorded.write(&recorded_dir)?;
    let (_echo, echo_endpoint) = echo::start(&recorded_dir, logs.path()).await?;

    let warmup = Duration::from_secs(settings.warmup);
    let window = Duration::from_secs(settings.seconds);
    let mut rows = Vec::new();
    let mut run_number = 1u32;
    for &api in &apis {
        if api == Api::GetCluster {
            // Every load tenant has clusters by now, from the create runs (or these, without them).
            for (i, (tenant, token)) in context.tenants.iter().enumerate() {
                if context.cluster_ids.get(i).is_none_or(Vec::is_empty) {
                    for n in 0..4 {
                        let body = platform::cluster_request(tenant, &context.gke_pool, &format!("get-{n}"));
                        client.ok(token, Api::CreateCluster.json_path(), body).await?;
                    }
                }
            }
            context.cluster_ids = cluster_ids(&database, &context).await?;
        }
        let shared = Arc::new(std::mem::replace(&mut context, empty_context()));
        for protocol in [Protocol::Grpc, Protocol::Json] {
            for &concurrency in &settings.concurrency {
                run_number += 1;
                let call = calls::make(api, protocol, shared.clone(), run_number, &server.endpoint).await?;
                let real = load::run(call, concurrency, warmup, window).await;
                let server_rss_kib = server.process.rss_kib();
                run_number += 1;
                let call = calls::make(api, protocol, shared.clone(), run_number, &echo_endpoint).await?;
                let echo = load::run(call, concurrency, warmup, window).await;
                print_progress(api, protocol, concurrency, &real, &echo);
                rows.push(Measured { api, protocol, concurrency, real, echo, server_rss_kib });
            }
        }
        context = Arc::try_unwrap(shared).map_err(|_| "a call outlived its run".to_owned())?;
    }

    // The store's limit at each concurrency, for each profiled create.
    pgbench::prepare(&database).await?;
    let mut baselines: BTreeMap<(&str, usize), Sample> = BTreeMap::new();
    for (name, profile) in profiles.iter().filter(|(name, _)| apis.iter().any(|api| api.name() == **name)) {
        let script = pgbench::script(profile.rows());
        for &concurrency in &settings.concurrency {
            let clients = concurrency.min(pgbench::SERVER_CONNECTIONS);
            let sample = pgbench::run(&database, &script, clients, settings.seconds, logs.path())?;
            baselines.insert((name, concurrency), sample);
        }
    }

    let figures = report(&settings, &rows, &baselines, &profiles, &recorded, rss_idle, server.process.rss_kib());
    let path = write_json("api", &figures)?;
    println!("\nwritten to {}", path.display());
    Ok(())
}

/// A context with nothing in it (while the real one is shared with a run's tasks).
fn empty_context() -> Context {
    Context {
        gke_pool: String::new(),
        do_pool: String::new(),
        tenants: Vec::new(),
        list_tenant: (String::new(), String::new()),
        cluster_ids: Vec::new(),
    }
}

/// Makes `count` clusters of `tenant` through the JSON API, 16 at a time.
async fn fill(client: &Client, tenant: &(String, String), pool: &str, count: usize) -> Result<(), String> {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (client, tenant, pool, next) = (client.clone(), tenant.clone(), pool.to_owned(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), String>(());
                }
                let body = platform::cluster_request(&tenant.0, &pool, &format!("listed-{i}"));
                client.ok(&tenant.1, Api::CreateCluster.json_path(), body).await?;
            }
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// The cluster ids of each load tenant, read from the store.
async fn cluster_ids(database: &Database, context: &Context) -> Result<Vec<Vec<String>>, String> {
    let mut connection = database.connect().await?;
    let rows = sqlx::query("SELECT tenant_id, id FROM kubernetes_clusters WHERE deleted_at IS NULL")
        .fetch_all(&mut connection)
        .await
        .map_err(|e| e.to_string())?;
    let mut by_tenant: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let (tenant, id): (String, String) = (row.get(0), row.get(1));
        by_tenant.entry(tenant).or_default().push(id);
    }
    Ok(context.tenants.iter().map(|(id, _)| by_tenant.remove(id).unwrap_or_default()).collect())
}

/// One real answer per method and protocol, for the echo server to replay.
async fn record(apis: &[Api], context: &Context, endpoint: &str) -> Result<echo::Recorded, String> {
    let mut recorded = echo::Recorded::default();
    let http = reqwest::Client::new();
    let mut context = clone_context(context);
    for &api in apis {
        let (tenant, body) = calls::request(api, &context, 0, 0, 0);
        let token = tenant.map(|i| context.tenants[i].1.clone()).unwrap_or_else(|| context.list_tenant.1.clone());
        let response = http
            .post(format!("{endpoint}{}", api.json_path()))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let answer = response.bytes().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{} over JSON answered {status}: {}", api.name(), String::from_utf8_lossy(&answer)));
        }
        if api == Api::CreateCluster {
            // `get` reads the cluster just made, as load tenant 0.
            let created: Value = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
            context.cluster_ids = vec![vec![created["id"].as_str().unwrap_or_default().to_owned()]];
            context.tenants.truncate(1);
        }
        recorded.add("json", api.json_path(), answer);

        let (service, method) = api.grpc();
        let method = common::grpc::Method::find(service, method).ok_or(format!("{service}/{method} is missing"))?;
        let (tenant, mut body) = calls::request(api, &context, 0, 0, 1);
        if api == Api::GetCluster {
            body = calls::request(api, &context, 0, 0, 0).1;
        }
        let token = tenant.map(|i| context.tenants[i].1.clone()).unwrap_or_else(|| context.list_tenant.1.clone());
        let channel = tonic::transport::Channel::from_shared(endpoint.to_owned())
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let channel = tonic::service::interceptor::InterceptedService::new(
            channel,
            better_compute::cli::BearerToken::new(Some(&token))?,
        );
        let answer = common::grpc::call_raw(&channel, &method.path, method.encode_request(&body)?)
            .await
            .map_err(|status| format!("{} over gRPC: {}", api.name(), status.message()))?;
        recorded.add("grpc", &method.path, answer);
    }
    Ok(recorded)
}

fn clone_context(context: &Context) -> Context {
    Context {
        gke_pool: context.gke_pool.clone(),
        do_pool: context.do_pool.clone(),
        tenants: context.tenants.clone(),
        list_tenant: context.list_tenant.clone(),
        cluster_ids: context.cluster_ids.clone(),
    }
}

fn print_progress(api: Api, protocol: Protocol, concurrency: usize, real: &Sample, echo: &Sample) {
    println!(
        "  {:<26} {:<4} c={:<3} {:>9.1}/s ({} failed)   echo {:>9.1}/s",
        api.name(),
        protocol.name(),
        concurrency,
        real.throughput(),
        real.failed(),
        echo.throughput()
    );
}

/// Prints the tables and returns the figures as JSON.
fn report(
    settings: &Settings,
    rows: &[Measured],
    baselines: &BTreeMap<(&str, usize), Sample>,
    profiles: &BTreeMap<&str, pgbench::WriteProfile>,
    recorded: &echo::Recorded,
    rss_idle: Option<u64>,
    rss_end: Option<u64>,
) -> Value {
    println!();
    let mut table = Table::new(&[
        "method",
        "proto",
        "conc",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "failed",
        "echo/s",
        "echo p50",
        "echo p99",
        "x echo",
        "pgbench tx/s",
        "x pgbench",
        "server RSS",
    ]);
    let mut runs = Vec::new();
    for row in rows {
        let baseline = baselines.get(&(row.api.name(), row.concurrency));
        let (store_tps, store_ratio) = match &baseline {
            Some(b) => (Some(b.throughput()), ratio(row.real.throughput(), b.throughput())),
            None => (None, None),
        };
        let transport_ratio = ratio(row.real.throughput(), row.echo.throughput());
        let show = |v: Option<f64>, places: usize| v.map(|v| format!("{v:.places$}")).unwrap_or_else(|| "-".into());
        table.row(vec![
            row.api.name().to_owned(),
            row.protocol.name().to_owned(),
            row.concurrency.to_string(),
            format!("{:.1}", row.real.throughput()),
            format!("{:.2}", row.real.percentile_ms(0.5)),
            format!("{:.2}", row.real.percentile_ms(0.99)),
            row.real.failed().to_string(),
            format!("{:.1}", row.echo.throughput()),
            format!("{:.2}", row.echo.percentile_ms(0.5)),
            format!("{:.2}", row.echo.percentile_ms(0.99)),
            show(transport_ratio, 3),
            show(store_tps, 1),
            show(store_ratio, 3),
            mib(row.server_rss_kib),
        ]);
        runs.push(json!({
            "method": row.api.name(), "protocol": row.protocol.name(), "concurrency": row.concurrency,
            "server": row.real.to_json(), "echo": row.echo.to_json(),
            "ratioToEcho": transport_ratio.map(|r| round(r, 4)),
            "pgbench": baseline.map(|b| b.to_json()),
            "ratioToPgbench": store_ratio.map(|r| round(r, 4)),
            "serverRssKiB": row.server_rss_kib,
        }));
    }
    table.print();
    println!(
        "\nx echo: calls/s over the echo server's for the same calls and answer bytes (the transport's limit). \
         x pgbench: creates/s over pgbench's transactions/s writing as many rows each, with min(conc, {}) clients \
         (the server's connections).",
        pgbench::SERVER_CONNECTIONS
    );
    for (name, profile) in profiles {
        println!("{name} writes per call: {}", profile.describe());
    }
    for (protocol, path, bytes) in recorded.sizes() {
        println!("answer of {path} over {protocol}: {bytes} bytes");
    }
    println!("bc-server resident memory: {} idle, {} at the end", mib(rss_idle), mib(rss_end));
    json!({
        "machine": machine(),
        "settings": {"seconds": settings.seconds, "warmupSeconds": settings.warmup,
            "concurrency": settings.concurrency, "listSize": settings.list_size,
            "pgbenchClients": format!("min(concurrency, {})", pgbench::SERVER_CONNECTIONS)},
        "writeProfiles": profiles.iter().map(|(k, p)| (k.to_string(), p.to_json())).collect::<serde_json::Map<_, _>>(),
        "answerBytes": recorded.sizes().iter().map(|(p, path, b)| json!({"protocol": p, "path": path, "bytes": b})).collect::<Vec<_>>(),
        "serverRssKiB": {"idle": rss_idle, "end": rss_end},
        "runs": runs,
    })
}
