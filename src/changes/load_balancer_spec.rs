//! What a load balancer should be at the provider, computed from the tenant's rows on every
//! pass: its VPC (the subnet's, or the region's default), the machines it reaches (explicit
//! droplet ids of the tenant's counting instances on that network, never a tag), the regional
//! load balancers a global one targets, and the provider ids of its certificates once they are
//! ready. And which parts of it differ from what the provider reports.

use crate::domain::states::ProvisionState;
use crate::provider::{
    Domain, Firewall, ForwardingRule, GlobalSettings, HealthCheck, LoadBalancerSpec, StickySessions,
};
use crate::store::{LoadBalancerRow, Store, TargetInstance};

/// The provider-side representation and what it reaches.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired {
    /// The full representation to send.
    pub spec: LoadBalancerSpec,
    /// The tenant's instance ids (regional) or load balancer ids (global) it reaches.
    pub reached_ids: Vec<String>,
}

/// Whether the provider can be asked now.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// Yes, with this.
    Ready(Box<Desired>),
    /// Not yet: something it rests on is still being made (a certificate being verified).
    Wait(String),
    /// Never as it stands: something it rests on is gone or failed.
    Fail(String),
}

/// Whether `instance` is one a load balancer of `lb`'s tenant, region and network reaches: the
/// same check the create made, made again on every pass.
fn reachable(lb: &LoadBalancerRow, instance: &TargetInstance) -> bool {
    instance.tenant_id == lb.tenant_id
        && instance.account_id == lb.account_id
        && instance.region == lb.region
        && instance.subnet_id == lb.subnet_id
        && instance.counts()
}

/// The health check in force, sent whole even when it is the provider's default: a check the
/// tenant took back (`healthCheck` cleared) must replace the one the provider has, and only a
/// check that is sent can be compared with it.
fn health_check(lb: &LoadBalancerRow) -> HealthCheck {
    let check = lb.settings.health_check_in_force();
    let positive = |value: i32| value.max(1) as u32;
    HealthCheck {
        protocol: check.protocol,
        port: check.port.clamp(1, i32::from(u16::MAX)) as u16,
        path: check.path,
        check_interval_seconds: positive(check.interval_seconds),
        response_timeout_seconds: positive(check.timeout_seconds),
        unhealthy_threshold: positive(check.unhealthy_threshold),
        healthy_threshold: positive(check.healthy_threshold),
    }
}

/// The provider's certificate id of each certificate the load balancer names, or why it cannot
/// be asked yet.
async fn certificates(
    store: &Store,
    lb: &LoadBalancerRow,
) -> crate::error::Result<Result<Vec<(String, String)>, Resolved>> {
    let mut ids = Vec::new();
    for id in lb.settings.certificate_ids() {
        let certificate = match store.load_balancer_certificate(&id).await? {
            Some(c) if c.tenant_id == lb.tenant_id => c,
            _ => return Ok(Err(Resolved::Fail(format!("certificate {id:?} was deleted; name another one")))),
        };
        match certificate.state {
            ProvisionState::Ready if !certificate.provider_id.is_empty() => ids.push((id, certificate.provider_id)),
            ProvisionState::Deleting | ProvisionState::Deleted => {
                return Ok(Err(Resolved::Fail(format!("certificate {id:?} is being deleted; name another one"))));
            }
            ProvisionState::Error => {
                return Ok(Err(Resolved::Fail(format!(
                    "certificate {id:?} failed at the provider; fix it or name another one"
                ))));
            }
            state => return Ok(Err(Resolved::Wait(format!("certificate {id:?} is {state}, not ready yet")))),
        }
    }
    Ok(Ok(ids))
}

