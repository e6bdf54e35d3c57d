//! The fake DigitalOcean `/v2/load_balancers`, faithful to DigitalOcean's OpenAPI
//! (`resources/load_balancers`): regional and global (`type`, `glb_settings`,
//! `target_load_balancer_ids`, `domains`), forwarding rules, health check, sticky sessions, the
//! firewall's `ip:`/`cidr:` rules, `redirect_http_to_https`, `vpc_uuid`, `network_stack`, and
//! `droplet_ids` exclusive with `tag`. A PUT is a full representation: what it leaves out goes
//! back to its default. An invalid body is `422`.
//!
//! As DigitalOcean does, a regional load balancer balances only to droplets of its region and
//! VPC: a droplet elsewhere is refused. For the tests' inspection it records every
//! load-balancer request that carried a `tag` at all (better-compute must never send one).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use http::HeaderMap;
use serde_json::{Map, Value, json};

use super::digitalocean::{DoState, Object, default_vpc, empty, enter, not_found, page, refuse, region, uuid};
use super::{Shared, clock, json_response};

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v2/load_balancers", get(lb_list).post(lb_create))
        .route("/v2/load_balancers/{id}", get(lb_get).put(lb_update).delete(lb_delete))
}

/// Activates load balancers that waited long enough: `new` -> `active` with an `ip` (and an
/// `ipv6` when dual-stack).
pub fn advance(state: &mut DoState, now: Instant, delay: Duration) {
    for (index, lb) in state.load_balancers.values_mut().enumerate() {
        if lb.value["status"] == "new" && now.duration_since(lb.created) >= delay {
            lb.value["status"] = json!("active");
            lb.value["ip"] = json!(format!("203.0.113.{}", 10 + index % 200));
            if lb.value["network_stack"] == "DUALSTACK" {
                lb.value["ipv6"] = json!(format!("2001:db8::{:x}", 0x10 + index % 200));
            }
        }
    }
}

/// What the inspection shows of load balancers, and how many requests carried a tag.
pub fn inspect(state: &DoState) -> (Vec<Value>, u64) {
    let lbs = state
        .load_balancers
        .values()
        .map(|o| {
            let v = &o.value;
            json!({
                "id": v["id"], "name": v["name"], "type": v["type"], "status": v["status"], "ip": v["ip"],
                "ipv6": v["ipv6"], "region": v["region"]["slug"], "vpcUuid": v["vpc_uuid"],
                "dropletIds": v["droplet_ids"], "tag": v["tag"],
                "targetLoadBalancerIds": v["target_load_balancer_ids"], "forwardingRules": v["forwarding_rules"],
                "healthCheck": v["health_check"], "stickySessions": v["sticky_sessions"], "firewall": v["firewall"],
                "redirectHttpToHttps": v["redirect_http_to_https"], "domains": v["domains"],
                "glbSettings": v["glb_settings"], "networkStack": v["network_stack"], "sizeUnit": v["size_unit"],
                "updates": v["id"].as_str().and_then(|id| state.load_balancer_updates.get(id)).copied().unwrap_or(0),
            })
        })
        .collect();
    (lbs, state.load_balancer_tag_requests)
}

/// A 422 with DigitalOcean's body.
fn invalid(message: impl AsRef<str>) -> Response {
    refuse(422, message.as_ref())
}

fn str_of<'a>(body: &'a Value, field: &str) -> Result<&'a str, Response> {
    match &body[field] {
        Value::Null => Ok(""),
        Value::String(s) => Ok(s),
        _ => Err(invalid(format!("{field} must be a string"))),
    }
}

fn bool_of(body: &Value, field: &str) -> Result<bool, Response> {
    match &body[field] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        _ => Err(invalid(format!("{field} must be a boolean"))),
    }
}

fn int_of(body: &Value, field: &str, min: i64, max: i64, default: i64) -> Result<i64, Response> {
    match &body[field] {
        Value::Null => Ok(default),
        value => match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(invalid(format!("{field} must be an integer from {min} to {max}"))),
        },
    }
}

