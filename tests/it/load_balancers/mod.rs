//! Load balancers end to end: the real server and worker on a real database, the real
//! DigitalOcean adapter against the fake cloud, whose inspection shows what each load balancer
//! reaches. The resources they rest on (subnets, instances with droplets, certificates) are made
//! by `fixtures` at the fake cloud and in the vps module's tables.

mod certificate_race;
mod clearing;
mod cli;
mod decisions;
mod defaults;
mod end_to_end;
mod every_violation;
mod fixtures;
mod global;
mod grpc;
mod isolation;
mod lifecycle;
mod plan_reality;
mod quota;
mod refusals;
mod settings;
mod targets;
mod update_states;

use std::time::Duration;

use better_compute::reconcile::{WorkerConfig, registry};
use better_compute::store::{Backend, LOAD_BALANCER_KIND};
use serde_json::{Value, json};

pub use crate::harness::Env;
use crate::harness::{Catalog, System, fast_config, poll};

/// The platform DigitalOcean pool (metered), offered to acme and globex, each with a
/// `loadBalancers` quota of [`QUOTA`].
pub const POOL: &str = "pool_0000000000000000000000dg01";
/// Its account.
pub const ACCOUNT: &str = "acct_0000000000000000000000dg01";
/// acme's own DigitalOcean pool (billed `none`): another account, and no quota row.
pub const OWN_POOL: &str = "pool_0000000000000000000000dg02";
/// Its account.
pub const OWN_ACCOUNT: &str = "acct_0000000000000000000000dg02";
/// A GKE pool offered to acme: no load balancers.
pub const GKE_POOL: &str = "pool_0000000000000000000000gke1";
/// The load balancers each tenant may have on [`POOL`].
pub const QUOTA: i64 = 5;
/// The region of most tests, and another one of the platform account.
pub const REGION: &str = "nyc3";
pub const OTHER_REGION: &str = "sfo3";

/// How long the suite waits for a load balancer, its provider object or its event.
const LIMIT: Duration = Duration::from_secs(20);

/// The catalog of the tests: a platform DigitalOcean account on the fake cloud (nyc3, sfo3) with
/// a metered pool offered to acme and globex and their quotas; acme's own DigitalOcean account
/// and pool (nyc3, no quota); a GKE account and pool offered to acme.
fn catalog() -> Catalog {
    let gke_account = "acct_0000000000000000000000gke1";
    let prices = [("vps.load-balancer.hours", 2)];
    Catalog::new()
        .digitalocean_account(ACCOUNT, None, &[REGION, OTHER_REGION])
        .digitalocean_account(OWN_ACCOUNT, Some("acme"), &[REGION])
        .gke_account(gke_account, None, &["us-central1-a"])
        .pool(POOL, ACCOUNT, "metered", &prices)
        .pool(OWN_POOL, OWN_ACCOUNT, "none", &prices)
        .pool(GKE_POOL, gke_account, "metered", &prices)
        .offer(POOL, "acme")
        .offer(POOL, "globex")
        .offer(GKE_POOL, "acme")
        .quota(POOL, "acme", "loadBalancers", QUOTA)
        .quota(POOL, "globex", "loadBalancers", QUOTA)
}

/// The suite's setup: its catalog, and a worker of the load balancers' reconciler only (the
/// fixtures make what they rest on) with settled passes far apart and no metering in a test.
pub fn setup(backend: Backend) -> System {
    System::on(backend)
        .catalog(catalog())
        .worker_config(settling(Duration::from_secs(600)))
        .reconciling(&[LOAD_BALANCER_KIND])
}

/// The suite's environment as [`setup`] makes it.
pub async fn start(backend: Backend) -> Env {
    setup(backend).start().await
}

/// The suite's worker configuration with settled passes every `settled`.
fn settling(settled: Duration) -> WorkerConfig {
    WorkerConfig { settled: Some(settled), metering_interval: Duration::from_secs(3600), ..fast_config() }
}

impl Env {
    /// Starts the worker with settled passes every `settled` (one worker at a time).
    pub fn start_worker_settling(&mut self, settled: Duration) {
        self.start_worker_with(settling(settled), self.resources());
    }