/// What `lb` should be at the provider now.
pub async fn desired(store: &Store, lb: &LoadBalancerRow) -> crate::error::Result<Resolved> {
    let certificates = match certificates(store, lb).await? {
        Ok(ids) => ids,
        Err(not_yet) => return Ok(not_yet),
    };
    let provider_certificate = |id: &str| {
        certificates.iter().find(|(ours, _)| ours == id).map(|(_, theirs)| theirs.clone()).unwrap_or_default()
    };
    let forwarding_rules: Vec<ForwardingRule> = lb
        .settings
        .forwarding
        .iter()
        .map(|r| ForwardingRule {
            entry_protocol: r.entry_protocol.clone(),
            entry_port: r.entry_port as u16,
            target_protocol: r.target_protocol.clone(),
            target_port: r.target_port as u16,
            certificate_id: provider_certificate(&r.certificate_id),
            tls_passthrough: r.tls_passthrough,
        })
        .collect();
    let mut spec = LoadBalancerSpec {
        name: lb.provider_name(),
        size_unit: 1,
        forwarding_rules,
        health_check: Some(health_check(lb)),
        sticky_sessions: lb.settings.sticky_sessions.as_ref().map(|s| StickySessions {
            cookie_name: s.cookie_name.clone(),
            cookie_ttl_seconds: s.ttl_seconds.max(1) as u32,
        }),
        firewall: Firewall {
            allow: Firewall::rules_of(&lb.settings.source_ranges.allow),
            deny: Firewall::rules_of(&lb.settings.source_ranges.deny),
        },
        redirect_http_to_https: lb.settings.redirect_http_to_https,
        ..Default::default()
    };
    if lb.is_global() {
        spec.kind = "GLOBAL".to_owned();
        spec.domains = lb
            .settings
            .domains
            .iter()
            .map(|d| Domain { name: d.name.clone(), certificate_id: provider_certificate(&d.certificate_id) })
            .collect();
        spec.global_settings = lb
            .settings
            .forwarding
            .iter()
            .find(|r| matches!(r.target_protocol.as_str(), "http" | "https" | "http2"))
            .map(|r| GlobalSettings { target_protocol: r.target_protocol.clone(), target_port: r.target_port as u16 });
        let mut reached = Vec::new();
        for id in &lb.targets.load_balancer_ids {
            match store.load_balancer_fetch(id).await? {
                Some(target)
                    if target.tenant_id == lb.tenant_id && target.deleted_at.is_none() && !target.is_global() =>
                {
                    if target.provider_id.is_empty() {
                        return Ok(Resolved::Wait(format!("load balancer {id:?} is not made at the provider yet")));
                    }
                    spec.target_load_balancer_ids.push(target.provider_id);
                    reached.push(id.clone());
                }
                _ => {}
            }
        }
        return Ok(Resolved::Ready(Box::new(Desired { spec, reached_ids: reached })));
    }
    spec.kind = "REGIONAL".to_owned();
    spec.region = lb.region.clone();
    spec.network_stack = "DUALSTACK".to_owned();
    if let Some(subnet_id) = &lb.subnet_id {
        match store.load_balancer_subnet(subnet_id).await? {
            Some(subnet) if subnet.tenant_id == lb.tenant_id => {
                if subnet.provider_id.is_empty() {
                    return Ok(Resolved::Wait(format!("subnet {subnet_id:?} is not made at the provider yet")));
                }
                spec.vpc_uuid = subnet.provider_id;
            }
            _ => return Ok(Resolved::Fail(format!("subnet {subnet_id:?} was deleted"))),
        }
    }
    let instances = if lb.targets.pool {
        store.load_balancer_pool_instances(&lb.tenant_id, &lb.pool_id, &lb.region, lb.subnet_id.as_deref()).await?
    } else {
        store.load_balancer_instances(&lb.targets.instance_ids).await?
    };
    let mut reached = Vec::new();
    for instance in instances.iter().filter(|i| reachable(lb, i)) {
        let Some(machine) = instance.machine_id.as_deref().and_then(|m| m.parse::<u64>().ok()) else { continue };
        if !spec.instance_ids.contains(&machine) {
            spec.instance_ids.push(machine);
            reached.push(instance.id.clone());
        }
    }
    Ok(Resolved::Ready(Box::new(Desired { spec, reached_ids: reached })))
}

