//! Convergence: N clusters (100 and 1,000) created through the API against a fake cloud with
//! zero latency, with 1 and 2 `bc-worker` processes on Postgres: the time until all are `ready`
//! and until all are deleted, reconcile passes per second, and store statements per pass (the
//! workers reach Postgres through a proxy that counts what they execute), GKE calls per pass and
//! takes from the account's pacing budget per call. The API calls are made while the workers
//! are stopped, so the times are the workers' alone. Resident memory of `bc-server` and the
//! workers at idle and at the end of each run. Prints a table; writes
//! `bench/results/converge.json`.
//!
//! `cargo bench --bench converge`. Settings (environment): `BC_BENCH_CLUSTERS` (`100,1000`),
//! `BC_BENCH_WORKERS` (`1,2`), `BC_BENCH_CONVERGING_MS`, the workers' interval while converging
//! (default 100: the spec's 30 s would measure the interval, not the machine),
//! `BC_BENCH_POSTGRES_URL` (the machine's Postgres), `BC_BENCH_RATE_LIMIT`, the GKE account's
//! rate limit as `REQUESTS/SECONDS` (default `1000000/1`: pacing still takes budget from the
//! store before each call but never waits, so the figures measure its cost, not the limit), or
//! `published` to keep the provider's (3,000 a minute: 1,000 clusters would then wait on it).

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};
use sqlx::Row;

use common::pg::Database;
use common::pgwire::{CountingProxy, Counts, delta, matching, total};
use common::platform::{self, Api};
use common::procs::{Process, Server, ServerOptions, WorkerOptions, mib, start_worker};
use common::report::{Table, machine, write_json};
use common::stats::round;

/// The SQL that records a pass's result (`Store::work_complete`): one execution per pass, the
/// `DELETE` when the pass removed its object.
const PASS_RECORDED: &str = "last_pass_at = $6, last_pass_micros = $11";
const PASS_REMOVED: &str = "DELETE FROM work_items WHERE kind = $1 AND object_id = $2 AND lease_owner = $3";
/// The SQL of a take from an account's pacing budget (`Store::pacing_take`): one execution per
/// take, which may hand out several calls.
const BUDGET_TAKEN: &str = "FROM provider_accounts WHERE id = $1 FOR UPDATE";

/// The Google project of the bench's GKE account (`platform::seed_platform`).
const GKE_PROJECT: &str = "bc-bench";

/// Tenants the clusters are spread over.
const TENANTS: usize = 10;

/// The GKE account's default rate limit: one pacing never waits on at this bench's call rates.
const NO_LIMIT: (i64, i64) = (1_000_000, 1);

fn main() {
    if !common::started_by_cargo_bench() {
        println!("converge benchmark: run it with `cargo bench --bench converge`");
        return;
    }
    let clusters = common::env_list("BC_BENCH_CLUSTERS", &[100, 1000]);
    let workers = common::env_list("BC_BENCH_WORKERS", &[1, 2]);
    let converging_ms: u64 = common::env_or("BC_BENCH_CONVERGING_MS", 100);
    let rate_limit = match rate_limit_setting() {
        Ok(limit) => limit,
        Err(error) => {
            eprintln!("converge benchmark: {error}");
            std::process::exit(2);
        }
    };
    println!("GKE account's rate limit: {}", describe(rate_limit));
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let result = runtime.block_on(async {
        let mut results = Vec::new();
        for &n in &clusters {
            for &w in &workers {
                let result = run(n, w, converging_ms, rate_limit).await?;
                println!(
                    "  {n} clusters, {w} worker(s): ready after {:.2} s, deleted after {:.2} s",
                    result.ready.seconds, result.deleted.seconds
                );
                results.push(result);
            }
        }
        Ok::<_, String>(results)
    });
    match result {
        Ok(results) => report(&results, converging_ms, rate_limit),
        Err(error) => {
            eprintln!("converge benchmark failed: {error}");
            std::process::exit(1);
        }
    }
}

/// The GKE account's rate limit from `BC_BENCH_RATE_LIMIT`: `(requests, per seconds)`, or `None`
/// for the provider's published limit.
fn rate_limit_setting() -> Result<Option<(i64, i64)>, String> {
    let Ok(text) = std::env::var("BC_BENCH_RATE_LIMIT") else {
        return Ok(Some(NO_LIMIT));
    };
    let text = text.trim();
    if text == "published" {
        return Ok(None);
    }
    let parsed = text.split_once('/').and_then(|(requests, seconds)| {
        Some((requests.trim().parse::<i64>().ok()?, seconds.trim().parse::<i64>().ok()?))
    });
    match parsed {
        Some((requests, seconds)) if requests >= 1 && (1..=86_400).contains(&seconds) => Ok(Some((requests, seconds))),
        _ => Err(format!(
            "BC_BENCH_RATE_LIMIT is {text:?}; accepted: REQUESTS/SECONDS (requests at least 1, seconds from 1 to \
             86400), e.g. 1000000/1, or `published`"
        )),
    }
}