fn array_of<'a>(body: &'a Value, field: &str) -> Result<&'a [Value], Response> {
    match &body[field] {
        Value::Null => Ok(&[]),
        Value::Array(items) => Ok(items),
        _ => Err(invalid(format!("{field} must be an array"))),
    }
}

fn one_of<'a>(value: &'a str, field: &str, allowed: &[&str]) -> Result<&'a str, Response> {
    if allowed.contains(&value) {
        Ok(value)
    } else {
        Err(invalid(format!("{field} must be one of {}, not {value:?}", allowed.join(", "))))
    }
}

/// A firewall rule: `ip:1.2.3.4` or `cidr:1.2.0.0/16`.
fn firewall_rule_valid(rule: &str) -> bool {
    if let Some(ip) = rule.strip_prefix("ip:") {
        return ip.parse::<Ipv4Addr>().is_ok();
    }
    let Some((address, length)) = rule.strip_prefix("cidr:").and_then(|c| c.split_once('/')) else { return false };
    address.parse::<Ipv4Addr>().is_ok() && length.parse::<u8>().is_ok_and(|n| n <= 32)
}

/// A certificate the load balancer names: it must exist and be verified.
fn certificate_usable(state: &DoState, id: &str, field: &str) -> Result<(), Response> {
    match state.certificates.get(id) {
        None => Err(invalid(format!("{field}: certificate {id} not found"))),
        Some(cert) if cert.value["state"] != "verified" => {
            Err(invalid(format!("{field}: certificate {id} is {} and cannot be used yet", cert.value["state"])))
        }
        Some(_) => Ok(()),
    }
}

