//! The rest of a cluster's life: a refused delete, Autopilot, billing by the pool's mode, the
//! offer checks, node labels converged in place.

use std::time::Duration;

use better_compute::reconcile::Backoff;
use better_compute::store::Backend;
use fakecloud::Failure;
use serde_json::json;
use sqlx::Connection;

use super::{Env, FREE_POOL, PROJECT, standard};
use crate::harness::{passes_recorded, poll};

crate::on_both_backends!(
    a_spent_budget_refuses_metered_clusters_only,
    a_refused_delete_is_an_error_retried_later_or_at_once_on_a_new_delete,
    an_autopilot_cluster_on_a_free_pool_has_no_pools_and_bills_nothing,
    node_labels_change_in_place,
    the_autoscaler_owns_the_live_node_count,
);

const CREATE: &str = "/api/compute/kubernetesClusters/create";

async fn billables(env: &Env, id: &str) -> usize {
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_billables WHERE resource_id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    count as usize
}

async fn a_refused_delete_is_an_error_retried_later_or_at_once_on_a_new_delete(backend: Backend) {
    let mut env = super::start(backend).await;
    // The spec's delete backoff (5 minutes first): only a new delete call retries within the test.
    let mut resources = env.resources();
    resources.timings.delete_backoff = Backoff::DELETE;
    env.start_worker_with(env.worker_config.clone(), resources);
    let created = env.ok(CREATE, standard("refuse", "r")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(billables(&env, &id).await, 1, "a metered pool bills the cluster");
    let name = format!("bc-k-{}", &id[4..28]);
    let refusal = Failure::Refuse { status: 400, message: "deletion protection is on".into() };
    env.cloud.fail_next("cluster", "delete", &name, refusal);
    let cluster = json!({"tenantId": "acme", "clusterId": id});
    env.ok("/api/compute/kubernetesClusters/delete", cluster.clone()).await;
    let (failed, _) = env.wait_cluster_state(&id, "error", Duration::from_secs(20)).await;
    assert!(failed["message"].as_str().unwrap().contains("deletion protection is on"), "{failed}");
    // The next try is minutes away, as the failed pass recorded: the cluster stays in error...
    let wait = poll(Duration::from_secs(10), "the failed pass recorded its retry", || async {
        let due: i64 = sqlx::query_scalar("SELECT due_at FROM work_items WHERE object_id = $1")
            .bind(&id)
            .fetch_one(&mut sqlx::AnyConnection::connect(&env.db.url).await.unwrap())
            .await
            .unwrap();
        let wait = due - better_compute::store::now_micros();
        if wait > 240_000_000 { Ok(wait) } else { Err(format!("the next pass is {wait} µs away")) }
    })
    .await;
    assert!(wait <= 300_000_000, "the first retry is 5 minutes away, not {wait} µs");
    let still = env.ok("/api/compute/kubernetesClusters/get", cluster.clone()).await;
    assert_eq!(still["state"], "error", "{still}");
    // ...until a new delete tries at once.
    let again = env.ok("/api/compute/kubernetesClusters/delete", cluster).await;
    assert!(again["state"] == "deleting" || again["state"] == "deleted", "{again}");
    env.wait_cluster_state(&id, "deleted", Duration::from_secs(10)).await;
    assert!(env.fake_clusters().is_empty());
}

async fn an_autopilot_cluster_on_a_free_pool_has_no_pools_and_bills_nothing(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let request = json!({"tenantId": "acme", "poolId": FREE_POOL, "name": "auto", "mode": "autopilot",
        "location": "europe-west1", "idempotencyKey": "auto", "privateNodes": true});
    let created = env.ok(CREATE, request.clone()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["nodePools"].as_array().map_or(0, Vec::len), 0);
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["mode"], "autopilot");
    assert_eq!(billables(&env, &id).await, 0, "a pool billed `none` meters nothing");
    let fake = env.fake_clusters();
    assert_eq!(fake[0]["labels"]["better-compute-cluster"], id.as_str());
    let pools = json!({"tenantId": "acme", "clusterId": id, "name": "x", "machineType": "e2-medium", "nodeCount": 1,
        "idempotencyKey": "x"});
    let (status, body) = env.post_as(&env.acme_admin.clone(), "/api/compute/kubernetesNodePools/create", pools).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{body}");

    // The offer: an excluded region is INVALID_INPUT, a suspended offer INVALID_STATE.
    let mut excluded = request.clone();
    excluded["location"] = json!("us-central1-a");
    excluded["idempotencyKey"] = json!("excluded");
    let (status, body) = env.post_as(&env.acme_admin.clone(), CREATE, excluded).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{body}");
    let mut suspended = request;
    suspended["tenantId"] = json!("globex");
    let (status, body) = env.post_as(&env.globex_admin.clone(), CREATE, suspended).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("INVALID_STATE")), "{body}");
    let _ = PROJECT;
}