/// The limit as the bench prints it.
fn describe(rate_limit: Option<(i64, i64)>) -> String {
    match rate_limit {
        Some((requests, seconds)) => {
            format!("{requests} calls per {seconds} s (BC_BENCH_RATE_LIMIT={requests}/{seconds})")
        }
        None => "the provider's published limit (BC_BENCH_RATE_LIMIT=published)".to_owned(),
    }
}

/// One phase (to ready, or to deleted).
struct Phase {
    /// From the first call to the last object done.
    seconds: f64,
    /// How long the calls themselves took.
    calls_seconds: f64,
    /// Passes recorded by the workers.
    passes: u64,
    /// Statements the workers executed.
    statements: Counts,
    /// Calls the fake GKE answered.
    provider_calls: u64,
}

impl Phase {
    fn passes_per_second(&self) -> f64 {
        self.passes as f64 / self.seconds.max(1e-9)
    }

    fn statements_per_pass(&self) -> f64 {
        total(&self.statements) as f64 / (self.passes.max(1)) as f64
    }

    /// Statements per pass without `BEGIN`/`COMMIT`/`ROLLBACK`.
    fn queries_per_pass(&self) -> f64 {
        let control: u64 = self
            .statements
            .iter()
            .filter(|(sql, _)| matches!(sql.as_str(), "BEGIN" | "COMMIT" | "ROLLBACK"))
            .map(|(_, n)| n)
            .sum();
        (total(&self.statements) - control) as f64 / (self.passes.max(1)) as f64
    }

    /// Takes from the account's pacing budget per provider call: below 1 when a take hands out
    /// calls ahead that later calls use.
    fn takes_per_call(&self) -> f64 {
        matching(&self.statements, BUDGET_TAKEN) as f64 / (self.provider_calls.max(1)) as f64
    }

    fn to_json(&self) -> Value {
        let mut top: Vec<(&String, &u64)> = self.statements.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        json!({
            "seconds": round(self.seconds, 3),
            "callsSeconds": round(self.calls_seconds, 3),
            "passes": self.passes,
            "passesPerSecond": round(self.passes_per_second(), 1),
            "statements": total(&self.statements),
            "statementsPerPass": round(self.statements_per_pass(), 2),
            "queriesPerPass": round(self.queries_per_pass(), 2),
            "providerCalls": self.provider_calls,
            "budgetTakes": matching(&self.statements, BUDGET_TAKEN),
            "byStatement": top.iter().take(25).map(|(sql, n)| json!({"sql": sql, "executions": n})).collect::<Vec<_>>(),
        })
    }
}

/// One run's figures.
struct Converged {
    clusters: usize,
    workers: usize,
    ready: Phase,
    deleted: Phase,
    server_rss: [Option<u64>; 2],
    worker_rss: Vec<[Option<u64>; 2]>,
}