/// Checks a full representation and returns the load balancer it describes (without `id`,
/// `status`, `ip` and `created_at`), with every default filled in.
pub(super) fn normalize(state: &DoState, body: &Value, existing: Option<&Value>) -> Result<Value, Response> {
    if !body.is_object() {
        return Err(invalid("the body must be a JSON object"));
    }
    let name = str_of(body, "name")?;
    if name.is_empty() {
        return Err(invalid("name is required"));
    }
    let kind = match str_of(body, "type")? {
        "" => "REGIONAL",
        other => one_of(other, "type", &["REGIONAL", "REGIONAL_NETWORK", "GLOBAL"])?,
    };
    let global = kind == "GLOBAL";
    let region_slug = str_of(body, "region")?;
    if !global && region_slug.is_empty() {
        return Err(invalid("region is required"));
    }
    let network_stack = match str_of(body, "network_stack")? {
        "" => "IPV4",
        other => one_of(other, "network_stack", &["IPV4", "DUALSTACK"])?,
    };
    if let Some(existing) = existing {
        if existing["type"] != kind {
            return Err(invalid("type cannot be changed after the load balancer is created"));
        }
        if existing["network_stack"] != network_stack {
            return Err(invalid("network_stack cannot be changed after the load balancer is created"));
        }
        if !global && existing["region"]["slug"] != region_slug {
            return Err(invalid("region cannot be changed after the load balancer is created"));
        }
    }
    let size_unit = int_of(body, "size_unit", 1, 100, 1)?;

    let rules = array_of(body, "forwarding_rules")?;
    if rules.is_empty() {
        return Err(invalid("forwarding_rules must have at least one rule"));
    }
    let mut forwarding = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let field = format!("forwarding_rules[{i}]");
        let entry = one_of(
            str_of(rule, "entry_protocol")?,
            &format!("{field}.entry_protocol"),
            &["http", "https", "http2", "http3", "tcp", "udp"],
        )?;
        let target = one_of(
            str_of(rule, "target_protocol")?,
            &format!("{field}.target_protocol"),
            &["http", "https", "http2", "tcp", "udp"],
        )?;
        let entry_port = int_of(rule, "entry_port", 1, 65535, 0)?;
        let target_port = int_of(rule, "target_port", 1, 65535, 0)?;
        if entry_port == 0 || target_port == 0 {
            return Err(invalid(format!("{field}: entry_port and target_port are required")));
        }
        if (entry == "udp") != (target == "udp") {
            return Err(invalid(format!("{field}: udp must be both the entry and the target protocol")));
        }
        let certificate = str_of(rule, "certificate_id")?;
        let passthrough = bool_of(rule, "tls_passthrough")?;
        if passthrough && (entry != "https" || target != "https") {
            return Err(invalid(format!("{field}: tls_passthrough needs https as entry and target protocol")));
        }
        if passthrough && !certificate.is_empty() {
            return Err(invalid(format!("{field}: a certificate_id and tls_passthrough exclude each other")));
        }
        let tls = matches!(entry, "https" | "http2" | "http3");
        if tls && certificate.is_empty() && !passthrough {
            return Err(invalid(format!("{field}: an {entry} entry needs a certificate_id or tls_passthrough")));
        }
        if !tls && !certificate.is_empty() {
            return Err(invalid(format!("{field}: a certificate_id needs an https, http2 or http3 entry")));
        }
        if !certificate.is_empty() {
            certificate_usable(state, certificate, &field)?;
        }
        if forwarding.iter().any(|r: &Value| r["entry_port"] == entry_port && r["entry_protocol"] == entry) {
            return Err(invalid(format!("{field}: entry {entry}:{entry_port} is forwarded twice")));
        }
        forwarding.push(json!({
            "entry_protocol": entry, "entry_port": entry_port, "target_protocol": target, "target_port": target_port,
            "certificate_id": certificate, "tls_passthrough": passthrough,
        }));
    }

    let check = &body["health_check"];
    let health_check = if check.is_null() {
        json!({"protocol": "http", "port": 80, "path": "/", "check_interval_seconds": 10,
               "response_timeout_seconds": 5, "unhealthy_threshold": 5, "healthy_threshold": 3})
    } else {
        let protocol = match str_of(check, "protocol")? {
            "" => "http",
            other => one_of(other, "health_check.protocol", &["http", "https", "tcp"])?,
        };
        let path = match str_of(check, "path")? {
            "" => "/",
            path => path,
        };
        json!({
            "protocol": protocol,
            "port": int_of(check, "port", 1, 65535, 80)?,
            "path": path,
            "check_interval_seconds": int_of(check, "check_interval_seconds", 3, 300, 10)?,
            "response_timeout_seconds": int_of(check, "response_timeout_seconds", 3, 300, 5)?,
            "unhealthy_threshold": int_of(check, "unhealthy_threshold", 2, 10, 5)?,
            "healthy_threshold": int_of(check, "healthy_threshold", 2, 10, 3)?,
        })
    };

    let sticky = &body["sticky_sessions"];
    let sticky_sessions = match str_of(sticky, "type")? {
        "" | "none" => json!({"type": "none"}),
        "cookies" => {
            let cookie = str_of(sticky, "cookie_name")?;
            let ttl = int_of(sticky, "cookie_ttl_seconds", 1, i64::from(i32::MAX), 0)?;
            if cookie.is_empty() || ttl == 0 {
                return Err(invalid("sticky_sessions of type cookies need cookie_name and cookie_ttl_seconds"));
            }
            json!({"type": "cookies", "cookie_name": cookie, "cookie_ttl_seconds": ttl})
        }
        other => return Err(invalid(format!("sticky_sessions.type must be cookies or none, not {other:?}"))),
    };

    let mut firewall = Map::new();
    for side in ["allow", "deny"] {
        let rules = array_of(&body["firewall"], side)?;
        let mut out = Vec::new();
        for rule in rules {
            match rule.as_str() {
                Some(rule) if firewall_rule_valid(rule) => out.push(json!(rule)),
                _ => {
                    return Err(invalid(format!(
                        "firewall.{side}: {rule} is not in the form 'ip:1.2.3.4' or 'cidr:1.2.0.0/16'"
                    )));
                }
            }
        }
        firewall.insert(side.to_owned(), Value::Array(out));
    }

    let tag = str_of(body, "tag")?;
    let mut droplet_ids = Vec::new();
    for id in array_of(body, "droplet_ids")? {
        match id.as_u64() {
            Some(id) => droplet_ids.push(id),
            None => return Err(invalid("droplet_ids must be integers")),
        }
    }
    if !droplet_ids.is_empty() && !tag.is_empty() {
        return Err(invalid("droplet_ids and tag are mutually exclusive"));
    }
    if global && (!droplet_ids.is_empty() || !tag.is_empty()) {
        return Err(invalid("a global load balancer targets load balancers, not droplets or a tag"));
    }

    let vpc_uuid = match str_of(body, "vpc_uuid")? {
        "" if global => String::new(),
        "" => default_vpc(region_slug),
        given => {
            let known = state
                .vpcs
                .get(given)
                .map(|v| v.value["region"] == region_slug)
                .or_else(|| (given == default_vpc(region_slug)).then_some(true));
            match known {
                Some(true) => given.to_owned(),
                Some(false) => return Err(invalid(format!("vpc_uuid {given} is not in region {region_slug}"))),
                None => return Err(invalid(format!("vpc_uuid {given} not found"))),
            }
        }
    };
    if let Some(existing) = existing
        && !global
        && existing["vpc_uuid"] != vpc_uuid.as_str()
    {
        return Err(invalid("vpc_uuid cannot be changed after the load balancer is created"));
    }
    for id in &droplet_ids {
        let Some(droplet) = state.droplets.get(id) else {
            return Err(invalid(format!("droplet {id} not found")));
        };
        if droplet.value["region"]["slug"] != region_slug {
            return Err(invalid(format!("droplet {id} is not in region {region_slug}")));
        }
        let droplet_vpc = droplet.value["vpc_uuid"].as_str().unwrap_or_default();
        if droplet_vpc != vpc_uuid {
            return Err(invalid(format!(
                "droplet {id} is in VPC {droplet_vpc}, not in the load balancer's {vpc_uuid}"
            )));
        }
    }

    let mut domains = Vec::new();
    let mut targets = Vec::new();
    let mut glb_settings = Value::Null;
    if global {
        for (i, domain) in array_of(body, "domains")?.iter().enumerate() {
            let name = str_of(domain, "name")?;
            if name.is_empty() {
                return Err(invalid(format!("domains[{i}].name is required")));
            }
            let certificate = str_of(domain, "certificate_id")?;
            if !certificate.is_empty() {
                certificate_usable(state, certificate, &format!("domains[{i}]"))?;
            }
            domains.push(json!({"name": name, "is_managed": bool_of(domain, "is_managed")?,
                "certificate_id": certificate}));
        }
        for id in array_of(body, "target_load_balancer_ids")? {
            let Some(id) = id.as_str() else { return Err(invalid("target_load_balancer_ids must be strings")) };
            match state.load_balancers.get(id) {
                Some(target) if target.value["type"] != "GLOBAL" => targets.push(json!(id)),
                Some(_) => return Err(invalid(format!("target load balancer {id} is global"))),
                None => return Err(invalid(format!("target load balancer {id} not found"))),
            }
        }
        let settings = &body["glb_settings"];
        if !settings.is_null() {
            let protocol = one_of(
                str_of(settings, "target_protocol")?,
                "glb_settings.target_protocol",
                &["http", "https", "http2"],
            )?;
            glb_settings = json!({"target_protocol": protocol,
                "target_port": int_of(settings, "target_port", 1, 65535, 80)?});
        }
    } else if !array_of(body, "domains")?.is_empty() || !array_of(body, "target_load_balancer_ids")?.is_empty() {
        return Err(invalid("domains and target_load_balancer_ids are for global load balancers"));
    }

    let mut value = json!({
        "name": name,
        "size_unit": size_unit,
        "forwarding_rules": forwarding,
        "health_check": health_check,
        "sticky_sessions": sticky_sessions,
        "redirect_http_to_https": bool_of(body, "redirect_http_to_https")?,
        "enable_proxy_protocol": bool_of(body, "enable_proxy_protocol")?,
        "enable_backend_keepalive": bool_of(body, "enable_backend_keepalive")?,
        "http_idle_timeout_seconds": int_of(body, "http_idle_timeout_seconds", 30, 600, 60)?,
        "vpc_uuid": vpc_uuid,
        "disable_lets_encrypt_dns_records": bool_of(body, "disable_lets_encrypt_dns_records")?,
        "firewall": firewall,
        "network": "EXTERNAL",
        "network_stack": network_stack,
        "type": kind,
        "region": if global { Value::Null } else { region(region_slug) },
        "droplet_ids": droplet_ids,
        "tag": tag,
        "domains": domains,
        "glb_settings": glb_settings,
        "target_load_balancer_ids": targets,
        "tls_cipher_policy": match str_of(body, "tls_cipher_policy")? { "" => "DEFAULT", other => other },
    });
    // What a load balancer does not have (a global one's region, a regional one's global
    // settings) is left out, not null.
    if let Some(fields) = value.as_object_mut() {
        fields.retain(|_, v| !v.is_null());
    }
    Ok(value)
}

