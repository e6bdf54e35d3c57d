//! The fake Compute Engine v1 API, as much as tenant networks need: custom-mode VPC networks
//! (`/compute/v1/projects/{p}/global/networks`) and regional subnetworks
//! (`/compute/v1/projects/{p}/regions/{r}/subnetworks`), each insert and delete answered by an
//! operation that is `DONE` after the configured operation duration, when its effect applies.
//!
//! Compute Engine's rules it keeps: names are RFC 1035 labels; an existing name (or one being
//! created) is 409 `alreadyExists`; a subnetwork's range may not overlap another subnetwork of
//! its network (400 `invalid`); a network with subnetworks, and a subnetwork a GKE cluster uses,
//! cannot be deleted (400 `resourceInUseByAnotherResource`); a missing resource is 404
//! `notFound`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};

use super::faults::Failure;
use super::operations::{FakeOperation, OperationEffect, Operations, finish_due};
use super::{Shared, World, bearer, clock, json_response};

/// A network: (project, name).
type NetworkKey = (String, String);
/// A subnetwork: (project, region, name).
type SubnetworkKey = (String, String, String);

/// A fake network.
pub struct FakeNetwork {
    id: u64,
    description: String,
    created: String,
}

/// A fake subnetwork.
pub struct FakeSubnetwork {
    id: u64,
    network: String,
    ip_cidr_range: String,
    created: String,
}

enum Effect {
    InsertNetwork(NetworkKey, FakeNetwork),
    DeleteNetwork(NetworkKey),
    InsertSubnetwork(SubnetworkKey, FakeSubnetwork),
    DeleteSubnetwork(SubnetworkKey),
    /// Applied when the call was answered (an instance its group made again at once).
    Applied,
    Fail(String),
}

impl OperationEffect for Effect {
    fn failure(&self) -> Option<&str> {
        match self {
            Effect::Fail(message) => Some(message),
            _ => None,
        }
    }
}

/// Where an operation runs: a project's global scope, or one of its regions.
#[derive(Clone)]
struct OperationScope {
    project: String,
    region: Option<String>,
}

type ComputeOperation = FakeOperation<OperationScope, Effect>;

/// Every Compute Engine object.
#[derive(Default)]
pub struct ComputeState {
    networks: BTreeMap<NetworkKey, FakeNetwork>,
    subnetworks: BTreeMap<SubnetworkKey, FakeSubnetwork>,
    operations: Operations<OperationScope, Effect>,
}

impl ComputeState {
    /// Finishes every operation that is due, applying its effect.
    pub fn advance(&mut self, now: Instant) {
        for (_, effect) in finish_due(&mut self.operations, now) {
            match effect {
                Effect::InsertNetwork(key, network) => {
                    self.networks.insert(key, network);
                }
                Effect::DeleteNetwork(key) => {
                    self.networks.remove(&key);
                }
                Effect::InsertSubnetwork(key, subnetwork) => {
                    self.subnetworks.insert(key, subnetwork);
                }
                Effect::DeleteSubnetwork(key) => {
                    self.subnetworks.remove(&key);
                }
                Effect::Applied | Effect::Fail(_) => {}
            }
        }
    }

    /// Whether network `name` of `project` exists.
    pub fn has_network(&self, project: &str, name: &str) -> bool {
        self.networks.contains_key(&(project.to_owned(), name.to_owned()))
    }

    /// Whether subnetwork `name` of `project` exists in `region` and belongs to network `network`.
    pub fn has_subnetwork(&self, project: &str, region: &str, name: &str, network: &str) -> bool {
        self.subnetworks
            .get(&(project.to_owned(), region.to_owned(), name.to_owned()))
            .is_some_and(|s| s.network == network)
    }

    /// Whether an unfinished operation inserts this network or subnetwork (a second insert is
    /// 409, as Compute Engine answers while the first runs).
    fn inserting(&self, link: &str) -> bool {
        self.operations.values().any(|op| !op.done && op.operation_type == "insert" && op.target_link.ends_with(link))
    }

