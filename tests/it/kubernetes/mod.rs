//! Kubernetes clusters and node pools end to end: the real server and worker on a real
//! database, the real GKE adapter against the fake cloud, kubectl against the fake cluster.

mod access;
mod clusters;
mod concurrent_operations;
mod credentials;
mod dev;
mod errors;
mod faults;
mod hosting;
mod idempotency;
mod intervals;
mod lifecycle;
mod lock_order;
mod masks;
mod node_pool_keys;
mod nodepools;
mod null_settings;
mod paging;
mod plan_reality;
mod versions;
mod violations;

use std::time::{Duration, Instant};

use better_compute::store::{Backend, CLUSTER_KIND};
use serde_json::{Value, json};

use crate::harness::{Catalog, System};
pub use crate::harness::{Env, PROJECT};

/// The platform pool offered to `acme` and `globex`, on the fake GKE account.
pub const POOL: &str = "pool_0000000000000000000000gke1";
/// A DigitalOcean pool: no managed Kubernetes.
pub const DO_POOL: &str = "pool_0000000000000000000000dg01";
/// A second pool on the GKE account, billed `none`, offered to acme without `us-central1` and
/// to globex suspended.
pub const FREE_POOL: &str = "pool_0000000000000000000000free";
/// The fake account's zones.
pub const ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "us-central1-a"];
/// The platform's GKE account.
const GKE_ACCOUNT: &str = "acct_0000000000000000000000gke1";

/// The catalog of the tests: a platform GKE account on the fake cloud with a metered pool
/// offered to `acme` and `globex`, and `acme`'s own DigitalOcean account and pool.
fn catalog() -> Catalog {
    let own_account = "acct_0000000000000000000000dg01";
    Catalog::new()
        .gke_account(GKE_ACCOUNT, None, &ZONES)
        .digitalocean_account(own_account, Some("acme"), &["nyc3"])
        .pool(POOL, GKE_ACCOUNT, "metered", &[])
        .pool(DO_POOL, own_account, "none", &[])
        .pool(FREE_POOL, GKE_ACCOUNT, "none", &[])
        .offer(POOL, "acme")
        .offer(POOL, "globex")
        .offer_in(FREE_POOL, "acme", "active", &["us-central1"])
        .offer_in(FREE_POOL, "globex", "suspended", &[])
}

/// The suite's setup: its catalog, and a worker of the clusters' reconciler only.
pub fn setup(backend: Backend) -> System {
    System::on(backend).catalog(catalog()).reconciling(&[CLUSTER_KIND])
}

/// The suite's environment as [`setup`] makes it.
pub async fn start(backend: Backend) -> Env {
    setup(backend).start().await
}

impl Env {
    /// Polls `get` until acme's cluster is in `state`; returns it and how long it took.
    pub async fn wait_cluster_state(&self, cluster_id: &str, state: &str, limit: Duration) -> (Value, Duration) {
        let started = Instant::now();
        let body = json!({"tenantId": "acme", "clusterId": cluster_id});
        let what = format!("in state {state}");
        let cluster = self
            .get_until(&self.acme_admin, "kubernetesClusters", body, limit, &what, |cluster| cluster["state"] == state)
            .await;
        (cluster, started.elapsed())
    }

    /// The fake cloud's GKE clusters.
    pub fn fake_clusters(&self) -> Vec<Value> {
        self.cloud.inspect()["gke"]["clusters"].as_array().cloned().unwrap_or_default()
    }
}

/// A standard cluster request with two pools.
pub fn standard(name: &str, key: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "mode": "standard", "location": "europe-west1",
        "idempotencyKey": key,
        "nodePools": [
            {"name": "general", "machineType": "e2-standard-4", "nodeCount": 2, "zones": ["europe-west1-b"]},
            {"name": "batch", "machineType": "e2-standard-8", "nodeCount": 1, "spot": true,
             "autoscaling": {"minNodes": 1, "maxNodes": 3},
             "taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
             "labels": {"team": "data"}},
        ],
    })
}
