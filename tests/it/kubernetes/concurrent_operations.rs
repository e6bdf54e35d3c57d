//! Many clusters changing all their node pools at once against GKE's rule of at most five
//! operations running on one cluster: the reconciler's one change per pass and its wait while
//! the cluster reconciles keep every cluster well inside the rule, so no change is refused more
//! than once per cluster and nothing fails on a busy cluster.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, standard};

crate::on_both_backends!(twenty_clusters_change_every_pool_at_once_within_five_operations);

const CLUSTERS: usize = 20;
/// GKE's limit of operations running at once on one cluster.
const OPERATIONS_PER_CLUSTER: usize = 5;
const CONVERGE_LIMIT: Duration = Duration::from_secs(120);

/// A standard cluster with a third pool, `cache`, beside `general` and `batch`.
fn three_pools(name: &str) -> Value {
    let mut request = standard(name, name);
    request["nodePools"].as_array_mut().unwrap().push(json!(
        {"name": "cache", "machineType": "e2-highmem-4", "nodeCount": 1, "zones": ["europe-west1-c"]}
    ));
    request
}

/// The change each pool gets: a size, an autoscaling range, labels.
fn change_of(pool: &str) -> Value {
    match pool {
        "general" => json!({"nodeCount": 3}),
        "batch" => json!({"autoscaling": {"minNodes": 1, "maxNodes": 5}}),
        "cache" => json!({"labels": {"tier": "cache", "wave": "second"}}),
        other => panic!("no change for pool {other}"),
    }
}

/// acme's clusters as listed.
async fn listed(env: &Env) -> Vec<Value> {
    let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    listed["clusters"].as_array().cloned().unwrap_or_default()
}

/// Polls the list until every cluster and every pool of it is `ready`, remembering each cluster
/// or pool seen in `error` meanwhile; returns the last list.
async fn converge(env: &Env, errors: &mut BTreeSet<String>) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let clusters = listed(env).await;
        let mut all_ready = clusters.len() == CLUSTERS;
        for cluster in &clusters {
            if cluster["state"] == "error" {
                errors.insert(format!("cluster {}: {}", cluster["name"], cluster["message"]));
            }
            all_ready &= cluster["state"] == "ready";
            for pool in cluster["nodePools"].as_array().unwrap() {
                if pool["state"] == "error" {
                    errors.insert(format!("pool {}/{}: {}", cluster["name"], pool["name"], pool["message"]));
                }
                all_ready &= pool["state"] == "ready";
            }
        }
        if all_ready {
            return clusters;
        }
        let states: Vec<String> = clusters.iter().map(|c| format!("{}={}", c["name"], c["state"])).collect();
        assert!(
            started.elapsed() < CONVERGE_LIMIT,
            "not ready after {CONVERGE_LIMIT:?}: {states:?}; errors {errors:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn twenty_clusters_change_every_pool_at_once_within_five_operations(backend: Backend) {
    let mut env = super::setup(backend).max_clusters_per_tenant(CLUSTERS as i64).start().await;
    env.cloud.set_gke_concurrent_operations_per_cluster(OPERATIONS_PER_CLUSTER);
    env.start_worker();
    let mut errors = BTreeSet::new();

    let started = Instant::now();
    for i in 0..CLUSTERS {
        env.ok("/api/compute/kubernetesClusters/create", three_pools(&format!("busy{i:02}"))).await;
    }
    let clusters = converge(&env, &mut errors).await;
    let created_in = started.elapsed();
    assert!(errors.is_empty(), "failed while being created: {errors:?}");

    // Every pool of every cluster changed at once: three changes queued on each cluster.
    let started = Instant::now();
    for cluster in &clusters {
        for pool in cluster["nodePools"].as_array().unwrap() {
            let mut change = change_of(pool["name"].as_str().unwrap());
            change["tenantId"] = json!("acme");
            change["clusterId"] = cluster["id"].clone();
            change["nodePoolId"] = pool["id"].clone();
            let updated = env.ok("/api/compute/kubernetesNodePools/update", change).await;
            assert_eq!(updated["state"], "updating", "{updated}");
        }
    }
    let clusters = converge(&env, &mut errors).await;
    let changed_in = started.elapsed();
    assert!(errors.is_empty(), "a cluster or pool failed while converging: {errors:?}");

    // Every change landed at the fake GKE.
    let fakes = env.fake_clusters();
    assert_eq!(fakes.len(), CLUSTERS);
    for fake in &fakes {
        let pool = |name: &str| fake["nodePools"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap();
        let name = &fake["name"];
        assert_eq!(pool("general")["nodeCount"], 3, "{name}");
        assert_eq!(pool("batch")["autoscaling"]["maxNodeCount"], 5, "{name}: {}", pool("batch")["autoscaling"]);
        assert_eq!(pool("cache")["nodeLabels"], json!({"tier": "cache", "wave": "second"}), "{name}");
    }

    // GKE's rule, per cluster.
    let mut refused_total = 0;
    let mut most_at_once = 0;
    for cluster in &clusters {
        let name = cluster["providerName"].as_str().unwrap();
        assert!(name.starts_with("bc-k-"), "{name}");
        let refused = env.cloud.gke_operations_refused(name);
        let at_once = env.cloud.gke_max_concurrent_operations(name);
        assert!(refused <= 1, "{name}: {refused} operations refused, more than one");
        assert!(at_once <= OPERATIONS_PER_CLUSTER, "{name}: {at_once} operations at once");
        refused_total += refused;
        most_at_once = most_at_once.max(at_once);
    }
    println!(
        "{CLUSTERS} clusters on {backend:?}: created in {created_in:?}, every pool changed in {changed_in:?}; \
         {refused_total} operations refused in all, at most {most_at_once} at once on a cluster"
    );
}
