//! Scale: one tenant with many clusters on one `bc-server` (and two `bc-worker`s) on a fresh
//! Postgres database, with the fake cloud answering at once. It measures, in order:
//!
//! - creating N clusters (default 10,000, each with 2 node pools) through the API over gRPC, 16
//!   calls at a time, with the workers stopped: how long it took;
//! - walks of the whole `kubernetesClusters.list` in pages of 100 (cursor paging) over gRPC: p50
//!   and p99 of a page against the goal of under 100 ms, and the time of a walk; every cluster
//!   must come exactly once in each walk, or the program fails;
//! - `kubernetesClusters.get` of random clusters for a few seconds, one call at a time: p50, p99;
//! - `bc-server`'s CPU (user plus system time from `/proc/<pid>/stat`, as a percentage of one
//!   core) and resident memory at idle, without watches and then with 1,000 `Events.Watch`
//!   streams open (gRPC server streams over a few HTTP/2 connections, held by operators: a
//!   principal may hold 16);
//! - the N clusters converging to `ready` with the workers let go, as `bench/converge.rs`
//!   measures it (time to all ready, passes/s), while the watches receive the clusters' events:
//!   the server's CPU and peak memory meanwhile, the events the watchers received, and whether
//!   each received every cluster's `ready` event (the program reports a shortfall; it does not
//!   fail on it).
//!
//! Prints a table; writes `bench/results/scale.json` with the machine's description.
//!
//! `cargo bench --bench scale`; a small run: `BC_BENCH_SCALE_CLUSTERS=300
//! BC_BENCH_SCALE_WATCHES=100 cargo bench --bench scale`. Settings (environment):
//! `BC_BENCH_SCALE_CLUSTERS` (10000), `BC_BENCH_SCALE_WATCHES` (1000),
//! `BC_BENCH_SCALE_PAGE_SIZE` (100), `BC_BENCH_SCALE_WALKS` (3), `BC_BENCH_SCALE_GET_SECONDS`
//! (5), `BC_BENCH_SCALE_IDLE_SECONDS`, each CPU window at idle (10: the watches' periodic
//! access check runs every 10 s), `BC_BENCH_SCALE_WATCHES_PER_CONNECTION` (50),
//! `BC_BENCH_SCALE_WATCH_TYPES`, the watches' type prefix (`kubernetes.cluster.`; empty for
//! every event of the tenant), `BC_BENCH_CONVERGING_MS` (100), `BC_BENCH_POSTGRES_URL`.

#[path = "common/mod.rs"]
mod common;

#[path = "scale/converge.rs"]
mod converge;
#[path = "scale/fill.rs"]
mod fill;
#[path = "scale/reads.rs"]
mod reads;
#[path = "scale/watches.rs"]
mod watches;

use std::collections::HashSet;
use std::time::Duration;

use better_compute::store::Store;
use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};

use common::cpu::CpuWindow;
use common::pg::{Database, host_port};
use common::pgwire::CountingProxy;
use common::platform::{self, Api};
use common::procs::{Process, Server, ServerOptions, WorkerOptions, mib, start_worker};
use common::report::{Table, machine, write_json};
use common::stats::{Sample, round};
use watches::{Tally, Watches};

/// The tenant that holds the clusters.
const TENANT: &str = "scale";

/// Workers that converge the clusters.
const WORKERS: usize = 2;

/// Calls in flight while the clusters are created.
const CREATE_CONCURRENCY: usize = 16;

/// The goal for a page of the list, printed beside its p99.
const LIST_PAGE_GOAL_MS: f64 = 100.0;

/// How long the watches may go without an event before the run stops waiting for the rest.
const DELIVERY_QUIET: Duration = Duration::from_secs(30);

/// The GKE account's rate limit: pacing never waits at these call rates (as in `converge`).
const NO_LIMIT: (i64, i64) = (1_000_000, 1);

/// How a run is set.
struct Settings {
    clusters: usize,
    watches: usize,
    page_size: i32,
    walks: usize,
    get_seconds: u64,
    idle_seconds: u64,
    watches_per_connection: usize,
    watch_types: String,
    converging_ms: u64,
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            clusters: common::env_or("BC_BENCH_SCALE_CLUSTERS", 10_000),
            watches: common::env_or("BC_BENCH_SCALE_WATCHES", 1000),
            page_size: common::env_or("BC_BENCH_SCALE_PAGE_SIZE", 100),
            walks: common::env_or("BC_BENCH_SCALE_WALKS", 3).max(1),
            get_seconds: common::env_or("BC_BENCH_SCALE_GET_SECONDS", 5),
            idle_seconds: common::env_or("BC_BENCH_SCALE_IDLE_SECONDS", 10).max(1),
            watches_per_connection: common::env_or("BC_BENCH_SCALE_WATCHES_PER_CONNECTION", 50),
            watch_types: std::env::var("BC_BENCH_SCALE_WATCH_TYPES").unwrap_or_else(|_| "kubernetes.cluster.".into()),
            converging_ms: common::env_or("BC_BENCH_CONVERGING_MS", 100),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "clusters": self.clusters, "nodePoolsPerCluster": 2, "watches": self.watches,
            "pageSize": self.page_size, "walks": self.walks, "getSeconds": self.get_seconds,
            "idleSeconds": self.idle_seconds, "watchesPerConnection": self.watches_per_connection,
            "watchTypes": self.watch_types, "workers": WORKERS, "convergingMs": self.converging_ms,
            "createConcurrency": CREATE_CONCURRENCY, "fakeCloudLatencyMs": 0,
        })
    }
}

