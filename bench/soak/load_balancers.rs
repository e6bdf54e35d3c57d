//! The soak's load balancer scenario (the load balancers' API reference), beside the clusters':
//! each tenant creates, updates, reads and deletes load balancers on the DigitalOcean pool while
//! the fake DigitalOcean fails a share of its calls. It runs when this build serves
//! `bettercompute.compute.v1.LoadBalancers` and a first create succeeds (a refusal is printed
//! and the scenario skipped, as it says nothing about faults); its invariants compare the live
//! load balancers the API lists with the fake cloud's, by their provider names (`bc-lb-` and 24
//! characters of the id).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{Value, json};

use better_compute::store::load_balancer_provider_name;

use super::chaos::Sightings;
use super::invariants::Check;
use super::load::{Ledger, Shared, Tenant, call};
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
                    let id = made["id"].as_str().unwrap_or_default().to_owned();
                    ledger.lock().unwrap_or_else(|p| p.into_inner()).lb_created.push(id.clone());
                    live.push(id);
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
            if call(&api, &tenant, "/api/compute/loadBalancers/delete", body, &ledger, started).await.is_some() {
                ledger.lock().unwrap_or_else(|p| p.into_inner()).lb_deleted.push(id);
            } else {
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

/// Writes the API acknowledged: every created load balancer is listed (deleted ones included),
/// every deleted one is deleted.
pub async fn acknowledged(api: &Api, tenants: &[(String, String)], ledger: &Ledger) -> Result<Check, String> {
    let mut deleted_by_id = BTreeMap::new();
    for (tenant, token) in tenants {
        let listed = api.ok(token, LIST, json!({"tenantId": tenant, "includeDeleted": true})).await?;
        for lb in listed["loadBalancers"].as_array().cloned().unwrap_or_default() {
            let deleted = lb["state"] == "deleted" || lb.get("deletedAt").is_some_and(|d| !d.is_null());
            deleted_by_id.insert(lb["id"].as_str().unwrap_or_default().to_owned(), deleted);
        }
    }
    let lost_creates = ledger
        .lb_created
        .iter()
        .filter(|id| !deleted_by_id.contains_key(*id))
        .map(|id| format!("load balancer {id} was created and is not listed"));
    let lost_deletes = ledger
        .lb_deleted
        .iter()
        .filter(|id| deleted_by_id.get(*id) != Some(&true))
        .map(|id| format!("load balancer {id} was deleted and is not"));
    Ok(Check::new(
        "acknowledged load balancer writes the store does not have",
        lost_creates.chain(lost_deletes).collect::<Vec<_>>(),
    ))
}

/// The provider names the live load balancers must have at the provider.
fn expected_names(live: &BTreeMap<String, String>) -> BTreeSet<String> {
    live.keys().map(|id| load_balancer_provider_name(id)).collect()
}

/// The names of the provider's load balancers, each as often as it is there.
fn names(cloud_lbs: &[Value]) -> Vec<String> {
    cloud_lbs.iter().map(|lb| lb["name"].as_str().unwrap_or_default().to_owned()).collect()
}

/// Whether the load balancers settled: every live one ready, and the provider holds exactly
/// theirs.
pub fn settled(cloud_lbs: &[Value], live: &BTreeMap<String, String>) -> bool {
    let names = names(cloud_lbs);
    live.values().all(|state| state == "ready")
        && names.len() == live.len()
        && names.into_iter().collect::<BTreeSet<_>>() == expected_names(live)
}

/// Leaks, missing ones, one created twice (two provider ids under one name, at once or one
/// after the other), and live ones not ready.
pub fn checks(cloud_lbs: &[Value], live: &BTreeMap<String, String>, sightings: &Sightings) -> Vec<Check> {
    let expected = expected_names(live);
    let at_provider = names(cloud_lbs);
    let present: BTreeSet<&String> = at_provider.iter().collect();
    let mut twice: Vec<String> = sightings
        .lb_ids_by_name
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(name, ids)| format!("{name} was created {} times", ids.len()))
        .collect();
    twice.extend((0..sightings.lb_twins).map(|_| "two provider load balancers under one name at once".to_owned()));
    vec![
        Check::new(
            "provider load balancers with no live row (leaks)",
            at_provider.iter().filter(|name| !expected.contains(*name)).map(|name| format!("{name} has no live row")),
        ),
        Check::new(
            "live load balancers missing at the provider",
            live.keys()
                .filter(|id| !present.contains(&load_balancer_provider_name(id)))
                .map(|id| format!("{id} is not at the provider")),
        ),
        Check::new("load balancers created twice at the provider", twice),
        Check::new(
            "live load balancers not ready once settled",
            live.iter().filter(|(_, s)| s.as_str() != "ready").map(|(id, s)| format!("{id} is {s}")),
        ),
    ]
}
