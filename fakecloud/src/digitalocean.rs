//! The fake DigitalOcean v2 API: droplets, VPCs and certificates (`pending` -> `verified`), with
//! DigitalOcean's paging and its error body `{id, message, request_id}`; load balancers are in
//! `do_load_balancers`, volumes and their actions in `do_volumes`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use http::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::faults::Failure;
use super::{Shared, World, bearer, clock, json_response, request_id};

/// One emulated object: its JSON, and when it was made (for its activation).
pub(super) struct Object {
    pub(super) value: Value,
    pub(super) created: Instant,
}

/// Every DigitalOcean object, by kind and id.
#[derive(Default)]
pub struct DoState {
    pub(super) load_balancers: BTreeMap<String, Object>,
    pub(super) droplets: BTreeMap<u64, Object>,
    pub(super) vpcs: BTreeMap<String, Object>,
    pub(super) certificates: BTreeMap<String, Object>,
    pub(super) volumes: BTreeMap<String, Object>,
    /// Every action on a volume, oldest first.
    pub(super) volume_actions: Vec<super::do_volumes::VolumeAction>,
    /// Load-balancer requests whose body carried a `tag` (see `do_load_balancers`).
    pub(super) load_balancer_tag_requests: u64,
    /// How many times each load balancer was updated in place (`PUT`), by id.
    pub(super) load_balancer_updates: BTreeMap<String, u64>,
    /// Load balancers and droplets (by id) whose delete is accepted and does nothing (see
    /// `FakeCloud::do_keep_after_delete`).
    pub(super) kept_after_delete: std::collections::BTreeSet<String>,
}

impl DoState {
    /// Activates what has waited long enough.
    pub fn advance(&mut self, now: Instant, delay: Duration) {
        let due = |o: &Object| now.duration_since(o.created) >= delay;
        super::do_load_balancers::advance(self, now, delay);
        super::do_volumes::advance(self, now, delay);
        for droplet in self.droplets.values_mut() {
            if droplet.value["status"] == "new" && due(droplet) {
                droplet.value["status"] = json!("active");
            }
        }
        for cert in self.certificates.values_mut() {
            if cert.value["state"] == "pending" && due(cert) {
                cert.value["state"] = json!("verified");
            }
        }
    }

    pub fn inspect(&self) -> Value {
        let values = |map: Vec<&Object>| map.into_iter().map(|o| o.value.clone()).collect::<Vec<_>>();
        let (load_balancers, tag_requests) = super::do_load_balancers::inspect(self);
        json!({
            "loadBalancers": load_balancers,
            "loadBalancerRequestsWithTag": tag_requests,
            "droplets": values(self.droplets.values().collect()),
            "vpcs": values(self.vpcs.values().collect()),
            "certificates": values(self.certificates.values().collect()),
            "volumes": super::do_volumes::inspect(self),
        })
    }
}

/// DigitalOcean's error body, with the request id also in the header.
pub fn error(status: u16, message: &str, id: &str) -> Response {
    let kind = match status {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        409 => "conflict",
        422 => "unprocessable_entity",
        429 => "too_many_requests",
        503 => "service_unavailable",
        _ => "server_error",
    };
    let mut response = json_response(status, json!({"id": kind, "message": message, "request_id": id}));
    response.headers_mut().insert("x-request-id", HeaderValue::from_str(id).expect("hex is a header value"));
    response
}

pub(super) fn refuse(status: u16, message: &str) -> Response {
    error(status, message, &request_id())
}

pub(super) fn not_found() -> Response {
    refuse(404, "The resource you were accessing could not be found.")
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .merge(super::do_load_balancers::routes())
        .merge(super::do_volumes::routes())
        .route("/v2/droplets", get(droplet_list).post(droplet_create))
        .route("/v2/droplets/{id}", get(droplet_get).delete(droplet_delete))
        .route("/v2/vpcs", get(vpc_list).post(vpc_create))
        .route("/v2/vpcs/{id}", get(vpc_get).delete(vpc_delete))
        .route("/v2/certificates", get(cert_list).post(cert_create))
        .route("/v2/certificates/{id}", get(cert_get).delete(cert_delete))
}