fn sorted<T: Ord + Clone>(items: &[T]) -> Vec<T> {
    let mut items = items.to_vec();
    items.sort();
    items
}

fn rule_key(rule: &ForwardingRule) -> (String, u16, String, u16, String, bool) {
    (
        rule.entry_protocol.clone(),
        rule.entry_port,
        rule.target_protocol.clone(),
        rule.target_port,
        rule.certificate_id.clone(),
        rule.tls_passthrough,
    )
}

fn same_check(wanted: &HealthCheck, have: &HealthCheck) -> bool {
    let http = wanted.protocol != "tcp";
    wanted.protocol == have.protocol
        && wanted.port == have.port
        && (!http || wanted.path == have.path)
        && wanted.check_interval_seconds == have.check_interval_seconds
        && wanted.response_timeout_seconds == have.response_timeout_seconds
        && wanted.unhealthy_threshold == have.unhealthy_threshold
        && wanted.healthy_threshold == have.healthy_threshold
}

/// The parts (by the API's names) in which the provider's load balancer differs from the one
/// wanted; empty when it matches. Defaults the provider fills in are not differences.
pub fn differences(wanted: &LoadBalancerSpec, have: &LoadBalancerSpec) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let targets_differ = sorted(&wanted.instance_ids) != sorted(&have.instance_ids)
        || sorted(&wanted.target_load_balancer_ids) != sorted(&have.target_load_balancer_ids);
    if targets_differ {
        changed.push("targets");
    }
    let rules = |spec: &LoadBalancerSpec| sorted(&spec.forwarding_rules.iter().map(rule_key).collect::<Vec<_>>());
    if rules(wanted) != rules(have) {
        changed.push("forwarding");
    }
    if let Some(check) = &wanted.health_check
        && !have.health_check.as_ref().is_some_and(|have| same_check(check, have))
    {
        changed.push("healthCheck");
    }
    if wanted.sticky_sessions != have.sticky_sessions {
        changed.push("stickySessions");
    }
    if sorted(&wanted.firewall.allow) != sorted(&have.firewall.allow)
        || sorted(&wanted.firewall.deny) != sorted(&have.firewall.deny)
    {
        changed.push("sourceRanges");
    }
    if wanted.redirect_http_to_https != have.redirect_http_to_https {
        changed.push("redirectHttpToHttps");
    }
    let domains = |spec: &LoadBalancerSpec| {
        sorted(&spec.domains.iter().map(|d| (d.name.clone(), d.certificate_id.clone())).collect::<Vec<_>>())
    };
    if domains(wanted) != domains(have) {
        changed.push("domains");
    }
    if wanted.global_settings.is_some() && wanted.global_settings != have.global_settings {
        changed.push("forwarding");
        changed.dedup();
    }
    if wanted.name != have.name {
        changed.push("name");
    }
    changed
}

/// A forwarding rule by what [`differences`] compares of it, as JSON.
fn rule_json(rule: &ForwardingRule) -> serde_json::Value {
    let (entry_protocol, entry_port, target_protocol, target_port, certificate_id, tls_passthrough) = rule_key(rule);
    serde_json::json!({
        "entryProtocol": entry_protocol, "entryPort": entry_port, "targetProtocol": target_protocol,
        "targetPort": target_port, "certificateId": certificate_id, "tlsPassthrough": tls_passthrough,
    })
}

