//! The soak's load balancer scenario (../shared/spec/loadBalancers.txt), beside the clusters':
//! each tenant creates, updates, reads and deletes load balancers on the DigitalOcean pool while
//! the fake DigitalOcean fails a share of its calls. It runs when this build serves
//! `bettercompute.compute.v1.LoadBalancers` and a first create succeeds (a refusal is printed
//! and the scenario skipped, as it says nothing about faults); its invariants compare the live
//! load balancers the API lists with the fake cloud's.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{Value, json};

use super::invariants::Check;
use super::load::{Shared, Tenant, call};
use crate::common::platform::{Api, load_balancer_request};

/// The service that must be served.
pub const SERVICE: &str = "bettercompute.compute.v1.LoadBalancers";
/// The `loadBalancers` quota each tenant gets on the pool.
pub const QUOTA: usize = 5;
/// Live load balancers a tenant keeps at most (deleting ones hold quota until the provider
/// deleted them).
const PER_TENANT: usize = 3;
const CREATE: &str = "/api/compute/loadBalancers/create";
const LIST: &str = "/api/compute/loadBalancers/list";

/// Creates and deletes one load balancer of `tenant`: whether the scenario can run here.
pub async fn probe(api: &Api, tenant: &Tenant, pool: &str) -> Result<(), String> {
    let made = api.ok(&tenant.token, CREATE, load_balancer_request(&tenant.id, pool, "probe")).await?;
    let body = json!({"tenantId": tenant.id, "loadBalancerId": made["id"]});
    api.ok(&tenant.token, "/api/compute/loadBalancers/delete", body).await.map(drop)
}

/// Runs `tenant`'s load balancer loop until `stop`.
pub async fn run(api: Api, tenant: Tenant, pool: String, ledger: Shared, started: Instant, stop: Instant) {
    let mut live: Vec<String> = Vec::new();
    let mut n = 0u64;
    while Instant::now() < stop {
        n += 1;
        let roll: f64 = rand::rng().random();
        if live.len() < PER_TENANT && (live.is_empty() || roll < 0.4) {
            let listed = call(&api, &tenant, LIST, json!({"tenantId": tenant.id}), &ledger, started).await;
            let booked = listed.map_or(usize::MAX, |l| l["loadBalancers"].as_array().map_or(0, Vec::len));
            if booked < QUOTA {
                let body = load_balancer_request(&tenant.id, &pool, &format!("lb-{n}"));
                if let Some(made) = call(&api, &tenant, CREATE, body, &ledger, started).await {
                    live.push(made["id"].as_str().unwrap_or_default().to_owned());
                }
            }
        } else if roll < 0.75 && !live.is_empty() {
            let id = &live[rand::rng().random_range(0..live.len())];
            let body = json!({"tenantId": tenant.id, "loadBalancerId": id,
                "healthCheck": {"protocol": "http", "port": 8080, "path": format!("/healthz/{}", n % 7)}});
            call(&api, &tenant, "/api/compute/loadBalancers/update", body, &ledger, started).await;
        } else if !live.is_empty() {
            let id = live.remove(rand::rng().random_range(0..live.len()));
            let body = json!({"tenantId": tenant.id, "loadBalancerId": id});
            if call(&api, &tenant, "/api/compute/loadBalancers/delete", body, &ledger, started).await.is_none() {
                live.push(id);
            }
        }
        let pause = Duration::from_millis(rand::rng().random_range(200..600));
        tokio::time::sleep(pause).await;
    }
}

/// The tenants' load balancers that are not deleted, by id, with their state (through the API).
pub async fn live(api: &Api, tenants: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut live = BTreeMap::new();
    for (tenant, token) in tenants {
        let listed = api.ok(token, LIST, json!({"tenantId": tenant})).await?;
        for lb in listed["loadBalancers"].as_array().cloned().unwrap_or_default() {
            live.insert(
                lb["id"].as_str().unwrap_or_default().to_owned(),
                lb["state"].as_str().unwrap_or_default().to_owned(),
            );
        }
    }
    Ok(live)
}

/// Whether the load balancers settled: every live one ready, as many at the provider.
pub fn settled(cloud_lbs: &[Value], live: &BTreeMap<String, String>) -> bool {
    live.values().all(|state| state == "ready") && cloud_lbs.len() == live.len()
}

/// Leaks and missing ones (by count: the provider's names are the module's to choose), names
/// twice at the provider, and live ones not ready.
pub fn checks(cloud_lbs: &[Value], live: &BTreeMap<String, String>) -> Vec<Check> {
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for lb in cloud_lbs {
        *names.entry(lb["name"].as_str().unwrap_or_default()).or_default() += 1;
    }
    let extra = cloud_lbs.len().saturating_sub(live.len());
    let missing = live.len().saturating_sub(cloud_lbs.len());
    vec![
        Check::new(
            "provider load balancers beyond the live ones (leaks)",
            (0..extra).map(|_| format!("{} at the provider for {} live", cloud_lbs.len(), live.len())),
        ),
        Check::new(
            "live load balancers missing at the provider",
            (0..missing).map(|_| format!("{} at the provider for {} live", cloud_lbs.len(), live.len())),
        ),
        Check::new(
            "load balancers twice at the provider (one name twice)",
            names.iter().filter(|(_, n)| **n > 1).map(|(name, n)| format!("{name} is there {n} times")),
        ),
        Check::new(
            "live load balancers not ready once settled",
            live.iter().filter(|(_, s)| s.as_str() != "ready").map(|(id, s)| format!("{id} is {s}")),
        ),
    ]
}