/// Authenticates, parses the body, and applies a scripted failure: the world, or the refusal.
pub(super) fn enter<'a>(
    shared: &'a Shared,
    headers: &HeaderMap,
    body: &Bytes,
    scripted: (&str, &str, &str),
) -> Result<(std::sync::MutexGuard<'a, World>, Value), Response> {
    let mut world = shared.world();
    if !world.digitalocean_tokens.accepts(bearer(headers)) {
        return Err(refuse(401, "Unable to authenticate you"));
    }
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).map_err(|_| refuse(400, "The request body is not valid JSON."))?
    };
    let (kind, verb, name) = scripted;
    // DigitalOcean has no operations to fail later: every scripted failure is a refusal. (A
    // class is answered before the emulator sees the call.)
    match world.faults.take_scripted(kind, verb, name) {
        Some(Failure::Refuse { status, message }) => return Err(refuse(status, &message)),
        Some(Failure::OperationError { message }) => return Err(refuse(500, &message)),
        Some(Failure::Class(_)) | None => {}
    }
    Ok((world, body))
}

/// A page of `items` with DigitalOcean's `links.pages` and `meta.total`.
pub(super) fn page(
    shared: &Shared,
    path: &str,
    field: &str,
    items: Vec<Value>,
    query: &BTreeMap<String, String>,
) -> Response {
    let per_page = query.get("per_page").and_then(|p| p.parse().ok()).unwrap_or(20usize).clamp(1, 200);
    let page = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1usize).max(1);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let link = |n: usize| format!("{}/v2/{path}?page={n}&per_page={per_page}", shared.base_url);
    let mut pages = serde_json::Map::new();
    if page > 1 {
        pages.insert("first".into(), json!(link(1)));
        pages.insert("prev".into(), json!(link(page - 1)));
    }
    if page < last {
        pages.insert("next".into(), json!(link(page + 1)));
        pages.insert("last".into(), json!(link(last)));
    }
    let slice: Vec<Value> = items.into_iter().skip((page - 1) * per_page).take(per_page).collect();
    json_response(200, json!({field: slice, "links": {"pages": pages}, "meta": {"total": total}}))
}

pub(super) fn region(slug: &str) -> Value {
    json!({
        "name": slug.to_uppercase(), "slug": slug, "sizes": ["s-1vcpu-1gb", "s-2vcpu-4gb"],
        "features": ["private_networking", "backups", "ipv6", "metadata"], "available": true,
    })
}

/// The account's default VPC of a region: a stable id, never in the VPC list (tenant networks
/// are never the default one).
pub(super) fn default_vpc(region: &str) -> String {
    let mut bytes = [0u8; 16];
    for (i, b) in region.bytes().enumerate() {
        bytes[i % 16] ^= b;
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-4{}-a{}-{}", &hex[..8], &hex[8..12], &hex[13..16], &hex[17..20], &hex[20..])
}

/// An RFC 1918 range as (first address, last address, prefix length).
fn private_range(cidr: &str) -> Option<(u32, u32, u32)> {
    let (address, length) = cidr.split_once('/')?;
    let address: std::net::Ipv4Addr = address.parse().ok()?;
    let length: u32 = length.parse().ok().filter(|l| *l <= 32)?;
    let mask = if length == 0 { 0 } else { u32::MAX << (32 - length) };
    let first = u32::from(address) & mask;
    let last = first | !mask;
    let within = |net: u32, bits: u32| {
        let net_mask = u32::MAX << (32 - bits);
        first & net_mask == net && last & net_mask == net
    };
    (within(0x0a00_0000, 8) || within(0xac10_0000, 12) || within(0xc0a8_0000, 16)).then_some((first, last, length))
}

pub(super) fn uuid() -> String {
    let n = rand::random::<u128>();
    let hex = format!("{n:032x}");
    format!("{}-{}-4{}-a{}-{}", &hex[..8], &hex[8..12], &hex[13..16], &hex[17..20], &hex[20..])
}

async fn droplet_create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["name"].as_str().map(str::to_owned));
    let (mut world, body) = match enter(&shared, &headers, &body, ("droplet", "create", name.as_deref().unwrap_or("")))
    {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    for field in ["name", "region", "size", "image"] {
        if body[field].as_str().is_none_or(str::is_empty) {
            return refuse(422, &format!("{field} is required"));
        }
    }
    let vpc = body["vpc_uuid"].as_str().filter(|v| !v.is_empty()).map(str::to_owned);
    if let Some(vpc) = &vpc {
        match world.digitalocean.vpcs.get(vpc) {
            Some(found) if found.value["region"] == body["region"] => {}
            Some(_) => return refuse(422, "The VPC is not in the droplet's region."),
            None => return refuse(422, &format!("VPC {vpc} was not found.")),
        }
    }
    let id = 100_000_000 + world.next();
    let octet = id % 250 + 2;
    let size = body["size"].as_str().unwrap_or_default();
    let value = json!({
        "id": id,
        "name": body["name"],
        "memory": 1024, "vcpus": 1, "disk": 25, "locked": false,
        "status": "new",
        "kernel": null,
        "created_at": clock::now(),
        "features": ["private_networking"],
        "backup_ids": [], "next_backup_window": null, "snapshot_ids": [], "volume_ids": [],
        "image": {"id": 7555620, "name": body["image"], "distribution": "Ubuntu", "slug": body["image"], "public": true,
                  "regions": [body["region"]], "created_at": "2024-04-23T00:00:00Z", "type": "base",
                  "min_disk_size": 7, "size_gigabytes": 2.36, "status": "available"},
        "size": {"slug": size, "memory": 1024, "vcpus": 1, "disk": 25, "transfer": 1.0, "price_monthly": 6.0,
                 "price_hourly": 0.00893, "regions": [body["region"]], "available": true, "description": "Basic"},
        "size_slug": size,
        "networks": {"v4": [
            {"ip_address": format!("198.51.100.{octet}"), "netmask": "255.255.255.0", "gateway": "198.51.100.1", "type": "public"},
            {"ip_address": format!("10.116.0.{octet}"), "netmask": "255.255.240.0", "gateway": "10.116.0.1", "type": "private"},
        ], "v6": []},
        "region": region(body["region"].as_str().unwrap_or_default()),
        "tags": body["tags"].as_array().cloned().unwrap_or_default(),
        "vpc_uuid": vpc.unwrap_or_else(|| default_vpc(body["region"].as_str().unwrap_or_default())),
    });
    world.digitalocean.droplets.insert(id, Object { value: value.clone(), created: Instant::now() });
    let actions =
        json!([{"id": id + 1, "rel": "create", "href": format!("{}/v2/actions/{}", shared.base_url, id + 1)}]);
    json_response(202, json!({"droplet": value, "links": {"actions": actions}}))
}

