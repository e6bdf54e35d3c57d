//! Kubernetes pool substrates: the policy checked at the call, and the `kubernetes.substrates`
//! reconciler end to end against the fake GKE, whose clusters run bcd's DaemonSets so that
//! their nodes join the pool.

mod adopt;
mod cli;
mod faults;
mod lifecycle;
mod policy;
mod remediation;
mod tokens;

use std::time::Duration;

use better_compute::store::{Backend, SUBSTRATE_KIND};
use serde_json::{Value, json};

use crate::harness::{Catalog, Env, System, poll};

/// The platform's GKE account on the fake cloud.
pub const GKE_ACCOUNT: &str = "acct_0000000000000000000000gke1";
/// The zone substrates are made in.
pub const ZONE: &str = "us-central1-a";
/// What the substrate tests give a substrate to become `ready` or `deleted`.
pub const CONVERGE: Duration = Duration::from_secs(60);

/// A platform GKE account and nothing else: the tests make their pools.
fn catalog() -> Catalog {
    Catalog::new().gke_account(GKE_ACCOUNT, None, &[ZONE, "us-central1-b"])
}

/// The suite's setup: fast fake operations, and a worker of substrates and clusters.
pub fn setup(backend: Backend) -> System {
    setup_with(backend, catalog())
}

/// The suite's setup with another catalog.
pub fn setup_with(backend: Backend, catalog: Catalog) -> System {
    System::on(backend)
        .catalog(catalog)
        .fake_operations(Duration::from_millis(100))
        .reconciling(&[SUBSTRATE_KIND, better_compute::store::CLUSTER_KIND])
}

/// A flavor of `count` fixed nodes.
pub fn flavor(name: &str, machine_type: &str, count: i64) -> Value {
    json!({"name": name, "machineType": machine_type, "nodeCount": count, "diskGiB": 50})
}

/// A pool policy with a substrate on the platform account.
pub fn substrate_policy(cluster: Value, flavors: Vec<Value>) -> Value {
    json!({"substrate": {"kind": "kubernetes", "account": GKE_ACCOUNT, "cluster": cluster, "flavors": flavors}})
}

impl Env {
    /// Makes a platform pool with `policy`; returns its id.
    pub async fn substrate_pool(&self, name: &str, policy: Value) -> String {
        let body = json!({"accountId": GKE_ACCOUNT, "name": name, "billingMode": "none", "policy": policy});
        self.server.admin_ok("/api/platform/pools/create", body).await["id"].as_str().unwrap().to_owned()
    }

    /// Replaces the pool's policy.
    pub async fn set_policy(&self, pool: &str, policy: Value) {
        let body = json!({"poolId": pool, "updateMask": "policy", "policy": policy});
        self.server.admin_ok("/api/platform/pools/update", body).await;
    }

    /// Archives the pool: its substrate is torn down.
    pub async fn archive_pool(&self, pool: &str) {
        let body = json!({"poolId": pool, "updateMask": "state", "state": "archived"});
        self.server.admin_ok("/api/platform/pools/update", body).await;
    }

    /// The pool's substrate as the operator reads it.
    pub async fn substrate(&self, pool: &str) -> Value {
        self.server.admin_ok("/api/compute/kubernetesSubstrates/get", json!({"poolId": pool})).await
    }

    /// Polls the substrate until `check` holds.
    pub async fn substrate_until(&self, pool: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        poll(CONVERGE, &format!("substrate of {pool} {what}"), || async {
            let got = self.substrate(pool).await;
            if check(&got) { Ok(got) } else { Err(got.to_string()) }
        })
        .await
    }

    /// The pool's nodes in `state`.
    pub async fn pool_nodes(&self, pool: &str, state: &str) -> Vec<Value> {
        let listed = self.server.admin_ok("/api/compute/nodes/list", json!({"poolId": pool})).await;
        listed["nodes"].as_array().cloned().unwrap_or_default().into_iter().filter(|n| n["state"] == state).collect()
    }

    /// The types of the substrate events on the pool's subject, oldest first.
    pub async fn substrate_events(&self, pool: &str) -> Vec<String> {
        let filter = better_compute::store::EventFilter { limit: 10_000, ..Default::default() };
        let events = self.store.event_list_after(&filter).await.unwrap();
        events
            .into_iter()
            .filter(|e| e.subject == pool && e.event_type.starts_with("kubernetes.substrate."))
            .map(|e| e.event_type)
            .collect()
    }

    /// The fake GKE's clusters.
    pub fn fake_gke_clusters(&self) -> Vec<Value> {
        self.cloud.inspect()["gke"]["clusters"].as_array().cloned().unwrap_or_default()
    }
}
