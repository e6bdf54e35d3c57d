//! Provider calls at the pace of their accounts: a shared budget per account that every worker
//! spends (fair across tenants), the breaker that stops an account's calls while its
//! credentials are refused, and credentials rotated under load, on the fake DigitalOcean and
//! GKE, which enforce the providers' published limits.

mod breaker;
mod budget;
mod fairness;
mod provider_word;
mod rotation;

use std::time::Duration;

use better_compute::store::{Backend, LOAD_BALANCER_KIND};
use serde_json::{Value, json};

pub use crate::harness::Env;
use crate::harness::{Catalog, System, fast_config, tenant_principal};

/// The platform's DigitalOcean account and its pool, offered to every tenant of a test.
pub const ACCOUNT: &str = "acct_0000000000000000000000pace";
pub const POOL: &str = "pool_0000000000000000000000pace";
pub const REGION: &str = "nyc3";

/// The pool offered to acme and globex with room for many load balancers; the worker runs
/// the load balancers' reconciler only.
pub fn setup(backend: Backend) -> System {
    let prices = [("vps.load-balancer.hours", 1)];
    let catalog = Catalog::new()
        .digitalocean_account(ACCOUNT, None, &[REGION])
        .pool(POOL, ACCOUNT, "metered", &prices)
        .offer(POOL, "acme")
        .offer(POOL, "globex")
        .quota(POOL, "acme", "loadBalancers", 1_000)
        .quota(POOL, "globex", "loadBalancers", 1_000);
    let config = better_compute::reconcile::WorkerConfig {
        settled: Some(Duration::from_secs(600)),
        metering_interval: Duration::from_secs(3600),
        ..fast_config()
    };
    System::on(backend).catalog(catalog).worker_config(config).reconciling(&[LOAD_BALANCER_KIND])
}

/// A load balancer of `tenant` over its pool targets, named `name`.
pub fn load_balancer(tenant: &str, name: &str) -> Value {
    json!({
        "tenantId": tenant, "poolId": POOL, "name": name, "region": REGION, "targets": {"pool": true},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "idempotencyKey": name,
    })
}

impl Env {
    /// A third tenant, `initech`, offered the pool: its admin's bearer token.
    pub async fn third_tenant(&self) -> String {
        self.server.admin_ok("/api/platform/tenants/create", json!({"id": "initech"})).await;
        self.server.admin_ok("/api/platform/offers/create", json!({"poolId": POOL, "tenantId": "initech"})).await;
        let quota = json!({"poolId": POOL, "tenantId": "initech", "resourceKind": "loadBalancers", "limit": 10});
        self.server.admin_ok("/api/platform/quotas/create", quota).await;
        tenant_principal(&self.store, "initech", "admin").await
    }

    /// Sets the account's call windows: `(requests, seconds)`.
    pub async fn pace_account(&self, windows: &[(i64, i64)]) -> Value {
        let limits: Vec<Value> =
            windows.iter().map(|(requests, seconds)| json!({"requests": requests, "perSeconds": seconds})).collect();
        self.server.admin_ok("/api/platform/accounts/update", json!({"accountId": ACCOUNT, "rateLimits": limits})).await
    }

    /// The account's view.
    pub async fn account(&self) -> Value {
        self.server.admin_ok("/api/platform/accounts/get", json!({"accountId": ACCOUNT})).await
    }
}