async fn droplet_get(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("droplet", "get", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match id.parse::<u64>().ok().and_then(|id| world.digitalocean.droplets.get(&id)) {
        Some(droplet) => json_response(200, json!({"droplet": droplet.value})),
        None => not_found(),
    }
}

async fn droplet_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("droplet", "list", "*")) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let tag = query.get("tag_name").cloned().unwrap_or_default();
    let items = world
        .digitalocean
        .droplets
        .values()
        .filter(|o| tag.is_empty() || o.value["tags"].as_array().is_some_and(|t| t.iter().any(|t| t == &json!(tag))))
        .map(|o| o.value.clone())
        .collect();
    page(&shared, "droplets", "droplets", items, &query)
}

async fn droplet_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (mut world, _) = match enter(&shared, &headers, &Bytes::new(), ("droplet", "delete", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    if world.digitalocean.kept_after_delete.contains(&id) {
        return empty();
    }
    match id.parse::<u64>().ok().and_then(|id| world.digitalocean.droplets.remove(&id)) {
        Some(droplet) => {
            let id = droplet.value["id"].as_u64().unwrap_or_default();
            super::do_volumes::forget_droplet(&mut world.digitalocean, id);
            empty()
        }
        None => not_found(),
    }
}

pub(super) fn empty() -> Response {
    json_response(204, Value::Null).map(|_| axum::body::Body::empty())
}

async fn vpc_create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["name"].as_str().map(str::to_owned));
    let (mut world, body) = match enter(&shared, &headers, &body, ("vpc", "create", name.as_deref().unwrap_or(""))) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let name = body["name"].as_str().unwrap_or_default();
    if name.is_empty() || body["region"].as_str().is_none_or(str::is_empty) {
        return refuse(422, "name and region are required");
    }
    if world.digitalocean.vpcs.values().any(|v| v.value["name"] == name) {
        return refuse(409, "A VPC with this name already exists.");
    }
    let octet = world.next() % 250;
    let ip_range = body["ip_range"].as_str().map(str::to_owned).unwrap_or_else(|| format!("10.{octet}.0.0/20"));
    // DigitalOcean's rules for a range: RFC 1918, /16 to /28, no overlap with another VPC of the
    // account in the region.
    let Some((first, last, length)) = private_range(&ip_range) else {
        return refuse(
            422,
            &format!("ip_range {ip_range:?} must be an RFC 1918 range in CIDR notation, from /16 to /28"),
        );
    };
    if !(16..=28).contains(&length) {
        return refuse(422, &format!("ip_range {ip_range:?} may not be smaller than /28 nor larger than /16"));
    }
    let region = body["region"].as_str().unwrap_or_default();
    let overlapping = world.digitalocean.vpcs.values().find(|v| {
        v.value["region"] == region
            && private_range(v.value["ip_range"].as_str().unwrap_or_default())
                .is_some_and(|(a, b, _)| a <= last && first <= b)
    });
    if let Some(other) = overlapping {
        return refuse(
            422,
            &format!("ip_range {ip_range:?} overlaps the range of VPC {} in region {region}", other.value["name"]),
        );
    }
    let id = uuid();
    let value = json!({
        "id": id,
        "urn": format!("do:vpc:{id}"),
        "name": name,
        "description": body["description"].as_str().unwrap_or_default(),
        "region": body["region"],
        "ip_range": ip_range,
        "default": false,
        "created_at": clock::now(),
    });
    world.digitalocean.vpcs.insert(id, Object { value: value.clone(), created: Instant::now() });
    json_response(201, json!({"vpc": value}))
}

