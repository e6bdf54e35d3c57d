//! The bounded soak: for a set number of minutes, tenants create, update, read and delete
//! clusters against a real `bc-server` and two `bc-worker` processes on Postgres, while the fake
//! GKE fails a share of its calls, a worker is killed with SIGKILL and restarted at random, and
//! Postgres is restarted once. Then the faults stop, everything settles, and the invariants are
//! checked and printed: calls made and failed (only `UNAVAILABLE`, only while Postgres
//! restarted), leaks at the provider, rows whose provider object is missing, clusters created
//! twice, events with a gap or a repeat, acknowledged writes lost, and resident memory over time
//! (judged in runs of 5 minutes or more: `bc-server`'s may not trend upward under load).
//! Exits 1 if any invariant broke.
//!
//! `cargo bench --bench soak` runs 10 minutes (the nightly mode); `-- --minutes 2` (or
//! `BC_SOAK_MINUTES=2`) is what CI runs. Postgres is a private server started for the run
//! (`initdb` in a temporary directory), so its restart touches nobody else; as root it runs as
//! the `postgres` user. Writes `bench/results/soak-<minutes>m.json`.

#[path = "common/mod.rs"]
mod common;

#[path = "soak/chaos.rs"]
mod chaos;
#[path = "soak/invariants.rs"]
mod invariants;
#[path = "soak/load.rs"]
mod load;
#[path = "soak/load_balancers.rs"]
mod load_balancers;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::json;

use chaos::{Sightings, WorkerRecipe, Workers};
use common::pg::{Database, PrivatePostgres};
use common::platform::{self, Api};
use common::procs::{Server, ServerOptions, WorkerOptions, mib};
use common::report::{Table, machine, write_json};
use invariants::{Check, Window};

/// Tenants running load.
const TENANTS: usize = 4;
/// Workers.
const WORKERS: usize = 2;
/// The share of provider calls (GKE and DigitalOcean) the fake cloud fails (503) during the soak.
const PROVIDER_ERROR_RATE: f64 = 0.1;
/// After Postgres is back, how long the server may still answer `UNAVAILABLE`.
const RESTART_GRACE: Duration = Duration::from_secs(10);
/// The longest the system may take to settle once the faults stop.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

fn main() {
    if !common::started_by_cargo_bench() {
        println!(
            "soak: run it with `cargo bench --bench soak` (10 minutes) or `cargo bench --bench soak -- --minutes 2`"
        );
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let from_args = args.iter().position(|a| a == "--minutes").and_then(|i| args.get(i + 1)?.parse::<f64>().ok());
    let minutes = from_args.unwrap_or_else(|| common::env_or("BC_SOAK_MINUTES", 10.0));
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(soak(minutes)) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("soak: an invariant broke");
            std::process::exit(1);
        }
        Err(error) => {
            eprintln!("soak failed: {error}");
            std::process::exit(1);
        }
    }
}