fn main() {
    if !common::started_by_cargo_bench() {
        println!("scale benchmark: run it with `cargo bench --bench scale`");
        return;
    }
    let settings = Settings::from_env();
    if !(1..=500).contains(&settings.page_size) {
        eprintln!("scale benchmark: BC_BENCH_SCALE_PAGE_SIZE is {}; accepted: 1 to 500", settings.page_size);
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(run(&settings)) {
        Ok(figures) => report(&settings, &figures),
        Err(error) => {
            eprintln!("scale benchmark failed: {error}");
            std::process::exit(1);
        }
    }
}

/// Resident memory of `bc-server` at the moments the run names.
#[derive(Default)]
struct Memory {
    started: Option<u64>,
    filled: Option<u64>,
    watched: Option<u64>,
    end: Option<u64>,
}

/// Everything a run measured.
struct Figures {
    create_seconds: f64,
    walks: Vec<reads::Walk>,
    gets: Sample,
    idle_cpu: Option<f64>,
    watched_cpu: Option<f64>,
    watch_connections: usize,
    watch_opening: Duration,
    converged: converge::Converged,
    delivery_wait: Duration,
    tally: Tally,
    memory: Memory,
}

impl Figures {
    /// Every page of every walk.
    fn pages(&self) -> Sample {
        let mut pages = Sample::default();
        for walk in &self.walks {
            pages.merge(walk.pages.clone());
            pages.elapsed += walk.pages.elapsed;
        }
        pages
    }
}

async fn run(settings: &Settings) -> Result<Figures, String> {
    let logs = tempfile::Builder::new().prefix("bc-bench-scale").tempdir().map_err(|e| e.to_string())?;
    let database = Database::create(&common::pg::admin_url()).await?;
    let proxy = CountingProxy::start(&host_port(&common::pg::admin_url())).await?;
    let options = ServerOptions { max_clusters_per_tenant: 1_000_000, ..ServerOptions::default() };
    let server = Server::start(&database.url, logs.path(), &options).await?;
    let pid = server.process.pid();
    let cloud = FakeCloud::start(FakeCloudConfig {
        operation_duration: Duration::ZERO,
        activation_delay: Duration::ZERO,
        ..FakeCloudConfig::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let api = Api::new(&server.endpoint);
    let admin = server.admin_token.clone();
    let platform = platform::seed_platform(&api, &admin, &cloud).await?;
    let (requests, per_seconds) = NO_LIMIT;
    let limit =
        json!({"accountId": platform.gke_account, "rateLimits": [{"requests": requests, "perSeconds": per_seconds}]});
    api.ok(&admin, "/api/platform/accounts/update", limit).await?;
    let token = platform::seed_tenant(&api, &admin, &platform, TENANT, 0).await?;
    let watchers = fill::operators(&api, &admin, settings.watches.div_ceil(fill::WATCHES_PER_PRINCIPAL)).await?;
    let mut memory = Memory { started: server.process.rss_kib(), ..Memory::default() };
    println!(
        "scale benchmark: bc-server (pid {pid}) on Postgres {}: {} clusters, {} watches",
        database.name, settings.clusters, settings.watches
    );

    // The workers start (migration check, listener) and are stopped before the creates, so that
    // what they do later is measured from SIGCONT alone.
    let worker_options = WorkerOptions { converging_ms: settings.converging_ms, ..WorkerOptions::default() };
    let via_proxy = database.url_via(proxy.port);
    let mut workers: Vec<Process> = (0..WORKERS)
        .map(|n| start_worker(n + 1, &via_proxy, &server.secret_key, logs.path(), &worker_options))
        .collect::<Result<_, _>>()?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for worker in &mut workers {
        if !worker.running() {
            return Err(format!("{} exited:\n{}", worker.name, worker.log_tail(20)));
        }
    }
    workers.iter().try_for_each(|worker| worker.signal("STOP"))?;

    let (ids, took) = fill::create_clusters(
        &server.endpoint,
        &token,
        TENANT,
        &platform.gke_pool,
        settings.clusters,
        CREATE_CONCURRENCY,
    )
    .await?;
    let create_seconds = took.as_secs_f64();
    println!(
        "  created {} clusters ({} node pools) over gRPC, {CREATE_CONCURRENCY} at a time, in {create_seconds:.1} s \
         ({:.0}/s)",
        ids.len(),
        ids.len() * 2,
        ids.len() as f64 / create_seconds.max(1e-9)
    );
    memory.filled = server.process.rss_kib();
    database.analyze().await?;

    let channel = fill::authed_channel(&server.endpoint, &token).await?;
    let expected: HashSet<String> = ids.iter().cloned().collect();
    let mut walks = Vec::new();
    for n in 1..=settings.walks {
        let walk = reads::walk(&channel, TENANT, settings.page_size, &expected).await?;
        println!(
            "  walk {n}: {} pages of {} in {:.2} s, p50 {:.1} ms, p99 {:.1} ms, every cluster once",
            walk.pages.latencies_us.len(),
            settings.page_size,
            walk.seconds,
            walk.pages.percentile_ms(0.5),
            walk.pages.percentile_ms(0.99)
        );
        walks.push(walk);
    }
    let gets = reads::gets(&channel, TENANT, &ids, Duration::from_secs(settings.get_seconds)).await;
    println!(
        "  get: {} calls, p50 {:.2} ms, p99 {:.2} ms, {} failed",
        gets.latencies_us.len(),
        gets.percentile_ms(0.5),
        gets.percentile_ms(0.99),
        gets.failed()
    );

    let idle_window = Duration::from_secs(settings.idle_seconds);
    let idle_cpu = cpu_over(pid, idle_window).await;
    println!("  idle without watches: bc-server CPU {}", percent(idle_cpu));

    let store = Store::connect(&database.url, 2).await.map_err(|e| e.to_string())?;
    let head = store.event_last_seq().await.map_err(|e| e.to_string())?;
    let watches = Watches::open(
        &server.endpoint,
        &watchers,
        settings.watches,
        settings.watches_per_connection,
        TENANT,
        head,
        &settings.watch_types,
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    if watches.open_count() < settings.watches {
        return Err(format!(
            "{} of {} watches ended before any event: {:?}",
            settings.watches - watches.open_count(),
            settings.watches,
            watches.tally(0).endings
        ));
    }
    let watched_cpu = cpu_over(pid, idle_window).await;
    memory.watched = server.process.rss_kib();
    println!(
        "  {} watches open over {} connections (opened in {:.1} s): bc-server CPU {}, {}",
        settings.watches,
        watches.connections,
        watches.opening.as_secs_f64(),
        percent(watched_cpu),
        mib(memory.watched)
    );

    let pool = database.pool().await?;
    let limit = Duration::from_secs(120 + settings.clusters as u64);
    let converged = converge::to_ready(&workers, &proxy, &pool, pid, settings.clusters, limit).await?;
    println!(
        "  all {} ready after {:.2} s with {WORKERS} workers ({:.0} passes/s); bc-server CPU {} meanwhile",
        settings.clusters,
        converged.seconds,
        converged.passes_per_second(),
        percent(converged.server_cpu_percent)
    );
    let delivery_wait = watches.settle(settings.clusters as u64, DELIVERY_QUIET).await;
    let tally = watches.tally(settings.clusters as u64);
    memory.end = server.process.rss_kib();
    let (watch_connections, watch_opening) = (watches.connections, watches.opening);
    drop(watches);
    Ok(Figures {
        create_seconds,
        walks,
        gets,
        idle_cpu,
        watched_cpu,
        watch_connections,
        watch_opening,
        converged,
        delivery_wait,
        tally,
        memory,
    })
}

/// `pid`'s CPU over the next `window`, as a percentage of one core.
async fn cpu_over(pid: u32, window: Duration) -> Option<f64> {
    let cpu = CpuWindow::open(pid)?;
    tokio::time::sleep(window).await;
    cpu.percent_of_core()
}

fn percent(value: Option<f64>) -> String {
    value.map(|p| format!("{p:.1}% of a core")).unwrap_or_else(|| "-".to_owned())
}

fn report(settings: &Settings, figures: &Figures) {
    let pages = figures.pages();
    let page_p99 = pages.percentile_ms(0.99);
    let walk_seconds = figures.walks.iter().map(|w| w.seconds).sum::<f64>() / figures.walks.len().max(1) as f64;
    let n = settings.clusters;
    let tally = &figures.tally;
    let goal = if page_p99 < LIST_PAGE_GOAL_MS { "met" } else { "not met" };
    let memory = &figures.memory;
    let mut table = Table::new(&["figure", "value", "goal"]);
    let mut row = |figure: &str, value: String, goal: &str| table.row(vec![figure.to_owned(), value, goal.to_owned()]);
    row(
        &format!("create {n} clusters ({} node pools), gRPC c={CREATE_CONCURRENCY}", 2 * n),
        format!("{:.1} s ({:.0}/s)", figures.create_seconds, n as f64 / figures.create_seconds.max(1e-9)),
        "",
    );
    row(&format!("list page of {}, p50", settings.page_size), format!("{:.1} ms", pages.percentile_ms(0.5)), "");
    row(
        &format!("list page of {}, p99", settings.page_size),
        format!("{page_p99:.1} ms"),
        &format!("under {LIST_PAGE_GOAL_MS} ms: {goal}"),
    );
    row(
        &format!(
            "list walk of {n} ({} pages), mean of {}",
            pages.latencies_us.len() / figures.walks.len().max(1),
            figures.walks.len()
        ),
        format!("{walk_seconds:.2} s"),
        "",
    );
    row(
        "get, p50 / p99 (c=1)",
        format!(
            "{:.2} / {:.2} ms ({} calls)",
            figures.gets.percentile_ms(0.5),
            figures.gets.percentile_ms(0.99),
            figures.gets.latencies_us.len()
        ),
        "",
    );
    row(&format!("all ready, {WORKERS} workers"), format!("{:.2} s", figures.converged.seconds), "");
    row("passes/s to ready", format!("{:.0}", figures.converged.passes_per_second()), "");
    row("bc-server CPU idle, no watches", percent(figures.idle_cpu), "");
    row(
        &format!("bc-server CPU idle, {} watches ({} connections)", settings.watches, figures.watch_connections),
        percent(figures.watched_cpu),
        "",
    );
    row("bc-server CPU while converging (events flowing)", percent(figures.converged.server_cpu_percent), "");
    row("bc-server RSS at start / after creates", format!("{} / {}", mib(memory.started), mib(memory.filled)), "");
    row(
        "bc-server RSS idle with watches / peak converging / end",
        format!("{} / {} / {}", mib(memory.watched), mib(figures.converged.server_rss_peak_kib), mib(memory.end)),
        "",
    );
    row(&format!("events received by {} watchers", tally.watchers), tally.events.to_string(), "");
    row("cluster.ready per watcher, least / most", format!("{} / {} of {n}", tally.ready_least, tally.ready_most), "");
    row(
        &format!("watchers short of {n} ready events"),
        tally.short.to_string(),
        if tally.short == 0 { "" } else { "see below" },
    );
    row("waited for delivery after the last ready", format!("{:.2} s", figures.delivery_wait.as_secs_f64()), "");
    println!();
    table.print();
    if tally.short > 0 || !tally.endings.is_empty() {
        println!(
            "\nNOT EVERY WATCHER RECEIVED EVERY READY EVENT: {} of {} short (after {:.0} s without a new event); \
             streams ended: {:?}",
            tally.short,
            tally.watchers,
            DELIVERY_QUIET.as_secs_f64(),
            tally.endings
        );
    }
    let figures_json = json!({
        "machine": machine(),
        "settings": settings.to_json(),
        "create": {"seconds": round(figures.create_seconds, 3), "concurrency": CREATE_CONCURRENCY},
        "listPages": pages.to_json(),
        "listPageGoalMs": LIST_PAGE_GOAL_MS,
        "listWalkSeconds": figures.walks.iter().map(|w| round(w.seconds, 3)).collect::<Vec<_>>(),
        "get": figures.gets.to_json(),
        "ready": figures.converged.to_json(),
        "serverCpuPercentOfCore": {
            "idle": figures.idle_cpu.map(|p| round(p, 1)),
            "idleWithWatches": figures.watched_cpu.map(|p| round(p, 1)),
            "converging": figures.converged.server_cpu_percent.map(|p| round(p, 1)),
        },
        "serverRssKiB": {
            "start": memory.started, "afterCreates": memory.filled, "idleWithWatches": memory.watched,
            "peakConverging": figures.converged.server_rss_peak_kib, "end": memory.end,
        },
        "watches": {
            "open": tally.watchers, "connections": figures.watch_connections,
            "openingSeconds": round(figures.watch_opening.as_secs_f64(), 3),
            "eventsReceived": tally.events, "readyLeast": tally.ready_least, "readyMost": tally.ready_most,
            "watchersShort": tally.short, "endings": tally.endings,
            "deliveryWaitSeconds": round(figures.delivery_wait.as_secs_f64(), 3),
        },
    });
    match write_json("scale", &figures_json) {
        Ok(path) => println!("\nwritten to {}", path.display()),
        Err(error) => eprintln!("cannot write the results: {error}"),
    }
}