async fn vpc_get(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("vpc", "get", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match world.digitalocean.vpcs.get(&id) {
        Some(vpc) => json_response(200, json!({"vpc": vpc.value})),
        None => not_found(),
    }
}

async fn vpc_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("vpc", "list", "*")) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let items = world.digitalocean.vpcs.values().map(|o| o.value.clone()).collect();
    page(&shared, "vpcs", "vpcs", items, &query)
}

async fn vpc_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (mut world, _) = match enter(&shared, &headers, &Bytes::new(), ("vpc", "delete", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    // A VPC with members (droplets, load balancers) cannot be deleted: 403, as documented.
    let in_use = world.digitalocean.droplets.values().any(|d| d.value["vpc_uuid"] == id.as_str())
        || world.digitalocean.load_balancers.values().any(|lb| lb.value["vpc_uuid"] == id.as_str());
    if in_use {
        return refuse(403, "The VPC still has members and cannot be deleted.");
    }
    match world.digitalocean.vpcs.remove(&id) {
        Some(_) => empty(),
        None => not_found(),
    }
}

async fn cert_create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["name"].as_str().map(str::to_owned));
    let (mut world, body) =
        match enter(&shared, &headers, &body, ("certificate", "create", name.as_deref().unwrap_or(""))) {
            Ok(entered) => entered,
            Err(refusal) => return refusal,
        };
    let kind = body["type"].as_str().unwrap_or("custom");
    let valid = match kind {
        "custom" => ["private_key", "leaf_certificate"]
            .iter()
            .all(|f| body[f].as_str().is_some_and(|s| s.contains("-----BEGIN"))),
        "lets_encrypt" => body["dns_names"].as_array().is_some_and(|n| !n.is_empty()),
        _ => false,
    };
    if body["name"].as_str().is_none_or(str::is_empty) || !valid {
        return refuse(422, "a certificate needs a name and either PEMs (custom) or dns_names (lets_encrypt)");
    }
    let id = uuid();
    // The key is a secret: kept nowhere, as DigitalOcean never returns it.
    let value = json!({
        "id": id,
        "name": body["name"],
        "not_after": "2027-11-29T00:00:00Z",
        "sha1_fingerprint": format!("{:040x}", rand::random::<u128>()),
        "created_at": clock::now(),
        "dns_names": body["dns_names"].as_array().cloned().unwrap_or_default(),
        "state": "pending",
        "type": kind,
    });
    world.digitalocean.certificates.insert(id, Object { value: value.clone(), created: Instant::now() });
    json_response(201, json!({"certificate": value}))
}

async fn cert_get(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("certificate", "get", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match world.digitalocean.certificates.get(&id) {
        Some(cert) => json_response(200, json!({"certificate": cert.value})),
        None => not_found(),
    }
}

async fn cert_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("certificate", "list", "*")) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let items = world.digitalocean.certificates.values().map(|o| o.value.clone()).collect();
    page(&shared, "certificates", "certificates", items, &query)
}

async fn cert_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (mut world, _) = match enter(&shared, &headers, &Bytes::new(), ("certificate", "delete", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match world.digitalocean.certificates.remove(&id) {
        Some(_) => empty(),
        None => not_found(),
    }
}
