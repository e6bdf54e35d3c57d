//! Changes someone makes in DigitalOcean's control panel, behind the control plane's back (for
//! tests of drift): a forwarding rule added to a load balancer, a volume grown. Each is checked
//! as DigitalOcean checks it and applied at once; a change DigitalOcean would refuse is a
//! mistake in the test, and panics saying so.

use std::time::Instant;

use serde_json::{Value, json};

use super::clock;
use super::digitalocean::DoState;
use super::do_load_balancers::normalize;
use super::do_volumes::{Effect, MAX_GIGABYTES, VolumeAction, action_json, apply};

/// Appends `rule` (a `forwarding_rules` entry) to load balancer `id`, in place: the id, address
/// and update count stay. False if there is no such load balancer.
pub fn add_forwarding_rule(state: &mut DoState, id: &str, rule: Value) -> bool {
    let Some(existing) = state.load_balancers.get(id).map(|lb| lb.value.clone()) else { return false };
    // The load balancer as a request body (its region by slug) with one more rule, checked as
    // a request is.
    let mut body = existing.clone();
    if let Some(slug) = existing["region"]["slug"].as_str() {
        body["region"] = json!(slug);
    }
    match body["forwarding_rules"].as_array_mut() {
        Some(rules) => rules.push(rule.clone()),
        None => body["forwarding_rules"] = json!([rule]),
    }
    let Ok(mut value) = normalize(state, &body, Some(&existing)) else {
        panic!("DigitalOcean refuses forwarding rule {rule} on load balancer {id}: see do_load_balancers::normalize");
    };
    for kept in ["id", "status", "ip", "ipv6", "created_at"] {
        value[kept] = existing[kept].clone();
    }
    if let Some(lb) = state.load_balancers.get_mut(id) {
        lb.value = value;
    }
    true
}

/// Grows volume `id` to `size_gigabytes` by a `resize_volume` action that completes at once.
/// False if there is no such volume.
pub fn set_volume_size(state: &mut DoState, action_id: u64, id: &str, size_gigabytes: i64) -> bool {
    let Some(volume) = state.volumes.get(id) else { return false };
    let current = volume.value["size_gigabytes"].as_i64().unwrap_or(0);
    assert!(
        size_gigabytes > current && size_gigabytes <= MAX_GIGABYTES,
        "DigitalOcean only grows volumes, up to {MAX_GIGABYTES} GiB: volume {id} has {current}, not {size_gigabytes}"
    );
    let busy = state.volume_actions.iter().any(|a| a.volume_id == id && a.value["status"] == "in-progress");
    assert!(!busy, "volume {id} has an action in progress: DigitalOcean takes one at a time");
    let region = volume.value["region"]["slug"].as_str().unwrap_or_default().to_owned();
    let mut value = action_json(action_id, "resize_volume", &region);
    value["status"] = json!("completed");
    value["completed_at"] = json!(clock::now());
    let effect = Effect::Resize(size_gigabytes);
    state.volume_actions.push(VolumeAction {
        value,
        created: Instant::now(),
        volume_id: id.to_owned(),
        effect,
        by_console: true,
    });
    apply(state, id, effect);
    true
}
