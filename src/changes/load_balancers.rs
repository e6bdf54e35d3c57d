//! Load balancers: the plans of their updates and deletes. An update is planned from the very
//! representation the reconciler would send (computed from the tenant's rows by
//! [`desired`]) and the very comparison it makes ([`differences`]): a part that comes out the
//! same (targets that name the same machines another way) asks nothing of the provider.

use serde_json::json;

use super::load_balancer_spec::{Resolved, desired, differences, part_json};
use super::vps::{DIGITALOCEAN, deleted};
use super::{Action, Effect, Plan};
use crate::error::Result;
use crate::store::{LoadBalancerRow, Store};

/// The fields of a load balancer an update sets, by JSON name, as the tenant gave them.
fn asked(lb: &LoadBalancerRow) -> serde_json::Value {
    json!({
        "forwarding": lb.settings.forwarding,
        "healthCheck": lb.settings.health_check,
        "stickySessions": lb.settings.sticky_sessions,
        "sourceRanges": lb.settings.source_ranges,
        "redirectHttpToHttps": lb.settings.redirect_http_to_https,
        "domains": lb.settings.domains,
        "targets": lb.targets,
    })
}

/// What users notice when `part` changes.
fn disruption(part: &str) -> Option<&'static str> {
    match part {
        "forwarding" => Some("connections on the ports whose rules change are reset"),
        "targets" => Some("machines that leave the targets stop getting new connections"),
        "sourceRanges" => Some("clients outside the new source ranges are refused"),
        _ => None,
    }
}

/// The plan of an update that makes load balancer `before` into `after`: DigitalOcean's update
/// is its whole representation (PUT), so every part that comes out different is one update of
/// the load balancer where it stands, its address kept.
pub async fn load_balancer_update(store: &Store, before: &LoadBalancerRow, after: &LoadBalancerRow) -> Result<Plan> {
    let mut plan = Plan::default();
    let name = before.provider_name();
    let (was, will) = (desired(store, before).await?, desired(store, after).await?);
    let mut parts: Vec<&str> = Vec::new();
    match (&was, &will) {
        (Resolved::Ready(was), Resolved::Ready(will)) => {
            parts = differences(&will.spec, &was.spec);
            for part in &parts {
                let detail = format!("DigitalOcean updates load balancer {name} where it stands; its address stays");
                plan.change(*part, part_json(part, &was.spec), part_json(part, &will.spec), Effect::InPlace, detail);
                if let Some(what) = disruption(part) {
                    plan.disrupt(what);
                }
            }
        }
        (_, Resolved::Wait(why)) => plan.disrupt(format!("DigitalOcean is asked once it can be: {why}")),
        (_, Resolved::Fail(why)) => plan.disrupt(format!("the load balancer will fail at the provider: {why}")),
        (_, Resolved::Ready(_)) => {}
    }
    // A field the tenant changed that resolves to what DigitalOcean already has asks nothing of
    // it; with the representation not resolvable now, each changed field is an update to come.
    let (serde_json::Value::Object(from), serde_json::Value::Object(to)) = (asked(before), asked(after)) else {
        return Ok(plan);
    };
    let resolved = matches!((&was, &will), (Resolved::Ready(_), Resolved::Ready(_)));
    for (field, value) in to {
        let old = from.get(&field).cloned().unwrap_or_default();
        if old == value || parts.contains(&field.as_str()) {
            continue;
        }
        if resolved {
            let detail = format!("DigitalOcean is not asked: load balancer {name} comes out the same");
            plan.change(field, old, value, Effect::None, detail);
        } else {
            plan.change(
                field.clone(),
                old,
                value,
                Effect::InPlace,
                format!("DigitalOcean updates load balancer {name} once it can be asked"),
            );
            parts.push("pending");
        }
    }
    if !parts.is_empty() {
        plan.ask(Action::Update, DIGITALOCEAN, "load balancer", name);
    }
    Ok(plan)
}

/// The plan of deleting a load balancer: its address goes with it.
pub fn load_balancer_delete(lb: &LoadBalancerRow) -> Plan {
    let mut plan = Plan::default();
    let name = lb.provider_name();
    plan.ask(Action::Delete, DIGITALOCEAN, "load balancer", name.clone());
    deleted(&mut plan, lb.state.as_str(), format!("DigitalOcean deletes load balancer {name}"));
    if !lb.address.is_empty() {
        plan.disrupt(format!("address {} stops answering; a new load balancer gets another", lb.address));
    }
    plan.quota_effects.push("frees one load balancer of the pool's quota; its billing ends".into());
    plan
}
