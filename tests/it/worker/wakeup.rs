//! A write is picked up within a second through the wake-up, although the tick is a minute:
//! Postgres `NOTIFY` to a `bc-worker` process, the in-process signal on SQLite.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, Store, now_micros};

use crate::harness::worker_idle;
use crate::harness::{self, Running, System, eventually};

async fn time_to_pickup(store: &Store) -> Duration {
    // Written once the worker's first passes are recorded and it holds nothing: from then on
    // only a wake-up (or the minute's tick) makes it claim. The loop after its last pass reads
    // the queue once more before it sleeps; a write within those milliseconds is found so.
    worker_idle(store).await;
    let written = Instant::now();
    store.work_enqueue_many("noop", &["woken".to_owned()], "active", now_micros()).await.unwrap();
    eventually(Duration::from_secs(10), "the pass", || async {
        (!store.work_noop_passes().await.unwrap().is_empty()).then(|| written.elapsed())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_notify_wakes_another_process_within_a_second() {
    let db = System::on(Backend::Postgres).database().await;
    let store = db.store().await;
    let worker = Command::new(env!("CARGO_BIN_EXE_bc-worker"))
        .env("BC_DATABASE_URL", &db.url)
        .env("BC_SECRET_KEY", better_compute::secrets::SecretKey::generate_base64())
        .env("RUST_LOG", "warn")
        .args(["--noop-pass-ms", "0", "--tick-ms", "60000"])
        .stdout(Stdio::null())
        .spawn()
        .map(Running)
        .unwrap();
    let took = time_to_pickup(&store).await;
    drop(worker);
    assert!(took < Duration::from_secs(1), "picked up after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_in_process_signal_wakes_the_worker_within_a_second() {
    let db = System::on(Backend::Sqlite).database().await;
    let store = db.store().await;
    let config = WorkerConfig {
        tick: Duration::from_secs(60),
        noop_pass: Some(Duration::ZERO),
        shutdown_grace: Duration::from_secs(1),
        ..WorkerConfig::default()
    };
    let worker = harness::start_worker(&store, config, Vec::new());
    let took = time_to_pickup(&store).await;
    worker.stop().await.unwrap();
    assert!(took < Duration::from_secs(1), "picked up after {took:?}");
}
