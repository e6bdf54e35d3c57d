//! The soak's steady load: each tenant, in its own task, creates, updates, reads and deletes
//! its clusters one call after another, as a tenant's automation would. A call refused as
//! `UNAVAILABLE` is retried as it was (a create with the same idempotency key); every call and
//! every failure is recorded with its time, for the invariants to judge.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{Value, json};

use crate::common::platform::{Api, cluster_request};

/// Live clusters a tenant keeps at most.
pub const LIVE_PER_TENANT: usize = 6;
/// The clusters a tenant may have that are not deleted (the server's default cap).
const CLUSTER_CAP: usize = 10;
/// `kubernetesClusters.list`.
const LIST: &str = "/api/compute/kubernetesClusters/list";

/// A failed call.
#[derive(Clone, Debug)]
pub struct Failure {
    /// When it failed, from the start of the soak.
    pub at: Duration,
    /// `METHOD` path.
    pub path: String,
    /// The code (`UNAVAILABLE`), `HTTP <status>` without one, or `transport`.
    pub code: String,
    /// The message.
    pub message: String,
}

/// Everything the load did.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Calls made, by path.
    pub calls: BTreeMap<String, u64>,
    /// Failed calls.
    pub failures: Vec<Failure>,
    /// Clusters whose create succeeded: (tenant, id).
    pub created: Vec<(String, String)>,
    /// Clusters whose delete succeeded.
    pub deleted: Vec<String>,
    /// Load balancers whose create succeeded.
    pub lb_created: Vec<String>,
    /// Load balancers whose delete succeeded.
    pub lb_deleted: Vec<String>,
}

/// The shared ledger.
pub type Shared = Arc<Mutex<Ledger>>;

/// One tenant's automation.
pub struct Tenant {
    /// Its id.
    pub id: String,
    /// Its admin's API key.
    pub token: String,
}

/// Runs `tenant`'s loop until `stop`; `started` is the soak's start.
pub async fn run(api: Api, tenant: Tenant, pool: String, ledger: Shared, started: Instant, stop: Instant) {
    let mut live: Vec<String> = Vec::new();
    let mut n = 0u64;
    while Instant::now() < stop {
        n += 1;
        let roll: f64 = rand::rng().random();
        if live.len() < LIVE_PER_TENANT && (live.len() < 2 || roll < 0.45) {
            // Clusters being deleted still count against the cap: make one only while the
            // tenant has room (this task is the tenant's only writer, so the count holds).
            let listed = call(&api, &tenant, LIST, json!({"tenantId": tenant.id}), &ledger, started).await;
            let not_deleted = listed.map_or(usize::MAX, |l| l["clusters"].as_array().map_or(0, Vec::len));
            if not_deleted >= CLUSTER_CAP {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            let key = format!("{}-{n}", tenant.id);
            let body = cluster_request(&tenant.id, &pool, &key);
            if let Some(answer) =
                call(&api, &tenant, "/api/compute/kubernetesClusters/create", body, &ledger, started).await
            {
                let id = answer["id"].as_str().unwrap_or_default().to_owned();
                ledger.lock().unwrap_or_else(|p| p.into_inner()).created.push((tenant.id.clone(), id.clone()));
                live.push(id);
            }
        } else if roll < 0.75 && !live.is_empty() {
            let id = &live[rand::rng().random_range(0..live.len())];
            let networks =
                if n.is_multiple_of(2) { json!(["10.0.0.0/8"]) } else { json!(["192.168.0.0/16", "10.1.0.0/16"]) };
            let body = json!({"tenantId": tenant.id, "clusterId": id, "authorizedNetworks": networks,
                "setAuthorizedNetworks": true, "description": format!("update {n}")});
            call(&api, &tenant, "/api/compute/kubernetesClusters/update", body, &ledger, started).await;
        } else if roll < 0.85 && !live.is_empty() {
            let id = &live[rand::rng().random_range(0..live.len())];
            let body = json!({"tenantId": tenant.id, "clusterId": id});
            call(&api, &tenant, "/api/compute/kubernetesClusters/get", body, &ledger, started).await;
        } else if !live.is_empty() {
            let id = live.remove(rand::rng().random_range(0..live.len()));
            let body = json!({"tenantId": tenant.id, "clusterId": id});
            if call(&api, &tenant, "/api/compute/kubernetesClusters/delete", body, &ledger, started).await.is_some() {
                ledger.lock().unwrap_or_else(|p| p.into_inner()).deleted.push(id);
            } else {
                // Not deleted: it stays live, and a later turn may delete it.
                live.push(id);
            }
        }
        let pause = rand::rng().random_range(100..400);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

/// One call, retried while it is refused `UNAVAILABLE` (for at most a minute); the answer if it
/// succeeded. Each attempt is a call in the ledger.
pub async fn call(
    api: &Api,
    tenant: &Tenant,
    path: &str,
    body: Value,
    ledger: &Shared,
    started: Instant,
) -> Option<Value> {
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        let result = api.call(&tenant.token, path, &body).await;
        let failure = match result {
            Ok((200, answer)) => {
                *ledger.lock().unwrap_or_else(|p| p.into_inner()).calls.entry(path.to_owned()).or_default() += 1;
                return Some(answer);
            }
            Ok((status, answer)) => Failure {
                at: started.elapsed(),
                path: path.to_owned(),
                code: answer["error"]["code"].as_str().map(str::to_owned).unwrap_or_else(|| format!("HTTP {status}")),
                message: answer["error"]["message"].as_str().unwrap_or_default().chars().take(300).collect(),
            },
            Err(error) => {
                Failure { at: started.elapsed(), path: path.to_owned(), code: "transport".to_owned(), message: error }
            }
        };
        let retry = failure.code == "UNAVAILABLE" && Instant::now() < give_up;
        {
            let mut ledger = ledger.lock().unwrap_or_else(|p| p.into_inner());
            *ledger.calls.entry(path.to_owned()).or_default() += 1;
            ledger.failures.push(failure);
        }
        if !retry {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
