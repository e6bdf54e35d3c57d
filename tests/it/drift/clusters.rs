//! A node pool resized in the GKE console: `correct` resizes it back; `report` leaves it,
//! shows `nodePools[general].nodeCount` on the cluster (and `nodeCount` on the pool) until GKE
//! holds the applied count again or the tenant changes the pool, whose new count is applied.

use std::time::Duration;

use better_compute::store::{Backend, CLUSTER_KIND};
use serde_json::{Value, json};

use super::{events_of, no_drift, only_drift, set_drift_policy};
use crate::harness::{Catalog, Env, PROJECT, System, passes_recorded, poll};

// An event's data reaches a client as a protobuf Struct: its numbers are doubles (`2.0`).

crate::on_both_backends!(
    a_node_count_changed_at_gke_is_put_back_under_correct,
    a_node_count_changed_at_gke_is_reported_until_gke_or_the_tenant_changes_it,
);

const POOL: &str = "pool_0000000000000000000000gke1";
const ACCOUNT: &str = "acct_0000000000000000000000gke1";
const LOCATION: &str = "europe-west1";
const LIMIT: Duration = Duration::from_secs(60);
const DRIFT: &str = "kubernetes.cluster.drift";

async fn start(backend: Backend) -> Env {
    let catalog = Catalog::new()
        .gke_account(ACCOUNT, None, &["europe-west1-b", "europe-west1-c"])
        .pool(POOL, ACCOUNT, "none", &[])
        .offer(POOL, "acme");
    let mut env = System::on(backend).catalog(catalog).reconciling(&[CLUSTER_KIND]).start().await;
    env.start_worker();
    env
}

/// Makes acme's cluster with one pool `general` of 2 nodes, and waits until it is ready.
/// Returns its id, its name at GKE and the pool's id.
async fn ready_cluster(env: &Env, name: &str) -> (String, String, String) {
    let body = json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "mode": "standard", "location": LOCATION,
        "idempotencyKey": name,
        "nodePools": [{"name": "general", "machineType": "e2-standard-4", "nodeCount": 2, "zones": ["europe-west1-b"]}],
    });
    let created = env.ok("/api/compute/kubernetesClusters/create", body).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let ready = wait_cluster(env, &id, "ready", |c| c["state"] == "ready").await;
    let pool_id = ready["nodePools"][0]["id"].as_str().unwrap().to_owned();
    (id, ready["providerName"].as_str().unwrap().to_owned(), pool_id)
}

async fn wait_cluster(env: &Env, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let body = json!({"tenantId": "acme", "clusterId": id});
    env.get_until(&env.acme_admin, "kubernetesClusters", body, LIMIT, what, check).await
}

/// The node count GKE holds for pool `general`.
fn gke_count(env: &Env) -> u64 {
    let clusters = env.cloud.inspect()["gke"]["clusters"].clone();
    let pools = clusters[0]["nodePools"].as_array().unwrap().clone();
    pools.iter().find(|p| p["name"] == "general").unwrap()["nodeCount"].as_u64().unwrap()
}

fn resize_at_gke(env: &Env, provider_name: &str, count: u64) {
    assert!(env.cloud.gke_set_node_count(PROJECT, LOCATION, provider_name, "general", count));
}

async fn a_node_count_changed_at_gke_is_put_back_under_correct(backend: Backend) {
    let env = start(backend).await;
    let (id, provider_name, _) = ready_cluster(&env, "corrected").await;
    resize_at_gke(&env, &provider_name, 4);

    let event = poll(LIMIT, "a drift event", || async {
        let events = events_of(&env, "acme", &id, DRIFT).await;
        events.first().cloned().ok_or_else(|| format!("{events:?}"))
    })
    .await;
    assert_eq!(event["data"]["action"], "corrected", "{event}");
    assert_eq!(event["data"]["fields"], json!([{"field": "nodePools[general].nodeCount", "applied": 2, "found": 4}]));
    poll(LIMIT, "GKE back at 2 nodes", || async {
        let count = gke_count(&env);
        if count == 2 { Ok(()) } else { Err(format!("{count}")) }
    })
    .await;
    let settled = wait_cluster(&env, &id, "ready without drift", |c| c["state"] == "ready" && no_drift(c)).await;
    assert_eq!(settled["nodePools"][0]["currentNodeCount"], 2, "{settled}");
    assert_eq!(events_of(&env, "acme", &id, DRIFT).await.len(), 1, "corrected once");
}

async fn a_node_count_changed_at_gke_is_reported_until_gke_or_the_tenant_changes_it(backend: Backend) {
    let env = start(backend).await;
    let wrong = json!({"poolId": POOL, "policy": {"drift": "ignore"}});
    let (status, error) = env.server.post("/api/platform/pools/update", Some(&env.server.admin_token), wrong).await;
    assert_eq!(status, 400, "{error}");
    assert!(error.to_string().contains("policy.drift"), "the fault names its field: {error}");
    set_drift_policy(&env, POOL, json!({"drift": "report"})).await;
    let (id, provider_name, pool_id) = ready_cluster(&env, "reported").await;
    resize_at_gke(&env, &provider_name, 4);

    let drifted = wait_cluster(&env, &id, "drift shown", |c| !no_drift(c)).await;
    assert_eq!(
        only_drift(&drifted),
        ("nodePools[general].nodeCount".to_owned(), json!(2), json!(4), "reported".to_owned())
    );
    let (field, ..) = only_drift(&drifted["nodePools"][0]);
    assert_eq!(field, "nodeCount", "the pool shows its own drift: {drifted}");
    assert_eq!(drifted["state"], "ready", "{drifted}");
    assert_eq!(drifted["nodePools"][0]["nodeCount"], 2, "the desired state is unchanged: {drifted}");

    // Further passes leave GKE as it is and tell the drift no more.
    passes_recorded(&env.db.url, &id, 3).await;
    assert_eq!(gke_count(&env), 4);
    let again = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(only_drift(&again).2, json!(4), "{again}");
    assert_eq!(again["nodePools"][0]["currentNodeCount"], 4, "{again}");
    let events = events_of(&env, "acme", &id, DRIFT).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["action"], "reported");
    assert_eq!(
        events[0]["data"]["fields"],
        json!([{"field": "nodePools[general].nodeCount", "applied": 2, "found": 4}])
    );

    // GKE back at the applied count: no drift.
    resize_at_gke(&env, &provider_name, 2);
    wait_cluster(&env, &id, "drift gone", no_drift).await;

    // Drift again, then the tenant changes the pool: its new count is applied, no drift left.
    resize_at_gke(&env, &provider_name, 5);
    let drifted = wait_cluster(&env, &id, "drift shown again", |c| !no_drift(c)).await;
    assert_eq!(only_drift(&drifted).2, json!(5));
    assert_eq!(events_of(&env, "acme", &id, DRIFT).await.len(), 2, "a new drift is told");
    let update = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": pool_id, "nodeCount": 3});
    env.ok("/api/compute/kubernetesNodePools/update", update).await;
    let applied = wait_cluster(&env, &id, "the change applied", |c| {
        c["state"] == "ready" && c["version"].as_i64() > drifted["version"].as_i64() && no_drift(c)
    })
    .await;
    assert_eq!(applied["nodePools"][0]["currentNodeCount"], 3, "{applied}");
    assert_eq!(gke_count(&env), 3);
}