/// Counts a request whose body carries a `tag` at all, for the inspection.
fn note_tag(state: &mut DoState, body: &Value) {
    if body.get("tag").is_some() {
        state.load_balancer_tag_requests += 1;
    }
}

async fn lb_create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["name"].as_str().map(str::to_owned));
    let (mut world, body) =
        match enter(&shared, &headers, &body, ("loadBalancer", "create", name.as_deref().unwrap_or(""))) {
            Ok(entered) => entered,
            Err(refusal) => return refusal,
        };
    note_tag(&mut world.digitalocean, &body);
    let mut value = match normalize(&world.digitalocean, &body, None) {
        Ok(value) => value,
        Err(refusal) => return refusal,
    };
    let id = uuid();
    value["id"] = json!(id);
    value["status"] = json!("new");
    value["ip"] = json!("");
    value["ipv6"] = json!("");
    value["created_at"] = json!(clock::now());
    world.digitalocean.load_balancers.insert(id, Object { value: value.clone(), created: Instant::now() });
    json_response(202, json!({"load_balancer": value}))
}

async fn lb_get(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("loadBalancer", "get", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match world.digitalocean.load_balancers.get(&id) {
        Some(lb) => json_response(200, json!({"load_balancer": lb.value})),
        None => not_found(),
    }
}

async fn lb_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("loadBalancer", "list", "*")) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let items = world.digitalocean.load_balancers.values().map(|o| o.value.clone()).collect();
    page(&shared, "load_balancers", "load_balancers", items, &query)
}

