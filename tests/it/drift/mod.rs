//! Drift: a managed field changed at the provider behind the control plane's back (a node
//! pool resized in the GKE console, a forwarding rule added to a DigitalOcean load balancer, a
//! deployed machine powered off at its BMC), under both of the pool's `policy.drift`:
//! `correct` puts it back and tells so in a `<kind>.drift` event; `report` leaves it, shows it
//! in `drift[]` and tells it once, until the provider changes back or the tenant changes the
//! desired state, which is then applied.

mod clusters;
mod load_balancers;
mod metal;

use serde_json::{Value, json};

use crate::harness::Env;

/// The events of `tenant` about `subject` of type `event_type`, oldest first.
async fn events_of(env: &Env, tenant: &str, subject: &str, event_type: &str) -> Vec<Value> {
    let body = json!({"tenantId": tenant, "limit": 1000});
    let listed = env.ok_as(env.admin_of(tenant), "/api/compute/events/list", body).await;
    listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["subject"] == subject && e["type"] == event_type)
        .cloned()
        .collect()
}

/// Sets the drift policy of `pool` as the operator does.
async fn set_drift_policy(env: &Env, pool: &str, policy: Value) {
    env.server.admin_ok("/api/platform/pools/update", json!({"poolId": pool, "policy": policy})).await;
}

/// The one drift entry of a view, as (field, applied, found, action).
fn only_drift(view: &Value) -> (String, Value, Value, String) {
    let drift = view["drift"].as_array().unwrap_or_else(|| panic!("no drift: {view}"));
    assert_eq!(drift.len(), 1, "{view}");
    let text = |key: &str| drift[0][key].as_str().unwrap().to_owned();
    let json_of = |key: &str| serde_json::from_str::<Value>(&text(key)).unwrap();
    assert!(drift[0]["since"].is_string(), "{view}");
    (text("field"), json_of("applied"), json_of("found"), text("action"))
}

/// Whether a view shows no drift.
fn no_drift(view: &Value) -> bool {
    view["drift"].as_array().is_none_or(Vec::is_empty)
}
