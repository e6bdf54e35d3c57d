//! A pass abandoned because the worker could not renew its leases (the store stalled) gives its
//! object's lease back once the store answers again: the worker's renewals extend every lease it
//! holds, so a lease left behind was renewed forever and its object never reconciled again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use better_compute::reconcile::{Outcome, Pass, Reconciler, WorkerConfig};
use better_compute::store::{Backend, now_micros};
use sqlx::Connection;

use crate::harness::never_answer;
use crate::harness::{self, System, eventually};
use crate::on_both_backends;

on_both_backends!(an_abandoned_pass_gives_its_lease_back);

/// Its first pass hangs on a peer that never answers; the next ones settle at once.
struct Slow {
    passes: Arc<AtomicUsize>,
    /// Whether the worker gave the hanging pass up.
    abandoned: Arc<AtomicBool>,
}

#[tonic::async_trait]
impl Reconciler for Slow {
    fn kind(&self) -> &'static str {
        "slow"
    }

    async fn reconcile(&self, _pass: &Pass) -> Outcome {
        if self.passes.fetch_add(1, Ordering::SeqCst) == 0 {
            never_answer(self.abandoned.clone()).await;
        }
        Outcome::settled()
    }
}

async fn an_abandoned_pass_gives_its_lease_back(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    let (passes, abandoned) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let config = WorkerConfig {
        tick: Duration::from_millis(50),
        lease: Duration::from_millis(600),
        settled: Some(Duration::from_secs(3600)),
        ..WorkerConfig::default()
    };
    let worker = harness::start_worker(
        &store,
        config,
        vec![Arc::new(Slow { passes: passes.clone(), abandoned: abandoned.clone() })],
    );
    store.work_enqueue_many("slow", &["obj-1".to_owned()], "active", now_micros()).await.unwrap();
    eventually(Duration::from_secs(10), "the first pass", || async {
        (passes.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    // The worker renews the pass's lease (so it knows until when the lease is good).
    let lease_until = async || -> Option<i64> {
        let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
        sqlx::query_scalar("SELECT lease_expires_at FROM work_items WHERE kind = 'slow' AND object_id = 'obj-1'")
            .fetch_one(&mut conn)
            .await
            .unwrap()
    };
    let claimed = lease_until().await;
    eventually(Duration::from_secs(10), "a renewal of the pass's lease", || async {
        (lease_until().await > claimed).then_some(())
    })
    .await;

    // The store stalls (another session holds the write lock) until the worker, unable to renew
    // its leases, has abandoned the pass; it gives the lease back once the store answers again.
    let mut blocker = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    match backend {
        Backend::Sqlite => {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut blocker).await.unwrap();
        }
        Backend::Postgres => {
            sqlx::query("BEGIN").execute(&mut blocker).await.unwrap();
            sqlx::query("LOCK TABLE work_items IN EXCLUSIVE MODE").execute(&mut blocker).await.unwrap();
        }
    }
    eventually(Duration::from_secs(10), "the pass abandoned while the store stalls", || async {
        abandoned.load(Ordering::SeqCst).then_some(())
    })
    .await;
    assert_eq!(passes.load(Ordering::SeqCst), 1, "no pass while the store stalls");
    sqlx::query("ROLLBACK").execute(&mut blocker).await.unwrap();

    eventually(Duration::from_secs(15), "the object passed again", || async {
        (passes.load(Ordering::SeqCst) >= 2).then_some(())
    })
    .await;
    let lease: Option<String> = eventually(Duration::from_secs(5), "the second pass recorded", || async {
        let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
        let (owner, last_pass): (Option<String>, Option<i64>) = sqlx::query_as(
            "SELECT lease_owner, last_pass_at FROM work_items WHERE kind = 'slow' AND object_id = 'obj-1'",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        last_pass.map(|_| owner)
    })
    .await;
    assert_eq!(lease, None, "the settled object holds no lease");
    worker.stop().await.unwrap();
}
