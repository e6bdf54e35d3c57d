//! The spec's intervals, with a worker that keeps the reconciler's own schedule: clusters still
//! converging are looked at again 30 seconds later; ready and failed ones are refreshed every
//! five minutes.

use std::time::Duration;

use better_compute::reconcile::{ProviderResources, WorkerConfig};
use better_compute::store::{Backend, now_micros};
use fakecloud::Failure;
use serde_json::json;
use sqlx::Connection;

use super::{Env, standard};
use crate::harness::poll;

crate::on_both_backends!(converging_clusters_are_seen_every_30_seconds_settled_ones_every_5_minutes);

/// How far in the future the cluster's next pass is, once `ready` says the pass was made.
async fn next_pass_in(env: &Env, id: &str, ready: impl Fn(i64) -> bool) -> Duration {
    poll(Duration::from_secs(20), &format!("a pass of {id} scheduled as expected"), || async {
        let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
        let due: Option<i64> = sqlx::query_scalar("SELECT due_at FROM work_items WHERE object_id = $1")
            .bind(id)
            .fetch_optional(&mut conn)
            .await
            .unwrap();
        let wait = due.map_or(0, |due| due - now_micros());
        if ready(wait) { Ok(Duration::from_micros(wait as u64)) } else { Err(format!("next pass in {wait} µs")) }
    })
    .await
}

async fn converging_clusters_are_seen_every_30_seconds_settled_ones_every_5_minutes(backend: Backend) {
    let mut env = super::start(backend).await;
    // A fast worker makes the first cluster ready, then gives way to one on the spec's schedule.
    env.start_worker();
    let ready = env.ok("/api/compute/kubernetesClusters/create", standard("settled", "s")).await;
    let ready_id = ready["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&ready_id, "ready", Duration::from_secs(20)).await;
    if let Some(worker) = env.worker.take() {
        worker.stop().await.unwrap();
    }
    let config = WorkerConfig {
        tick: Duration::from_millis(50),
        lease: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(100),
        ..WorkerConfig::default()
    };
    // The spec's backoffs (`Timings::SPEC`).
    let spec = ProviderResources::new(env.gke.clone(), env.digitalocean.clone(), env.key.clone());
    env.start_worker_with(config, spec);

    // The ready cluster was due within the tests' 2 seconds; its refresh after that is 5 minutes away.
    let settled = next_pass_in(&env, &ready_id, |wait| wait > 60_000_000).await;
    assert!(settled > Duration::from_secs(290) && settled <= Duration::from_secs(300), "{settled:?}");

    // A new cluster: created at the provider, then looked at again 30 seconds later.
    let converging = env.ok("/api/compute/kubernetesClusters/create", standard("converging", "c")).await;
    let converging_id = converging["id"].as_str().unwrap().to_owned();
    let again = next_pass_in(&env, &converging_id, |wait| wait > 10_000_000).await;
    assert!(again > Duration::from_secs(25) && again <= Duration::from_secs(30), "{again:?}");
    let cluster =
        env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": converging_id})).await;
    assert_eq!(cluster["state"], "provisioning");

    // A failed one (the provider refused it) is refreshed every 5 minutes too.
    let refusal = Failure::Refuse { status: 400, message: "the project has no quota".into() };
    env.cloud.fail_next("cluster", "create", "*", refusal);
    let failed = env.ok("/api/compute/kubernetesClusters/create", standard("failed", "f")).await;
    let failed_id = failed["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&failed_id, "error", Duration::from_secs(20)).await;
    let retry = next_pass_in(&env, &failed_id, |wait| wait > 60_000_000).await;
    assert!(retry > Duration::from_secs(290) && retry <= Duration::from_secs(300), "{retry:?}");
}