/// The value of part `part` (a name [`differences`] gives) of `spec`, as JSON.
pub fn part_json(part: &str, spec: &LoadBalancerSpec) -> serde_json::Value {
    use serde_json::json;
    match part {
        "targets" => json!({
            "instanceIds": sorted(&spec.instance_ids),
            "targetLoadBalancerIds": sorted(&spec.target_load_balancer_ids),
        }),
        "forwarding" => {
            let mut rules: Vec<_> = spec.forwarding_rules.iter().collect();
            rules.sort_by_key(|rule| rule_key(rule));
            json!({"rules": rules.into_iter().map(rule_json).collect::<Vec<_>>(), "global": spec.global_settings})
        }
        "healthCheck" => json!(spec.health_check),
        "stickySessions" => json!(spec.sticky_sessions),
        "sourceRanges" => json!({"allow": sorted(&spec.firewall.allow), "deny": sorted(&spec.firewall.deny)}),
        "redirectHttpToHttps" => json!(spec.redirect_http_to_https),
        "domains" => {
            let domains: Vec<_> = spec.domains.iter().map(|d| (d.name.clone(), d.certificate_id.clone())).collect();
            json!(
                sorted(&domains)
                    .into_iter()
                    .map(|(name, certificate)| json!({"name": name, "certificateId": certificate}))
                    .collect::<Vec<_>>()
            )
        }
        "name" => json!(spec.name),
        _ => serde_json::Value::Null,
    }
}

/// Each part in `changed` (as [`differences`] named them) with its value in `wanted` and in
/// `have`: the drift of a load balancer whose desired state was applied.
pub fn drifted_parts(
    wanted: &LoadBalancerSpec,
    have: &LoadBalancerSpec,
    changed: &[&str],
) -> Vec<crate::domain::drift::DriftedField> {
    changed
        .iter()
        .map(|part| crate::domain::drift::DriftedField {
            field: (*part).to_owned(),
            applied: part_json(part, wanted),
            found: part_json(part, have),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_added_at_the_provider_is_drift_of_the_forwarding_with_both_lists() {
        let wanted = regional();
        let mut have = regional();
        have.forwarding_rules.push(ForwardingRule {
            entry_protocol: "tcp".into(),
            entry_port: 2222,
            target_protocol: "tcp".into(),
            target_port: 22,
            ..Default::default()
        });
        let changed = differences(&wanted, &have);
        let drift = drifted_parts(&wanted, &have, &changed);
        assert_eq!(drift.len(), 1);
        assert_eq!(drift[0].field, "forwarding");
        assert_eq!(drift[0].applied["rules"].as_array().unwrap().len(), 1);
        let found = drift[0].found["rules"].as_array().unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.iter().any(|rule| rule["entryPort"] == 2222 && rule["targetPort"] == 22), "{found:?}");
    }
    use crate::provider::digitalocean::load_balancer_health_check_defaults;

    fn regional() -> LoadBalancerSpec {
        LoadBalancerSpec {
            name: "bc-lb-x".into(),
            region: "nyc3".into(),
            kind: "REGIONAL".into(),
            forwarding_rules: vec![ForwardingRule {
                entry_protocol: "http".into(),
                entry_port: 80,
                target_protocol: "http".into(),
                target_port: 8080,
                ..Default::default()
            }],
            instance_ids: vec![2, 1],
            ..Default::default()
        }
    }

    #[test]
    fn provider_defaults_and_order_are_no_difference() {
        let wanted = regional();
        let mut have = regional();
        have.instance_ids = vec![1, 2];
        have.health_check = Some(load_balancer_health_check_defaults());
        have.size_unit = 1;
        assert!(differences(&wanted, &have).is_empty());
    }

    #[test]
    fn each_part_that_differs_is_named() {
        let wanted = regional();
        let mut have = regional();
        have.instance_ids = vec![1, 2, 3];
        have.firewall.deny = vec!["cidr:10.0.0.0/8".into()];
        have.sticky_sessions = Some(StickySessions { cookie_name: "c".into(), cookie_ttl_seconds: 5 });
        assert_eq!(differences(&wanted, &have), ["targets", "stickySessions", "sourceRanges"]);
        let mut checked = regional();
        checked.health_check =
            Some(HealthCheck { protocol: "tcp".into(), port: 22, ..load_balancer_health_check_defaults() });
        assert_eq!(differences(&checked, &regional()), ["healthCheck"]);
    }
}