async fn run(
    clusters: usize,
    workers: usize,
    converging_ms: u64,
    rate_limit: Option<(i64, i64)>,
) -> Result<Converged, String> {
    let logs = tempfile::Builder::new().prefix("bc-bench-converge").tempdir().map_err(|e| e.to_string())?;
    let database = Database::create(&common::pg::admin_url()).await?;
    let upstream = upstream_of(&common::pg::admin_url());
    let proxy = CountingProxy::start(&upstream).await?;
    let server_options = ServerOptions { max_clusters_per_tenant: 1_000_000, ..ServerOptions::default() };
    let server = Server::start(&database.url, logs.path(), &server_options).await?;
    let cloud = FakeCloud::start(FakeCloudConfig {
        operation_duration: Duration::ZERO,
        activation_delay: Duration::ZERO,
        ..FakeCloudConfig::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let api = Api::new(&server.endpoint);
    let platform = platform::seed_platform(&api, &server.admin_token, &cloud).await?;
    if let Some((requests, seconds)) = rate_limit {
        api.ok(
            &server.admin_token,
            "/api/platform/accounts/update",
            json!({"accountId": platform.gke_account, "rateLimits": [{"requests": requests, "perSeconds": seconds}]}),
        )
        .await?;
    }
    let mut tenants = Vec::new();
    for i in 0..TENANTS {
        let id = format!("conv-{i}");
        tenants.push((id.clone(), platform::seed_tenant(&api, &server.admin_token, &platform, &id, 0).await?));
    }
    let tenants = Arc::new(tenants);
    let options = WorkerOptions { converging_ms, ..WorkerOptions::default() };
    let via_proxy = database.url_via(proxy.port);
    let mut processes: Vec<Process> = (0..workers)
        .map(|n| start_worker(n + 1, &via_proxy, &server.secret_key, logs.path(), &options))
        .collect::<Result<_, _>>()?;
    // Let the workers start (migration check, metering row, listener) before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for worker in &mut processes {
        if !worker.running() {
            return Err(format!("{} exited:\n{}", worker.name, worker.log_tail(20)));
        }
    }
    let server_idle = server.process.rss_kib();
    let workers_idle: Vec<Option<u64>> = processes.iter().map(Process::rss_kib).collect();
    let pool = database.pool().await?;

    // The calls are made while the workers are stopped (SIGSTOP), so the times measure the
    // workers alone, from SIGCONT to the last cluster done, not how fast the API takes calls.
    let signal = |signal: &str| processes.iter().try_for_each(|p| p.signal(signal));
    signal("STOP")?;
    let started = Instant::now();
    let pool_id = platform.gke_pool.clone();
    let ids = call_all(&api, &tenants, clusters, move |tenant, i| {
        ("/api/compute/kubernetesClusters/create", platform::cluster_request(tenant, &pool_id, &format!("c{i}")))
    })
    .await?;
    let calls_seconds = started.elapsed().as_secs_f64();
    database.analyze().await?;
    let limit = Duration::from_secs(120 + clusters as u64);
    let before = proxy.snapshot();
    let calls_before = cloud.gke_calls(GKE_PROJECT).answered;
    let started = Instant::now();
    signal("CONT")?;
    common::wait_for("every cluster ready", limit, Duration::from_millis(100), || {
        let pool = pool.clone();
        async move {
            let row = sqlx::query(
                "SELECT COUNT(*) FILTER (WHERE state = 'ready'), COUNT(*) FILTER (WHERE state = 'error') \
                 FROM kubernetes_clusters WHERE deleted_at IS NULL",
            )
            .fetch_one(&pool)
            .await
            .ok()?;
            let (ready, failed): (i64, i64) = (row.get(0), row.get(1));
            (ready as usize == clusters || failed > 0).then_some(())
        }
    })
    .await?;
    let ready_seconds = started.elapsed().as_secs_f64();
    let failed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM kubernetes_clusters WHERE state = 'error'")
        .fetch_one(&pool)
        .await
        .map_err(|e| e.to_string())?;
    if failed > 0 {
        return Err(format!("{failed} clusters went to error; see {}", logs.keep().display()));
    }
    let at_ready = proxy.snapshot();
    let provider_calls = cloud.gke_calls(GKE_PROJECT).answered - calls_before;
    let ready = phase(ready_seconds, calls_seconds, delta(&before, &at_ready), provider_calls);

    signal("STOP")?;
    let started = Instant::now();
    let ids = Arc::new(ids);
    call_all(&api, &tenants, clusters, move |tenant, i| {
        ("/api/compute/kubernetesClusters/delete", json!({"tenantId": tenant, "clusterId": ids[i]}))
    })
    .await?;
    let calls_seconds = started.elapsed().as_secs_f64();
    let before = proxy.snapshot();
    let calls_before = cloud.gke_calls(GKE_PROJECT).answered;
    let started = Instant::now();
    signal("CONT")?;
    common::wait_for("every cluster deleted", limit, Duration::from_millis(100), || {
        let pool = pool.clone();
        async move {
            let live: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM kubernetes_clusters WHERE deleted_at IS NULL")
                .fetch_one(&pool)
                .await
                .ok()?;
            (live == 0).then_some(())
        }
    })
    .await?;
    let deleted_seconds = started.elapsed().as_secs_f64();
    let provider_calls = cloud.gke_calls(GKE_PROJECT).answered - calls_before;
    let deleted = phase(deleted_seconds, calls_seconds, delta(&before, &proxy.snapshot()), provider_calls);
    let left = cloud.inspect()["gke"]["clusters"].as_array().map_or(0, Vec::len);
    if left > 0 {
        return Err(format!("{left} clusters left at the fake cloud after every row was deleted"));
    }
    let worker_rss = processes.iter().zip(workers_idle).map(|(p, idle)| [idle, p.rss_kib()]).collect();
    Ok(Converged { clusters, workers, ready, deleted, server_rss: [server_idle, server.process.rss_kib()], worker_rss })
}

fn phase(seconds: f64, calls_seconds: f64, statements: Counts, provider_calls: u64) -> Phase {
    let passes = matching(&statements, PASS_RECORDED) + matching(&statements, PASS_REMOVED);
    Phase { seconds, calls_seconds, passes, statements, provider_calls }
}

/// `host:port` of a Postgres URL.
fn upstream_of(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = host_port.rsplit_once('@').map(|(_, h)| h).unwrap_or(host_port);
    if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:5432") }
}

/// Makes `count` calls through the JSON API, 16 at a time, spread over the tenants; returns the
/// `id` of each answer, in call order.
async fn call_all<F>(
    api: &Api,
    tenants: &Arc<Vec<(String, String)>>,
    count: usize,
    request: F,
) -> Result<Vec<String>, String>
where
    F: Fn(&str, usize) -> (&'static str, Value) + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (api, tenants, next, request) = (api.clone(), tenants.clone(), next.clone(), request.clone());
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<_, String>(ids);
                }
                let (tenant, token) = &tenants[i % tenants.len()];
                let (path, body) = request(tenant, i);
                let answer = api.ok(token, path, body).await?;
                ids.push((i, answer["id"].as_str().unwrap_or_default().to_owned()));
            }
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.extend(task.await.map_err(|e| e.to_string())??);
    }
    ids.sort();
    Ok(ids.into_iter().map(|(_, id)| id).collect())
}

