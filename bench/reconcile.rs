//! Objects reconciled per second by a no-op reconciler, with 1 and 2 workers, on Postgres and on
//! SQLite. Prints figures; asserts nothing about them.
//!
//! `cargo bench --bench reconcile` (Postgres at `BC_BENCH_POSTGRES_URL`, default the machine's
//! own; `BC_BENCH_OBJECTS` objects per run, default 4000). Each worker has its own store (its own
//! pool, as a separate process would) and claims through the same leases as production.

use std::time::{Duration, Instant};

use better_compute::reconcile::{Worker, WorkerConfig};
use better_compute::store::{Store, now_micros};
use sqlx::Connection;

async fn postgres_database(admin_url: &str) -> (String, String) {
    let mut admin = sqlx::PgConnection::connect(admin_url).await.expect("Postgres answers");
    let name = format!("bc_bench_{}", better_compute::ids::random("db").trim_start_matches("db_"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut admin).await.unwrap();
    let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(admin_url);
    (format!("{base}/{name}"), name)
}

async fn drop_postgres_database(admin_url: &str, name: &str) {
    if let Ok(mut admin) = sqlx::PgConnection::connect(admin_url).await {
        let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
            .execute(&mut admin)
            .await;
    }
}

/// Runs `workers` workers over `objects` due no-op objects on `url`; returns objects per second.
async fn run(url: &str, workers: usize, objects: usize) -> f64 {
    let store = Store::connect(url, 8).await.unwrap();
    store.migrate().await.unwrap();
    let ids: Vec<String> = (0..objects).map(|i| format!("obj-{i:06}")).collect();
    store.work_enqueue_many("noop", &ids, "active", now_micros()).await.unwrap();

    let config = WorkerConfig {
        tick: Duration::from_millis(100),
        concurrency: 16,
        settled: Some(Duration::from_secs(3600)),
        noop_pass: Some(Duration::ZERO),
        shutdown_grace: Duration::from_secs(5),
        ..WorkerConfig::default()
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let own = Store::connect(url, 8).await.unwrap();
        let mut stopped = stopped.clone();
        tasks.push(tokio::spawn(Worker::new(own, config.clone()).run(async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        })));
    }
    loop {
        let done = store.work_status(now_micros()).await.unwrap();
        let noop = done.iter().find(|k| k.kind == "noop").expect("the noop kind has objects");
        if noop.queue_depth == 0 && noop.leased == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    let _ = stop.send(true);
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let passes = store.work_noop_passes().await.unwrap().len();
    store.close().await;
    assert_eq!(passes, objects, "every object reconciled once");
    objects as f64 / elapsed.as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this too, without it, and
    // must not spend minutes here.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("reconcile benchmark: run it with `cargo bench --bench reconcile`");
        return;
    }
    let objects: usize = std::env::var("BC_BENCH_OBJECTS").ok().and_then(|n| n.parse().ok()).unwrap_or(4000);
    let admin_url = std::env::var("BC_BENCH_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        println!("no-op reconciler, {objects} objects, concurrency 16 per worker");
        for workers in [1, 2] {
            let (url, name) = postgres_database(&admin_url).await;
            let rate = run(&url, workers, objects).await;
            drop_postgres_database(&admin_url, &name).await;
            println!("postgres  workers={workers}  {rate:>8.0} objects/s");
        }
        for workers in [1, 2] {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}?mode=rwc", dir.path().join("bench.sqlite").display());
            let rate = run(&url, workers, objects).await;
            println!("sqlite    workers={workers}  {rate:>8.0} objects/s");
        }
    });
}
