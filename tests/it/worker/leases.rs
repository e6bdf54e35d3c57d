//! Two `bc-worker` processes on one Postgres database: every object reconciled, never by two
//! passes at once, nothing lost when one is killed (SIGKILL) or stopped (SIGTERM) mid-run.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use better_compute::store::{Store, now_micros};

use crate::harness::{Running, System, eventually};
use better_compute::store::Backend;

const OBJECTS: usize = 2000;

fn spawn_worker(url: &str) -> Running {
    Command::new(env!("CARGO_BIN_EXE_bc-worker"))
        .env("BC_DATABASE_URL", url)
        .env("BC_SECRET_KEY", better_compute::secrets::SecretKey::generate_base64())
        .env("RUST_LOG", "warn")
        .args(["--noop-pass-ms", "15", "--concurrency", "4", "--lease-ms", "1500", "--tick-ms", "200"])
        .args(["--settled-ms", "3600000", "--shutdown-grace-ms", "5000"])
        .stdout(Stdio::null())
        .spawn()
        .map(Running)
        .expect("bc-worker starts")
}

/// Objects with at least one recorded pass.
async fn reconciled(store: &Store) -> BTreeSet<String> {
    store.work_noop_passes().await.unwrap().into_iter().map(|(object, ..)| object).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_the_work_without_overlap_and_survive_a_kill() {
    let db = System::on(Backend::Postgres).database().await;
    let store = db.store().await;
    let ids: Vec<String> = (0..OBJECTS).map(|i| format!("obj-{i:05}")).collect();
    store.work_enqueue_many("noop", &ids, "active", now_micros()).await.unwrap();

    let mut victim = spawn_worker(&db.url);
    let mut survivor = spawn_worker(&db.url);

    // Kill one worker mid-run, while it holds leases.
    eventually(Duration::from_secs(60), "a quarter of the objects", || async {
        (reconciled(&store).await.len() >= OBJECTS / 4).then_some(())
    })
    .await;
    victim.0.kill().unwrap();
    victim.0.wait().unwrap();
    let killed_at = std::time::Instant::now();

    // SIGTERM the other mid-run too, once the dead worker's leases (1.5 s) have run out: it stops
    // claiming, finishes or releases what it holds, and exits 0, leaving no live lease behind.
    eventually(Duration::from_secs(60), "half of the objects", || async {
        (reconciled(&store).await.len() >= OBJECTS / 2 && killed_at.elapsed() > Duration::from_secs(2)).then_some(())
    })
    .await;
    let status = Command::new("kill").args(["-TERM", &survivor.0.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exited = eventually(Duration::from_secs(15), "the survivor to exit", || {
        let exited = survivor.0.try_wait().unwrap();
        async move { exited }
    })
    .await;
    assert!(exited.success(), "bc-worker exits 0 on SIGTERM: {exited:?}");
    assert_eq!(live_leases(&db.url).await, 0, "a stopped worker leaves no live lease");
    let at_stop = reconciled(&store).await.len();
    assert!(at_stop < OBJECTS, "the stop came after the end; the test proves nothing");

    // A fresh worker finishes the rest.
    let last = spawn_worker(&db.url);
    eventually(Duration::from_secs(120), "every object reconciled", || async {
        (reconciled(&store).await.len() == OBJECTS).then_some(())
    })
    .await;
    drop(last);

    // No object was ever in two passes at once.
    let mut passes: BTreeMap<String, Vec<(i64, i64, String)>> = BTreeMap::new();
    for (object, worker, start, end) in store.work_noop_passes().await.unwrap() {
        passes.entry(object).or_default().push((start, end, worker));
    }
    let mut overlaps = Vec::new();
    let mut workers = BTreeSet::new();
    for (object, mut list) in passes {
        list.sort();
        for pair in list.windows(2) {
            if pair[1].0 < pair[0].1 {
                overlaps.push((object.clone(), pair[0].clone(), pair[1].clone()));
            }
        }
        workers.extend(list.into_iter().map(|(_, _, worker)| worker));
    }
    assert_eq!(overlaps, vec![], "objects reconciled twice at once");
    assert_eq!(workers.len(), 3, "every worker took part: {workers:?}");
}

/// Leases not yet expired.
async fn live_leases(url: &str) -> i64 {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let live = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM work_items WHERE lease_expires_at > $1")
        .bind(now_micros())
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    live
}