fn report(results: &[Converged], converging_ms: u64, rate_limit: Option<(i64, i64)>) {
    println!("\nGKE account's rate limit: {}", describe(rate_limit));
    let mut table = Table::new(&[
        "clusters",
        "workers",
        "all ready s",
        "passes",
        "passes/s",
        "stmts/pass",
        "queries/pass",
        "all deleted s",
        "passes",
        "passes/s",
        "stmts/pass",
        "server RSS idle/end",
        "worker RSS idle/end",
    ]);
    for r in results {
        let workers: Vec<String> =
            r.worker_rss.iter().map(|[idle, end]| format!("{}/{}", mib(*idle), mib(*end))).collect();
        table.row(vec![
            r.clusters.to_string(),
            r.workers.to_string(),
            format!("{:.2}", r.ready.seconds),
            r.ready.passes.to_string(),
            format!("{:.1}", r.ready.passes_per_second()),
            format!("{:.1}", r.ready.statements_per_pass()),
            format!("{:.1}", r.ready.queries_per_pass()),
            format!("{:.2}", r.deleted.seconds),
            r.deleted.passes.to_string(),
            format!("{:.1}", r.deleted.passes_per_second()),
            format!("{:.1}", r.deleted.statements_per_pass()),
            format!("{}/{}", mib(r.server_rss[0]), mib(r.server_rss[1])),
            workers.join(", "),
        ]);
    }
    table.print();
    println!(
        "\nThe creates (deletes) are made through the API while the workers are stopped (SIGSTOP); times run from \
         SIGCONT to the last cluster ready (deleted). The calls themselves took {}. Fake cloud with zero latency; \
         workers converge every {converging_ms} ms, 16 passes at once each. stmts/pass: statements the workers \
         executed per recorded pass (BEGIN/COMMIT included); queries/pass: without them.",
        results
            .iter()
            .map(|r| format!(
                "{:.2} s / {:.2} s for {}x{}",
                r.ready.calls_seconds, r.deleted.calls_seconds, r.clusters, r.workers
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("\nGKE calls and takes from the account's pacing budget (a take may hand out several calls):");
    for r in results {
        println!(
            "  {}x{}: to ready {} calls ({:.2} per pass), {:.2} takes per call; to deleted {} calls ({:.2} per pass), \
             {:.2} takes per call",
            r.clusters,
            r.workers,
            r.ready.provider_calls,
            r.ready.provider_calls as f64 / r.ready.passes.max(1) as f64,
            r.ready.takes_per_call(),
            r.deleted.provider_calls,
            r.deleted.provider_calls as f64 / r.deleted.passes.max(1) as f64,
            r.deleted.takes_per_call(),
        );
    }
    if let Some(last) = results.last() {
        println!(
            "\nStatements per pass to ready ({} clusters, {} workers), most executed first:",
            last.clusters, last.workers
        );
        let mut top: Vec<(&String, &u64)> = last.ready.statements.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        for (sql, n) in top.iter().take(12) {
            let short: String = sql.chars().take(110).collect();
            println!("  {:>6.2}  {short}", **n as f64 / last.ready.passes.max(1) as f64);
        }
    }
    let figures = json!({
        "machine": machine(),
        "settings": {"convergingMs": converging_ms, "workerConcurrency": 16, "fakeCloudLatencyMs": 0, "tenants": TENANTS,
            "gkeRateLimit": rate_limit.map_or(json!("published"), |(requests, seconds)| json!({"requests": requests, "perSeconds": seconds}))},
        "runs": results.iter().map(|r| json!({
            "clusters": r.clusters, "workers": r.workers,
            "ready": r.ready.to_json(), "deleted": r.deleted.to_json(),
            "serverRssKiB": {"idle": r.server_rss[0], "end": r.server_rss[1]},
            "workerRssKiB": r.worker_rss.iter().map(|[idle, end]| json!({"idle": idle, "end": end})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    match write_json("converge", &figures) {
        Ok(path) => println!("\nwritten to {}", path.display()),
        Err(error) => eprintln!("cannot write the results: {error}"),
    }
}