    pub fn inspect(&self) -> Value {
        json!({
            "networks": self.networks.iter().map(|((project, name), n)| json!({
                "project": project, "name": name, "description": n.description,
            })).collect::<Vec<_>>(),
            "subnetworks": self.subnetworks.iter().map(|((project, region, name), s)| json!({
                "project": project, "region": region, "name": name, "network": s.network,
                "ipCidrRange": s.ip_cidr_range,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Compute Engine's error body.
pub fn error(status: u16, reason: &str, message: &str) -> Response {
    json_response(
        status,
        json!({"error": {"code": status, "message": message,
                         "errors": [{"domain": "global", "reason": reason, "message": message}]}}),
    )
}

fn not_found(link: &str) -> Response {
    error(404, "notFound", &format!("The resource '{link}' was not found"))
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/compute/v1/{*rest}", any(handle))
}

/// A parsed path.
enum Target {
    Networks,
    Network(String),
    Subnetworks(String),
    Subnetwork(String, String),
    GlobalOperation(String),
    RegionOperation(String, String),
    /// A GKE node's instance: (zone, name).
    Instance(String, String),
}

fn parse(path: &str) -> Option<(String, Target)> {
    let rest = path.strip_prefix("/compute/v1/projects/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let project = parts.first()?.to_string();
    let target = match &parts[1..] {
        ["global", "networks"] => Target::Networks,
        ["global", "networks", name] => Target::Network(name.to_string()),
        ["global", "operations", name] => Target::GlobalOperation(name.to_string()),
        ["regions", region, "subnetworks"] => Target::Subnetworks(region.to_string()),
        ["regions", region, "subnetworks", name] => Target::Subnetwork(region.to_string(), name.to_string()),
        ["regions", region, "operations", name] => Target::RegionOperation(region.to_string(), name.to_string()),
        ["zones", zone, "instances", name] => Target::Instance(zone.to_string(), name.to_string()),
        _ => return None,
    };
    Some((project, target))
}

/// An RFC 1035 label of at most 63 characters, as Compute Engine names are.
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= 63
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && !name.ends_with('-')
}

/// `a.b.c.d/n` as (first address, last address).
fn cidr_bounds(cidr: &str) -> Option<(u32, u32)> {
    let (address, length) = cidr.split_once('/')?;
    let address: Ipv4Addr = address.parse().ok()?;
    let length: u32 = length.parse().ok().filter(|l| *l <= 32)?;
    let mask = if length == 0 { 0 } else { u32::MAX << (32 - length) };
    let first = u32::from(address) & mask;
    Some((first, first | !mask))
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorized = bearer(&headers).is_some_and(|token| shared.world().oauth.account_of(token).is_some());
    if !authorized {
        return error(401, "authError", "Request had invalid authentication credentials.");
    }
    let Some((project, target)) = parse(uri.path()) else {
        return error(404, "notFound", &format!("Not found: {}", uri.path()));
    };
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(e) => return error(400, "parseError", &format!("Invalid JSON payload received. {e}")),
        }
    };
    let context = Context { shared: &shared, project };
    match (method, target) {
        (Method::POST, Target::Networks) => context.network_insert(&body),
        (Method::GET, Target::Network(name)) => context.network_get(&name),
        (Method::DELETE, Target::Network(name)) => context.network_delete(&name),
        (Method::POST, Target::Subnetworks(region)) => context.subnetwork_insert(&region, &body),
        (Method::GET, Target::Subnetwork(region, name)) => context.subnetwork_get(&region, &name),
        (Method::DELETE, Target::Subnetwork(region, name)) => context.subnetwork_delete(&region, &name),
        (Method::GET, Target::GlobalOperation(name)) => context.operation(&name, None),
        (Method::GET, Target::RegionOperation(region, name)) => context.operation(&name, Some(&region)),
        (Method::DELETE, Target::Instance(zone, name)) => context.instance_delete(&zone, &name),
        _ => error(404, "notFound", &format!("Method not found: {}", uri.path())),
    }
}

struct Context<'a> {
    shared: &'a Arc<Shared>,
    project: String,
}

impl Context<'_> {
    fn base(&self) -> String {
        format!("{}/compute/v1/projects/{}", self.shared.base_url, self.project)
    }

    fn network_link(&self, name: &str) -> String {
        format!("{}/global/networks/{name}", self.base())
    }

    fn subnetwork_link(&self, region: &str, name: &str) -> String {
        format!("{}/regions/{region}/subnetworks/{name}", self.base())
    }

    fn operation_json(&self, name: &str, op: &ComputeOperation) -> Value {
        let scope = match &op.scope.region {
            Some(region) => format!("regions/{region}"),
            None => "global".to_owned(),
        };
        let mut value = json!({
            "kind": "compute#operation",
            "name": name,
            "operationType": op.operation_type,
            "targetLink": op.target_link,
            "status": op.status(),
            "progress": if op.done { 100 } else { 0 },
            "insertTime": op.start_time,
            "startTime": op.start_time,
            "selfLink": format!("{}/{scope}/operations/{name}", self.base()),
        });
        if let Some(region) = &op.scope.region {
            value["region"] = json!(format!("{}/regions/{region}", self.base()));
        }
        if op.done {
            value["endTime"] = json!(op.end_time);
        }
        if let Some(message) = &op.error {
            value["error"] = json!({"errors": [{"code": "RESOURCE_OPERATION_FAILED", "message": message}]});
            value["httpErrorStatusCode"] = json!(400);
        }
        value
    }

    /// Records an operation and answers it as Compute Engine does.
    fn start(
        &self,
        world: &mut World,
        region: Option<&str>,
        operation_type: &'static str,
        target_link: String,
        effect: Effect,
    ) -> Response {
        let name = format!("operation-{}-{:08x}", world.next(), rand::random::<u32>());
        let scope = OperationScope { project: self.project.clone(), region: region.map(str::to_owned) };
        let duration = self.shared.config.operation_duration;
        let op = FakeOperation::start(scope, operation_type, target_link, duration, effect);
        let body = self.operation_json(&name, &op);
        world.compute.operations.insert(name, op);
        json_response(200, body)
    }

    /// A scripted failure of `verb` on `kind` `name`: the refusal, or the message its operation
    /// fails with.
    fn scripted(world: &mut World, kind: &str, verb: &str, name: &str) -> Result<Option<String>, Response> {
        match world.faults.take_scripted(kind, verb, name) {
            Some(Failure::Refuse { status, message }) => Err(error(status, "scripted", &message)),
            Some(Failure::OperationError { message }) => Ok(Some(message)),
            // A class is answered before the emulator sees the call.
            Some(Failure::Class(_)) | None => Ok(None),
        }
    }

    fn network_insert(&self, body: &Value) -> Response {
        let name = body["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return error(400, "invalid", &format!("Invalid value for field 'resource.name': '{name}'."));
        }
        if body["autoCreateSubnetworks"].as_bool().unwrap_or(true) {
            return error(400, "invalid", "Only custom-mode networks (autoCreateSubnetworks: false) are emulated.");
        }
        let mut world = self.shared.world();
        let link = self.network_link(name);
        let key = (self.project.clone(), name.to_owned());
        if world.compute.networks.contains_key(&key) || world.compute.inserting(&link) {
            return error(409, "alreadyExists", &format!("The resource '{link}' already exists"));
        }
        let failure = match Self::scripted(&mut world, "network", "create", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let network = FakeNetwork {
            id: 1_000_000 + world.next(),
            description: body["description"].as_str().unwrap_or_default().to_owned(),
            created: clock::now(),
        };
        let effect = match failure {
            Some(message) => Effect::Fail(message),
            None => Effect::InsertNetwork(key, network),
        };
        self.start(&mut world, None, "insert", link, effect)
    }

    fn network_json(&self, world: &World, name: &str, network: &FakeNetwork) -> Value {
        let subnetworks: Vec<String> = world
            .compute
            .subnetworks
            .iter()
            .filter(|((project, _, _), s)| *project == self.project && s.network == name)
            .map(|((_, region, subnet), _)| self.subnetwork_link(region, subnet))
            .collect();
        json!({
            "kind": "compute#network",
            "id": network.id.to_string(),
            "creationTimestamp": network.created,
            "name": name,
            "description": network.description,
            "selfLink": self.network_link(name),
            "autoCreateSubnetworks": false,
            "subnetworks": subnetworks,
            "routingConfig": {"routingMode": "REGIONAL"},
            "networkFirewallPolicyEnforcementOrder": "AFTER_CLASSIC_FIREWALL",
        })
    }

    fn network_get(&self, name: &str) -> Response {
        let mut world = self.shared.world();
        if let Err(refusal) = Self::scripted(&mut world, "network", "get", name) {
            return refusal;
        }
        match world.compute.networks.get(&(self.project.clone(), name.to_owned())) {
            Some(network) => json_response(200, self.network_json(&world, name, network)),
            None => not_found(&format!("projects/{}/global/networks/{name}", self.project)),
        }
    }

    /// Deletes a GKE node's instance; its managed instance group makes it again at once under
    /// the same name, with a fresh disk, as Compute Engine's groups do.
    fn instance_delete(&self, zone: &str, name: &str) -> Response {
        let mut world = self.shared.world();
        let project = self.project.clone();
        let recreated = world
            .gke
            .clusters
            .iter_mut()
            .filter(|(key, _)| key.0 == project)
            .any(|(_, cluster)| cluster.recreate_instance(zone, name));
        if !recreated {
            return not_found(&format!("projects/{project}/zones/{zone}/instances/{name}"));
        }
        let link = format!("{}/zones/{zone}/instances/{name}", self.base());
        self.start(&mut world, None, "delete", link, Effect::Applied)
    }

    fn network_delete(&self, name: &str) -> Response {
        let mut world = self.shared.world();
        let key = (self.project.clone(), name.to_owned());
        if !world.compute.networks.contains_key(&key) {
            return not_found(&format!("projects/{}/global/networks/{name}", self.project));
        }
        let failure = match Self::scripted(&mut world, "network", "delete", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let subnetwork = world
            .compute
            .subnetworks
            .iter()
            .find(|((project, _, _), s)| *project == self.project && s.network == name)
            .map(|((_, region, subnet), _)| self.subnetwork_link(region, subnet));
        if let Some(subnetwork) = subnetwork {
            return error(
                400,
                "resourceInUseByAnotherResource",
                &format!(
                    "The network resource 'projects/{}/global/networks/{name}' is already being used by '{subnetwork}'",
                    self.project
                ),
            );
        }
        let effect = match failure {
            Some(message) => Effect::Fail(message),
            None => Effect::DeleteNetwork(key),
        };
        self.start(&mut world, None, "delete", self.network_link(name), effect)
    }

    fn subnetwork_insert(&self, region: &str, body: &Value) -> Response {
        let name = body["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return error(400, "invalid", &format!("Invalid value for field 'resource.name': '{name}'."));
        }
        let network = body["network"].as_str().unwrap_or_default().rsplit('/').next().unwrap_or_default().to_owned();
        let range = body["ipCidrRange"].as_str().unwrap_or_default();
        let Some((first, last)) = cidr_bounds(range) else {
            return error(400, "invalid", &format!("Invalid value for field 'resource.ipCidrRange': '{range}'."));
        };
        let mut world = self.shared.world();
        if !world.compute.networks.contains_key(&(self.project.clone(), network.clone())) {
            return error(
                400,
                "invalid",
                &format!(
                    "Invalid value for field 'resource.network': 'projects/{}/global/networks/{network}'. The \
                     referenced network resource cannot be found.",
                    self.project
                ),
            );
        }
        let link = self.subnetwork_link(region, name);
        let key = (self.project.clone(), region.to_owned(), name.to_owned());
        if world.compute.subnetworks.contains_key(&key) || world.compute.inserting(&link) {
            return error(409, "alreadyExists", &format!("The resource '{link}' already exists"));
        }
        let conflict = world.compute.subnetworks.iter().find(|((project, _, _), s)| {
            *project == self.project
                && s.network == network
                && cidr_bounds(&s.ip_cidr_range).is_some_and(|(a, b)| a <= last && first <= b)
        });
        if let Some(((_, other_region, other), _)) = conflict {
            return error(
                400,
                "invalid",
                &format!(
                    "Invalid IPCidrRange: {range} conflicts with existing subnetwork '{other}' in region \
                     '{other_region}'."
                ),
            );
        }
        let failure = match Self::scripted(&mut world, "subnetwork", "create", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let subnetwork = FakeSubnetwork {
            id: 1_000_000 + world.next(),
            network,
            ip_cidr_range: range.to_owned(),
            created: clock::now(),
        };
        let effect = match failure {
            Some(message) => Effect::Fail(message),
            None => Effect::InsertSubnetwork(key, subnetwork),
        };
        self.start(&mut world, Some(region), "insert", link, effect)
    }

    fn subnetwork_get(&self, region: &str, name: &str) -> Response {
        let mut world = self.shared.world();
        if let Err(refusal) = Self::scripted(&mut world, "subnetwork", "get", name) {
            return refusal;
        }
        match world.compute.subnetworks.get(&(self.project.clone(), region.to_owned(), name.to_owned())) {
            Some(s) => json_response(
                200,
                json!({
                    "kind": "compute#subnetwork",
                    "id": s.id.to_string(),
                    "creationTimestamp": s.created,
                    "name": name,
                    "network": self.network_link(&s.network),
                    "ipCidrRange": s.ip_cidr_range,
                    "gatewayAddress": cidr_bounds(&s.ip_cidr_range)
                        .map(|(first, _)| Ipv4Addr::from(first + 1).to_string())
                        .unwrap_or_default(),
                    "region": format!("{}/regions/{region}", self.base()),
                    "selfLink": self.subnetwork_link(region, name),
                    "privateIpGoogleAccess": false,
                    "stackType": "IPV4_ONLY",
                    "purpose": "PRIVATE",
                }),
            ),
            None => not_found(&format!("projects/{}/regions/{region}/subnetworks/{name}", self.project)),
        }
    }

    fn subnetwork_delete(&self, region: &str, name: &str) -> Response {
        let mut world = self.shared.world();
        let key = (self.project.clone(), region.to_owned(), name.to_owned());
        let Some(subnetwork) = world.compute.subnetworks.get(&key) else {
            return not_found(&format!("projects/{}/regions/{region}/subnetworks/{name}", self.project));
        };
        let network = subnetwork.network.clone();
        let failure = match Self::scripted(&mut world, "subnetwork", "delete", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        if let Some(cluster) = world.gke.cluster_on_subnetwork(&self.project, &network, name) {
            return error(
                400,
                "resourceInUseByAnotherResource",
                &format!(
                    "The subnetwork resource 'projects/{}/regions/{region}/subnetworks/{name}' is already being used \
                     by GKE cluster '{cluster}'",
                    self.project
                ),
            );
        }
        let effect = match failure {
            Some(message) => Effect::Fail(message),
            None => Effect::DeleteSubnetwork(key),
        };
        self.start(&mut world, Some(region), "delete", self.subnetwork_link(region, name), effect)
    }

    fn operation(&self, name: &str, region: Option<&str>) -> Response {
        let world = self.shared.world();
        match world.compute.operations.get(name) {
            Some(op) if op.scope.project == self.project && op.scope.region.as_deref() == region => {
                json_response(200, self.operation_json(name, op))
            }
            _ => {
                let scope = region.map(|r| format!("regions/{r}")).unwrap_or_else(|| "global".to_owned());
                not_found(&format!("projects/{}/{scope}/operations/{name}", self.project))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_into_their_targets() {
        assert!(matches!(parse("/compute/v1/projects/p/global/networks"), Some((_, Target::Networks))));
        assert!(matches!(
            parse("/compute/v1/projects/p/regions/europe-west1/subnetworks/s"),
            Some((_, Target::Subnetwork(r, s))) if r == "europe-west1" && s == "s"
        ));
        assert!(parse("/compute/v1/projects/p/zones/z/instances").is_none());
        assert!(matches!(parse("/compute/v1/projects/p/zones/z/instances/i"), Some((_, Target::Instance(..)))));
    }

    #[test]
    fn cidr_bounds_cover_the_range() {
        assert_eq!(cidr_bounds("10.0.0.0/24"), Some((0x0a00_0000, 0x0a00_00ff)));
        assert_eq!(cidr_bounds("10.0.0.7/24").map(|b| b.0), Some(0x0a00_0000));
        assert!(cidr_bounds("10.0.0.0/33").is_none());
    }
}
