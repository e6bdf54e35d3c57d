//! A cluster and its node pools are written in one order, the cluster's row first, the order
//! of the reconciler's observation: a tenant's node pool change that meets a pass waits for it
//! instead of deadlocking it (Postgres; SQLite has one writer at a time).

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::json;
use sqlx::Connection;

use super::standard;
use crate::harness::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_pool_change_waits_for_an_observation_instead_of_deadlocking_it() {
    let mut env = super::start(Backend::Postgres).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("locks", "l1")).await;
    let cluster = created["id"].as_str().unwrap().to_owned();
    let pool = created["nodePools"][0]["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&cluster, "ready", Duration::from_secs(20)).await;
    env.stop_worker().await;

    // An observation in progress: it holds the cluster's row and writes its pools' next.
    let mut observer = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let mut pass = Connection::begin(&mut observer).await.unwrap();
    let txn = &mut *pass;
    sqlx::query("UPDATE kubernetes_clusters SET updated_at = updated_at WHERE id = $1")
        .bind(&cluster)
        .execute(&mut *txn)
        .await
        .unwrap();

    let change = reqwest::Client::new()
        .post(format!("{}/api/compute/kubernetesNodePools/update", env.server.endpoint))
        .bearer_auth(&env.acme_admin)
        .json(&json!({"tenantId": "acme", "clusterId": cluster, "nodePoolId": pool, "nodeCount": 3}));
    let answer = tokio::spawn(async move {
        let response = change.send().await.unwrap();
        (response.status().as_u16(), response.json::<serde_json::Value>().await.unwrap())
    });
    let watcher = sqlx::AnyPool::connect(&env.db.url).await.unwrap();
    eventually(Duration::from_secs(10), "the change waiting on a lock", || async {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        )
        .fetch_one(&watcher)
        .await
        .unwrap();
        (waiting > 0).then_some(())
    })
    .await;

    // The pass writes the pool: it does not wait on the change (which would wait on the pass).
    sqlx::query("SET LOCAL lock_timeout = '5s'").execute(&mut *txn).await.unwrap();
    sqlx::query("UPDATE kubernetes_node_pools SET updated_at = updated_at WHERE id = $1")
        .bind(&pool)
        .execute(&mut *txn)
        .await
        .expect("the observation writes the pool while the change waits");
    pass.commit().await.unwrap();

    let (status, updated) = answer.await.unwrap();
    assert_eq!(status, 200, "{updated}");
    assert_eq!((updated["nodeCount"].as_i64(), updated["state"].as_str()), (Some(3), Some("updating")));
}