async fn lb_update(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let (mut world, body) = match enter(&shared, &headers, &body, ("loadBalancer", "update", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    note_tag(&mut world.digitalocean, &body);
    let Some(existing) = world.digitalocean.load_balancers.get(&id).map(|o| o.value.clone()) else {
        return not_found();
    };
    // A full representation: what is not sent goes back to its default.
    let mut value = match normalize(&world.digitalocean, &body, Some(&existing)) {
        Ok(value) => value,
        Err(refusal) => return refusal,
    };
    for kept in ["id", "status", "ip", "ipv6", "created_at"] {
        value[kept] = existing[kept].clone();
    }
    if let Some(lb) = world.digitalocean.load_balancers.get_mut(&id) {
        lb.value = value.clone();
    }
    *world.digitalocean.load_balancer_updates.entry(id).or_default() += 1;
    json_response(200, json!({"load_balancer": value}))
}

async fn lb_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (mut world, _) = match enter(&shared, &headers, &Bytes::new(), ("loadBalancer", "delete", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let targeted = world.digitalocean.load_balancers.values().any(|lb| {
        lb.value["target_load_balancer_ids"].as_array().is_some_and(|ids| ids.iter().any(|t| t == &json!(id)))
    });
    if targeted {
        return invalid(format!("load balancer {id} is the target of a global load balancer"));
    }
    if world.digitalocean.kept_after_delete.contains(&id) {
        return empty();
    }
    match world.digitalocean.load_balancers.remove(&id) {
        Some(_) => {
            world.digitalocean.load_balancer_updates.remove(&id);
            empty()
        }
        None => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firewall_rules_take_digitaloceans_two_forms() {
        assert!(firewall_rule_valid("ip:1.2.3.4"));
        assert!(firewall_rule_valid("cidr:1.2.0.0/16"));
        assert!(!firewall_rule_valid("1.2.0.0/16"));
        assert!(!firewall_rule_valid("cidr:1.2.0.0"));
        assert!(!firewall_rule_valid("ip:1.2.3.4/32"));
    }
}
