//! Failures and stuck objects: a transient failure backs off and keeps its attempts and message,
//! a permanent one is recorded, an object past its state's deadline is listed by
//! `Reconcilers.Status` and counted on `/metrics`; operators only.

use std::sync::Arc;
use std::time::Duration;

use better_compute::reconcile::{Outcome, Pass, Reconciler, WorkerConfig};
use better_compute::store::{Backend, now_micros};
use serde_json::json;

use crate::harness::{self, System, eventually, tenant_principal};
use crate::on_both_backends;

/// Fails every pass of `broken-*` objects transiently, `bad-*` permanently; converges the rest
/// into `provisioning`, a state with a deadline of zero, so they are stuck at once.
struct Flaky;

#[tonic::async_trait]
impl Reconciler for Flaky {
    fn kind(&self) -> &'static str {
        "flaky"
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        (state == "provisioning").then_some(Duration::ZERO)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let id = &pass.item.object_id;
        if id.starts_with("broken") {
            Outcome::transient(format!("the provider timed out on {id}"))
        } else if id.starts_with("bad") {
            Outcome::permanent("the region does not exist")
        } else {
            Outcome::converging().in_state("provisioning")
        }
    }
}

async fn failures_and_stuck_objects_are_reported(backend: Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    let store = server.store.clone();
    // The kind's own settled interval (100 s) wins over the global one (1 h).
    let config = WorkerConfig {
        tick: Duration::from_millis(100),
        settled: Some(Duration::from_secs(3600)),
        kind_intervals: vec![("flaky".to_owned(), Duration::from_secs(30), Duration::from_secs(100))],
        ..WorkerConfig::default()
    };
    let worker = harness::start_worker(&store, config, vec![Arc::new(Flaky)]);
    let ids = ["broken-1", "bad-1", "slow-1"].map(str::to_owned);
    store.work_enqueue_many("flaky", &ids, "creating", now_micros()).await.unwrap();

    let status = eventually(Duration::from_secs(10), "the passes", || async {
        let status = server.admin_ok("/api/platform/reconcilers/status", json!({})).await;
        let stuck = status["stuck"].as_array().unwrap();
        let flaky = status["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "flaky")?.clone();
        (flaky["failing"] == 2 && !stuck.is_empty()).then_some(status)
    })
    .await;
    let stuck = status["stuck"].as_array().unwrap();
    assert_eq!(stuck.len(), 1, "{status}");
    assert_eq!((stuck[0]["kind"].as_str(), stuck[0]["id"].as_str()), (Some("flaky"), Some("slow-1")));
    assert_eq!(stuck[0]["state"], "provisioning");
    assert!(stuck[0]["since"].is_string());
    let flaky = status["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "flaky").unwrap();
    assert_eq!(flaky["objects"], 3);
    assert!(flaky["passMaxMs"].as_f64().unwrap() >= 0.0);

    // The transient failure waits its backoff (5 s at first), the permanent one the settled
    // interval; both keep their attempts and message.
    let items = store.work_status(now_micros()).await.unwrap();
    let flaky_kind = items.iter().find(|k| k.kind == "flaky").unwrap();
    assert_eq!(flaky_kind.queue_depth, 0, "failed objects are not due again at once");
    let pool = {
        sqlx::any::install_default_drivers();
        sqlx::AnyPool::connect(&db.url).await.unwrap()
    };
    // `last_pass_at` is when the pass's result was recorded and `due_at` that time plus the
    // delay, so the delays are read exactly however late this test looks.
    let select = "SELECT object_id, attempts, last_error, due_at - last_pass_at FROM work_items \
                  WHERE kind = 'flaky' ORDER BY object_id";
    let rows: Vec<(String, i64, Option<String>, i64)> = sqlx::query_as(select).fetch_all(&pool).await.unwrap();
    let (bad, broken) = (&rows[0], &rows[1]);
    assert_eq!((bad.0.as_str(), bad.1, bad.2.as_deref()), ("bad-1", 1, Some("the region does not exist")));
    assert_eq!(bad.3, 100_000_000, "a permanent failure waits the settled interval");
    assert_eq!(broken.0, "broken-1");
    assert_eq!(broken.2.as_deref(), Some("the provider timed out on broken-1"));
    // The first failure waits 5 s, each next one twice as long, each shortened by up to 20%
    // (a slow machine may have passed it again before this read).
    let attempts = broken.1;
    let backoff = 5_000_000 * 2i64.pow(attempts as u32 - 1);
    assert!((backoff * 8 / 10..=backoff).contains(&broken.3), "transient backoff after {attempts}: {}", broken.3);

    // A new change (a new delete call, say) retries at once, whatever the backoff.
    assert!(store.work_wake("flaky", "broken-1", now_micros()).await.unwrap());
    eventually(Duration::from_secs(2), "the woken retry", || async {
        let rows: Vec<(String, i64, Option<String>, i64)> = sqlx::query_as(select).fetch_all(&pool).await.unwrap();
        (rows[1].1 > attempts).then_some(())
    })
    .await;
    pool.close().await;

    // The same figures on /metrics.
    let metrics = reqwest::get(format!("{}/metrics", server.endpoint)).await.unwrap().text().await.unwrap();
    assert!(metrics.contains("bc_reconcile_stuck{kind=\"flaky\"} 1"), "{metrics}");
    assert!(metrics.contains("bc_reconcile_failing{kind=\"flaky\"} 2"), "{metrics}");
    assert!(metrics.contains("bc_reconcile_queue_depth{kind=\"flaky\"}"), "{metrics}");

    // Operators only.
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let user = tenant_principal(&store, "acme", "viewer").await;
    let (code, _) = server.post("/api/platform/reconcilers/status", Some(&user), json!({})).await;
    assert_eq!(code, 403);

    worker.stop().await.unwrap();
    server.stop().await;
}

on_both_backends!(failures_and_stuck_objects_are_reported);