async fn soak(minutes: f64) -> Result<bool, String> {
    let duration = Duration::from_secs_f64(minutes * 60.0);
    let logs = tempfile::Builder::new().prefix("bc-soak").tempdir().map_err(|e| e.to_string())?;
    let postgres = tokio::task::spawn_blocking(PrivatePostgres::start).await.map_err(|e| e.to_string())??;
    let database = Database::create(&postgres.admin_url).await?;
    let server = Server::start(&database.url, logs.path(), &ServerOptions::default()).await?;
    let cloud = Arc::new(
        FakeCloud::start(FakeCloudConfig {
            operation_duration: Duration::from_millis(200),
            activation_delay: Duration::from_millis(200),
            ..FakeCloudConfig::default()
        })
        .await
        .map_err(|e| e.to_string())?,
    );
    let api = Api::new(&server.endpoint);
    let platform = platform::seed_platform(&api, &server.admin_token, &cloud).await?;
    let mut tenants = Vec::new();
    for i in 0..TENANTS {
        let id = format!("soak-{}", (b'a' + i as u8) as char);
        let quota = load_balancers::QUOTA as i64;
        tenants.push((id.clone(), platform::seed_tenant(&api, &server.admin_token, &platform, &id, quota).await?));
    }
    let recipe = WorkerRecipe {
        database_url: database.url.clone(),
        secret_key: server.secret_key.clone(),
        logs: logs.path().to_owned(),
        options: WorkerOptions { lease_ms: 5000, converging_ms: 500, settled_ms: 5000, ..WorkerOptions::default() },
    };
    let workers: Workers =
        Arc::new(Mutex::new((0..WORKERS).map(|slot| recipe.start(slot).map(Some)).collect::<Result<_, _>>()?));
    // Load balancers join when this build serves them and a first one can be made here.
    let lb_skipped = if !platform::serves(load_balancers::SERVICE) {
        Some(format!("this build does not serve {}", load_balancers::SERVICE))
    } else {
        let tenant = load::Tenant { id: tenants[0].0.clone(), token: tenants[0].1.clone() };
        load_balancers::probe(&api, &tenant, &platform.do_pool)
            .await
            .err()
            .map(|e| format!("a first create failed: {e}"))
    };
    println!(
        "soak: {minutes} min on a private Postgres (port {}), bc-server (pid {}), {WORKERS} workers, {TENANTS} tenants; \
         the fake cloud fails {:.0}% of provider calls; logs in {}",
        postgres.port,
        server.process.pid(),
        PROVIDER_ERROR_RATE * 100.0,
        logs.path().display()
    );

    // The chaos, and the load, until `stop`.
    cloud.set_error_rate("/v1/", PROVIDER_ERROR_RATE, 503);
    cloud.set_error_rate("/v2/", PROVIDER_ERROR_RATE, 503);
    match &lb_skipped {
        None => println!("  load balancers: created, updated and deleted beside the clusters"),
        Some(reason) => println!("  load balancers: not exercised, {reason}"),
    }
    let started = Instant::now();
    let stop = started + duration;
    let ledger: load::Shared = Arc::default();
    let sightings: Arc<Mutex<Sightings>> = Arc::default();
    let mut loads = Vec::new();
    for (id, token) in &tenants {
        let tenant = load::Tenant { id: id.clone(), token: token.clone() };
        loads.push(tokio::spawn(load::run(
            api.clone(),
            tenant,
            platform.gke_pool.clone(),
            ledger.clone(),
            started,
            stop,
        )));
        if lb_skipped.is_none() {
            let tenant = load::Tenant { id: id.clone(), token: token.clone() };
            let pool = platform.do_pool.clone();
            loads.push(tokio::spawn(load_balancers::run(api.clone(), tenant, pool, ledger.clone(), started, stop)));
        }
    }
    let kill_every = if minutes <= 3.0 { (10, 25) } else { (15, 60) };
    let killer = tokio::spawn(chaos::kill_workers(workers.clone(), recipe.clone(), kill_every, stop));
    let sample_every = Duration::from_secs_f64((duration.as_secs_f64() / 24.0).max(5.0));
    let sampler =
        tokio::spawn(chaos::sample_memory(server.process.pid(), workers.clone(), sample_every, started, stop));
    let watcher = tokio::spawn(chaos::watch_cloud(cloud.clone(), sightings.clone(), Duration::from_secs(1), stop));
    tokio::time::sleep(duration / 2).await;
    let restart_from = started.elapsed();
    let postgres = Arc::new(postgres);
    let restarting = postgres.clone();
    let down = tokio::task::spawn_blocking(move || restarting.restart()).await.map_err(|e| e.to_string())??;
    let window = Window { from: restart_from, to: started.elapsed() + RESTART_GRACE };
    println!("  Postgres restarted at {:.1} s: it took {:.1} s", restart_from.as_secs_f64(), down.as_secs_f64());
    for task in loads {
        task.await.map_err(|e| e.to_string())?;
    }
    let kills = killer.await.map_err(|e| e.to_string())?;
    let mut memory = sampler.await.map_err(|e| e.to_string())?;
    watcher.await.map_err(|e| e.to_string())?;
    println!("  load stopped at {:.1} s after {kills} worker kills; settling", started.elapsed().as_secs_f64());

    // Settle: no faults, every worker up, until every live cluster is ready and the provider
    // holds exactly the live clusters.
    cloud.set_error_rate("/v1/", 0.0, 503);
    cloud.set_error_rate("/v2/", 0.0, 503);
    chaos::ensure_workers(&workers, &recipe)?;
    let pool = database.pool().await?;
    let settle_started = Instant::now();
    let settled = common::wait_for("settled", SETTLE_LIMIT, Duration::from_millis(500), || {
        let (pool, cloud, sightings) = (pool.clone(), cloud.clone(), sightings.clone());
        let (api, tenants, with_lbs) = (api.clone(), tenants.clone(), lb_skipped.is_none());
        async move {
            if with_lbs {
                let live = load_balancers::live(&api, &tenants).await.ok()?;
                let at_provider =
                    cloud.inspect()["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default();
                if !load_balancers::settled(&at_provider, &live) {
                    return None;
                }
            }
            chaos::look(&cloud, &mut sightings.lock().unwrap_or_else(|p| p.into_inner()));
            let rows = invariants::rows(&pool).await.ok()?;
            let clusters = cloud.inspect()["gke"]["clusters"].as_array().cloned().unwrap_or_default();
            let labels: std::collections::BTreeSet<String> = clusters
                .iter()
                .map(|c| c["labels"]["better-compute-cluster"].as_str().unwrap_or_default().to_owned())
                .collect();
            let live: std::collections::BTreeSet<String> = rows.live.keys().cloned().collect();
            let ready = rows.live.values().all(|state| state == "ready");
            (ready && labels == live && clusters.len() == live.len()).then_some(())
        }
    })
    .await;
    let settle_seconds = settle_started.elapsed().as_secs_f64();
    println!("  {} after {settle_seconds:.1} s", if settled.is_ok() { "settled" } else { "NOT settled" });
    memory.push(chaos::MemorySample {
        at: started.elapsed(),
        server_kib: server.process.rss_kib(),
        workers_kib: workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|w| w.as_ref().and_then(|w| w.rss_kib()))
            .collect(),
    });

    // The invariants.
    let ledger = Arc::try_unwrap(ledger).map_err(|_| "the load still runs")?.into_inner().unwrap_or_default();
    let sightings = Arc::try_unwrap(sightings).map_err(|_| "the watcher still runs")?.into_inner().unwrap_or_default();
    let rows = invariants::rows(&pool).await?;
    let cloud_clusters = cloud.inspect()["gke"]["clusters"].as_array().cloned().unwrap_or_default();
    let mut checks = vec![invariants::failed_calls(&ledger, Some(window))];
    checks.extend(invariants::memory_flat(&memory, duration));
    checks.extend(invariants::provider(&cloud_clusters, &rows, &sightings));
    checks.push(invariants::unsettled(&rows));
    checks.push(invariants::acknowledged(&ledger, &rows));
    // Reading through the API first numbers every committed event, so the store's check after
    // it finds them all numbered.
    let through_api = invariants::events_api(&api, &tenants).await?;
    let (outbox, events) = invariants::outbox(&pool).await?;
    checks.push(outbox);
    checks.extend(through_api);
    if lb_skipped.is_none() {
        let live = load_balancers::live(&api, &tenants).await?;
        let at_provider = cloud.inspect()["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default();
        checks.extend(load_balancers::checks(&at_provider, &live, &sightings));
        checks.push(load_balancers::acknowledged(&api, &tenants, &ledger).await?);
    }

    let passed = checks.iter().all(|c| c.broken == 0);
    print_report(&ledger, &checks, &memory, window, kills, settle_seconds, events, &rows, &sightings);
    let figures = json!({
        "machine": machine(),
        "loadBalancers": lb_skipped.clone().unwrap_or_else(|| "exercised".to_owned()),
        "settings": {"minutes": minutes, "tenants": TENANTS, "workers": WORKERS, "providerErrorRate": PROVIDER_ERROR_RATE,
            "workerLeaseMs": recipe.options.lease_ms, "convergingMs": recipe.options.converging_ms,
            "settledMs": recipe.options.settled_ms},
        "calls": ledger.calls,
        "failures": ledger.failures.iter().map(|f| json!({"atSeconds": f.at.as_secs_f64(), "path": f.path, "code": f.code, "message": f.message})).collect::<Vec<_>>(),
        "postgresRestart": {"fromSeconds": window.from.as_secs_f64(), "downSeconds": down.as_secs_f64()},
        "workerKills": kills,
        "settleSeconds": settle_seconds,
        "loadBalancersMade": {"created": ledger.lb_created.len(), "deleted": ledger.lb_deleted.len()},
        "clusters": {"created": ledger.created.len(), "deleted": ledger.deleted.len(), "liveAtEnd": rows.live.len(),
            "mostAtProviderAtOnce": sightings.most},
        "events": events,
        "invariants": checks.iter().map(|c| json!({"name": c.name, "broken": c.broken, "examples": c.examples})).collect::<Vec<_>>(),
        "memory": memory.iter().map(|m| json!({"atSeconds": m.at.as_secs(), "serverKiB": m.server_kib, "workersKiB": m.workers_kib})).collect::<Vec<_>>(),
        "passed": passed,
    });
    let name = format!("soak-{}m", minutes.round() as u64);
    match write_json(&name, &figures) {
        Ok(path) => println!("\nwritten to {}", path.display()),
        Err(error) => eprintln!("cannot write the results: {error}"),
    }
    if !passed {
        // Keep the logs for whoever looks into it.
        println!("logs kept in {}", logs.keep().display());
    }
    Ok(passed)
}

#[allow(clippy::too_many_arguments)]
fn print_report(
    ledger: &load::Ledger,
    checks: &[Check],
    memory: &[chaos::MemorySample],
    window: Window,
    kills: usize,
    settle_seconds: f64,
    events: u64,
    rows: &invariants::Rows,
    sightings: &Sightings,
) {
    let made: u64 = ledger.calls.values().sum();
    println!("\ncalls made: {made}");
    for (path, n) in &ledger.calls {
        println!("  {n:>7}  {path}");
    }
    let mut codes: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for failure in &ledger.failures {
        *codes.entry(failure.code.as_str()).or_default() += 1;
    }
    println!(
        "calls failed: {}{}",
        ledger.failures.len(),
        codes.iter().map(|(code, n)| format!(", {code} {n}")).collect::<String>()
    );
    println!(
        "Postgres restart window (UNAVAILABLE allowed): {:.1} s to {:.1} s; worker kills: {kills}; settled in {settle_seconds:.1} s",
        window.from.as_secs_f64(),
        window.to.as_secs_f64()
    );
    println!(
        "clusters: {} created, {} deleted, {} live at the end; at most {} at the provider at once; {} events",
        ledger.created.len(),
        ledger.deleted.len(),
        rows.live.len(),
        sightings.most,
        events
    );
    if !ledger.lb_created.is_empty() {
        println!("load balancers: {} created, {} deleted", ledger.lb_created.len(), ledger.lb_deleted.len());
    }
    println!();
    let mut table = Table::new(&["invariant", "broken"]);
    for check in checks {
        table.row(vec![
            format!("{} {}", if check.broken == 0 { "ok  " } else { "FAIL" }, check.name),
            check.broken.to_string(),
        ]);
    }
    table.print();
    for check in checks.iter().filter(|c| c.broken > 0) {
        println!("\n{}:", check.name);
        for example in &check.examples {
            println!("  {example}");
        }
    }
    println!("\nresident memory over time:");
    let workers = memory.iter().map(|m| m.workers_kib.len()).max().unwrap_or(0);
    let mut headers = vec!["at s".to_owned(), "bc-server".to_owned()];
    headers.extend((1..=workers).map(|n| format!("bc-worker#{n}")));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&header_refs);
    for sample in memory {
        let mut row = vec![format!("{}", sample.at.as_secs()), mib(sample.server_kib)];
        row.extend(sample.workers_kib.iter().map(|k| mib(*k)));
        table.row(row);
    }
    table.print();
}