    /// Starts the worker with every reconciler of the registry, as `bc-worker` runs it.
    pub fn start_vps_worker(&mut self) {
        self.start_worker_of(self.worker_config.clone(), registry(self.resources()));
    }

    /// Polls `get` (as the tenant's admin) until the load balancer is in `state`.
    pub async fn wait_load_balancer_state(&self, tenant: &str, id: &str, state: &str) -> Value {
        self.wait_until(tenant, id, state, |lb| lb["state"] == state).await
    }

    /// Polls the load balancer until `check` holds for its view.
    pub async fn wait_until(&self, tenant: &str, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let body = json!({"tenantId": tenant, "loadBalancerId": id});
        self.get_until(self.admin_of(tenant), "loadBalancers", body, LIMIT, what, check).await
    }

    /// Polls until `check` holds for the load balancer's provider object (by the id it recorded).
    pub async fn wait_fake(&self, tenant: &str, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        poll(LIMIT, what, || async {
            let lb = self.ok_as(self.admin_of(tenant), GET, json!({"tenantId": tenant, "loadBalancerId": id})).await;
            let fake = self.fake_load_balancer(lb["providerName"].as_str().unwrap());
            match fake {
                Some(fake) if check(&fake) => Ok(fake),
                fake => Err(format!("{lb} / {fake:?}")),
            }
        })
        .await
    }

    /// The fake cloud's load balancers.
    pub fn fake_load_balancers(&self) -> Vec<Value> {
        self.cloud.inspect()["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default()
    }

    /// The fake cloud's load balancer named `name`.
    pub fn fake_load_balancer(&self, name: &str) -> Option<Value> {
        self.fake_load_balancers().into_iter().find(|lb| lb["name"] == name)
    }

    /// How many load-balancer requests ever carried a `tag` at the fake cloud.
    pub fn tag_requests(&self) -> u64 {
        self.cloud.inspect()["digitalocean"]["loadBalancerRequestsWithTag"].as_u64().unwrap()
    }

    /// The tenant's events about `subject`, oldest first.
    pub async fn events(&self, tenant: &str, subject: &str) -> Vec<Value> {
        let body = json!({"tenantId": tenant, "limit": 1000});
        let listed = self.ok_as(self.admin_of(tenant), "/api/compute/events/list", body).await;
        listed["events"].as_array().unwrap().iter().filter(|e| e["subject"] == subject).cloned().collect()
    }

    /// Polls the subject's events until one of type `providerLoadBalancer.<kind>` is there
    /// (the provider sees a change a moment before the reconciler records its event) and
    /// returns the latest such.
    pub async fn wait_event(&self, tenant: &str, subject: &str, kind: &str) -> Value {
        let wanted = format!("providerLoadBalancer.{kind}");
        poll(LIMIT, &format!("a {wanted} event"), || async {
            let events = self.events(tenant, subject).await;
            events.iter().rev().find(|e| e["type"] == wanted.as_str()).cloned().ok_or_else(|| format!("{events:?}"))
        })
        .await
    }

    /// A quota's booked count.
    pub async fn quota_used(&self, tenant: &str) -> i64 {
        self.store.quota_fetch(POOL, tenant, "loadBalancers").await.unwrap().used
    }
}

pub const CREATE: &str = "/api/compute/loadBalancers/create";
pub const GET: &str = "/api/compute/loadBalancers/get";
pub const LIST: &str = "/api/compute/loadBalancers/list";
pub const UPDATE: &str = "/api/compute/loadBalancers/update";
pub const DELETE: &str = "/api/compute/loadBalancers/delete";

/// A regional load balancer of acme on [`POOL`] in [`REGION`] over `targets`, HTTP 80 to 8080.
pub fn regional(name: &str, targets: Value) -> Value {
    json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "region": REGION, "targets": targets,
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "idempotencyKey": name,
    })
}

/// `body` with `tenantId` set to `tenant`.
pub fn as_tenant(mut body: Value, tenant: &str) -> Value {
    body["tenantId"] = json!(tenant);
    body
}