async fn node_labels_change_in_place(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok(CREATE, standard("labels", "l")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let pool = created["nodePools"][0]["id"].as_str().unwrap();
    let change = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": pool, "labels": {"tier": "web"}});
    env.ok("/api/compute/kubernetesNodePools/update", change).await;
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let fake = env.fake_clusters();
    let general = fake[0]["nodePools"].as_array().unwrap().iter().find(|p| p["name"] == "general").unwrap().clone();
    assert_eq!(general["nodeLabels"], json!({"tier": "web"}));
}

async fn a_spent_budget_refuses_metered_clusters_only(backend: Backend) {
    let env = super::start(backend).await;
    // A budget of 0 is reached at once: every metered create is refused, a free one is not.
    let budget = better_compute::store::NewBudget {
        id: better_compute::ids::BudgetId::random().to_string(),
        tenant_id: "acme".into(),
        name: "nothing".into(),
        monthly_limit: 0,
        now: better_compute::store::now_micros(),
    };
    env.store.budget_create(&budget).await.unwrap();
    let (status, body) = env.post_as(&env.acme_admin.clone(), CREATE, standard("budget", "b")).await;
    assert_eq!((status, body["error"]["code"].as_str()), (429, Some("QUOTA_EXCEEDED")), "{body}");
    assert_eq!(body["error"]["details"]["limit"], 0);
    let free = json!({"tenantId": "acme", "poolId": FREE_POOL, "name": "free", "mode": "autopilot",
        "location": "europe-west1", "idempotencyKey": "free"});
    env.ok(CREATE, free).await;
}

async fn the_autoscaler_owns_the_live_node_count(backend: Backend) {
    use better_compute::provider::ManagedKubernetes;
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok(CREATE, standard("scaled", "s")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    // The autoscaler grows `batch` (bounds 1 to 3, asked for 1) to 3 nodes at the provider.
    let gke = env.gke.gke("acct_0000000000000000000000gke1", "europe-west1").await.unwrap();
    let name = format!("bc-k-{}", &id[4..28]);
    gke.node_pool_set_size(&name, "batch", 3).await.unwrap();
    poll(Duration::from_secs(15), "the live count recorded", || async {
        let cluster = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
        let batch = cluster["nodePools"].as_array().unwrap().iter().find(|p| p["name"] == "batch").unwrap().clone();
        if batch["currentNodeCount"] == 3 && cluster["state"] == "ready" {
            assert_eq!(batch["nodeCount"], 1, "what the tenant asked for is kept");
            return Ok(());
        }
        Err(cluster.to_string())
    })
    .await;
    // Settled passes go by (2 s apart in tests): the reconciler never resizes it back.
    passes_recorded(&env.db.url, &id, 2).await;
    let fake = env.fake_clusters();
    let batch = fake[0]["nodePools"].as_array().unwrap().iter().find(|p| p["name"] == "batch").unwrap().clone();
    assert_eq!(batch["nodeCount"], 3, "{batch}");
}
