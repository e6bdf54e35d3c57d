//! The `vps` module's tenant resources end to end: networks, instances, certificates and volumes
//! through JSON and gRPC, the real server and worker (the `vps.provider-resources` reconcilers,
//! and the clusters' for `networkId`) on a real database, the real adapters against the fake
//! cloud.

mod certificates;
mod clusters;
mod decisions;
mod grpc;
mod instances;
mod lifecycle_events;
mod networks;
mod plan_reality;
mod secrets;
mod volumes;
mod volumes_cli;

use std::time::Duration;

use better_compute::reconcile::WorkerConfig;
use better_compute::store::Backend;
use serde_json::{Value, json};

pub use crate::harness::Env;
use crate::harness::{Catalog, System, fast_config};

/// A platform GKE account's pool, offered to acme and globex.
pub const GKE_POOL: &str = "pool_0000000000000000000000gke1";
/// A platform DigitalOcean account's pool, offered to acme (without `sfo3`) and to globex.
pub const DO_POOL: &str = "pool_0000000000000000000000dg01";
/// A second pool on the same DigitalOcean account, whose offer to acme is suspended.
pub const SUSPENDED_POOL: &str = "pool_0000000000000000000000dg02";
/// Acme's own DigitalOcean account's pool: another account than `DO_POOL`'s.
pub const OWN_DO_POOL: &str = "pool_0000000000000000000000dg03";
/// The platform DigitalOcean account.
pub const DO_ACCOUNT: &str = "acct_0000000000000000000000dg01";
/// The GKE account's zones.
pub const ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "us-central1-a"];

/// The catalog: a platform GKE account and a platform DigitalOcean account, each with a pool
/// offered to acme and globex; a second DigitalOcean pool whose offer to acme is suspended; and
/// acme's own DigitalOcean account with a pool; acme may have 5 load balancers on the first.
fn catalog() -> Catalog {
    let gke_account = "acct_0000000000000000000000gke1";
    let own_account = "acct_0000000000000000000000dg03";
    let regions = ["nyc3", "ams3", "sfo3"];
    Catalog::new()
        .gke_account(gke_account, None, &ZONES)
        .digitalocean_account(DO_ACCOUNT, None, &regions)
        .digitalocean_account(own_account, Some("acme"), &regions)
        .pool(GKE_POOL, gke_account, "none", &[])
        .pool(DO_POOL, DO_ACCOUNT, "none", &[])
        .pool(SUSPENDED_POOL, DO_ACCOUNT, "none", &[])
        .pool(OWN_DO_POOL, own_account, "none", &[])
        .offer(GKE_POOL, "acme")
        .offer(GKE_POOL, "globex")
        .offer_in(DO_POOL, "acme", "active", &["sfo3"])
        .offer(DO_POOL, "globex")
        .offer_in(SUSPENDED_POOL, "acme", "suspended", &[])
        .quota(DO_POOL, "acme", "loadBalancers", 5)
}

/// The suite's setup: its catalog, and a worker of every reconciler with settled objects
/// passed every second.
pub fn setup(backend: Backend) -> System {
    System::on(backend)
        .catalog(catalog())
        .worker_config(WorkerConfig { settled: Some(Duration::from_secs(1)), ..fast_config() })
}

/// The server, the catalog and the worker on a fresh database of `backend`.
pub async fn start(backend: Backend) -> Env {
    let mut env = setup(backend).start().await;
    env.start_worker();
    env
}

impl Env {
    /// The types of acme's events about `subject`, oldest first.
    pub async fn event_types(&self, subject: &str) -> Vec<String> {
        let events = self.ok("/api/compute/events/list", json!({"tenantId": "acme", "subject": subject})).await;
        events["events"]
            .as_array()
            .map(|events| events.iter().map(|e| e["type"].as_str().unwrap_or_default().to_owned()).collect())
            .unwrap_or_default()
    }

    /// What exists in the fake cloud.
    pub fn inspect(&self) -> Value {
        self.cloud.inspect()
    }
}

/// A DigitalOcean network request of acme with one subnet per `(name, region, range)`.
pub fn do_network(name: &str, subnets: &[(&str, &str, &str)]) -> Value {
    network(DO_POOL, name, subnets)
}

/// A network request of acme on `pool`.
pub fn network(pool: &str, name: &str, subnets: &[(&str, &str, &str)]) -> Value {
    let subnets: Vec<Value> =
        subnets.iter().map(|(name, region, range)| json!({"name": name, "region": region, "ipRange": range})).collect();
    json!({"tenantId": "acme", "poolId": pool, "name": name, "subnets": subnets, "idempotencyKey": name})
}

/// An instance request of acme on the DigitalOcean pool.
pub fn instance(name: &str, region: &str, subnet: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": DO_POOL, "name": name, "region": region, "size": "s-1vcpu-1gb",
        "image": "ubuntu-24-04-x64", "subnetId": subnet, "idempotencyKey": name,
    })
}

/// Makes a network and waits until it is ready.
pub async fn ready_network(env: &Env, body: Value) -> Value {
    let created = env.ok("/api/compute/networks/create", body).await;
    env.wait_state("networks", "networkId", created["id"].as_str().unwrap(), "ready").await
}
