//! The fake GKE v1 API: clusters, node pools, operations that take time, server config per
//! location, and GKE's refusals (a second operation on a busy cluster, an unknown version, a
//! downgrade, more than one change per update).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, Method, Uri};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use super::faults::Failure;
use super::kubeapi::KubeObjects;
use super::{Shared, bearer, clock, json_response};

/// The versions a location offers, by release channel (each list newest first).
#[derive(Clone, Debug, PartialEq)]
pub struct VersionCatalog {
    /// `(channel, versions)`; a channel's default is its first version.
    pub channels: Vec<(String, Vec<String>)>,
    /// The default version of a cluster with no channel.
    pub default_version: String,
}

impl Default for VersionCatalog {
    fn default() -> Self {
        let versions = |list: &[&str]| list.iter().map(|v| v.to_string()).collect::<Vec<_>>();
        Self {
            channels: vec![
                ("RAPID".into(), versions(&["1.33.2-gke.1100", "1.32.6-gke.1200"])),
                ("REGULAR".into(), versions(&["1.32.6-gke.1200", "1.31.9-gke.1300"])),
                ("STABLE".into(), versions(&["1.31.9-gke.1300", "1.30.12-gke.1400"])),
                // As on GKE: Regular's default, and older minors kept on extended support.
                ("EXTENDED".into(), versions(&["1.32.6-gke.1200", "1.31.9-gke.1300", "1.30.12-gke.1400"])),
            ],
            default_version: "1.32.6-gke.1200".into(),
        }
    }
}

impl VersionCatalog {
    /// Every version of every channel, newest first.
    fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = self.channels.iter().flat_map(|(_, v)| v.clone()).collect();
        all.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
        all.dedup();
        all
    }

    fn channel_default(&self, channel: &str) -> Option<String> {
        self.channels.iter().find(|(c, _)| c == channel).and_then(|(_, v)| v.first().cloned())
    }

    /// The version `asked` resolves to (`latest`, `-` or empty mean the default); as on GKE,
    /// `1.X` and `1.X.Y` are aliases of the newest valid version under them.
    fn resolve(&self, asked: &str, channel: &str) -> Option<String> {
        match asked {
            "" | "-" | "latest" => self.channel_default(channel).or_else(|| Some(self.default_version.clone())),
            version => self
                .all()
                .into_iter()
                .filter(|v| v == version || v.strip_prefix(version).is_some_and(|rest| rest.starts_with(['.', '-'])))
                .max_by_key(|v| version_key(v)),
        }
    }
}

/// Orders versions like `1.32.6-gke.1200` by their numbers.
fn version_key(version: &str) -> Vec<u64> {
    version.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect()
}

/// (project, location, cluster name).
pub type ClusterKey = (String, String, String);

pub struct FakePool {
    name: String,
    status: String,
    status_message: String,
    version: String,
    node_count: u64,
    machine_type: String,
    disk_size_gb: u64,
    node_labels: Map<String, Value>,
    autoscaling: Option<Value>,
    max_pods: String,
    /// The zones its nodes run in; `node_count` nodes in each.
    locations: Vec<String>,
    disk_type: String,
    spot: bool,
    /// GKE's `AcceleratorConfig` list, as last set.
    accelerators: Vec<Value>,
    /// GKE's `NodeTaint` list, as last set.
    taints: Vec<Value>,
}

/// One node of a pool, as the cluster's API server lists it.
pub struct FakeNode {
    /// Its pool.
    pub pool: String,
    /// Its number within the pool.
    pub index: u64,
    /// The zone it runs in.
    pub zone: String,
    /// Its kubelet's version.
    pub version: String,
    /// Its machine type.
    pub machine_type: String,
    /// Whether it is a Spot VM.
    pub spot: bool,
    /// The pool's node labels.
    pub labels: Map<String, Value>,
    /// The pool's taints in Kubernetes' form (`{"key", "value", "effect": "NoSchedule"}`).
    pub taints: Vec<Value>,
}

pub struct FakeCluster {
    description: String,
    labels: Map<String, Value>,
    status: String,
    status_message: String,
    master_version: String,
    node_version: String,
    initial_version: String,
    channel: String,
    network: String,
    /// The subnetwork its nodes use (empty: the network's default).
    subnetwork: String,
    /// `masterAuthorizedNetworksConfig` as last set.
    authorized_networks: Value,
    pools: Vec<FakePool>,
    create_time: String,
    id: String,
    /// `127.0.0.1:PORT` of its API server.
    pub endpoint: String,
    ca_pem: String,
    server: Option<JoinHandle<()>>,
    /// What exists inside the cluster.
    pub kube: KubeObjects,
}

impl FakeCluster {
    /// The nodes the serving pools have: `nodeCount` in each of a pool's zones, as on GKE.
    pub fn nodes(&self) -> Vec<FakeNode> {
        let serving = |p: &&FakePool| matches!(p.status.as_str(), "RUNNING" | "RECONCILING");
        let mut nodes = Vec::new();
        for pool in self.pools.iter().filter(serving) {
            let taints: Vec<Value> = pool
                .taints
                .iter()
                .map(|t| json!({"key": t["key"], "value": t["value"], "effect": kubernetes_effect(&t["effect"])}))
                .collect();
            let zones = pool.locations.iter().flat_map(|zone| (0..pool.node_count).map(move |_| zone));
            for (index, zone) in zones.enumerate() {
                nodes.push(FakeNode {
                    pool: pool.name.clone(),
                    index: index as u64,
                    zone: zone.clone(),
                    version: pool.version.clone(),
                    machine_type: pool.machine_type.clone(),
                    spot: pool.spot,
                    labels: pool.node_labels.clone(),
                    taints: taints.clone(),
                });
            }
        }
        nodes
    }
}

/// `NO_SCHEDULE` as Kubernetes spells it on a node (`NoSchedule`).
fn kubernetes_effect(effect: &Value) -> String {
    let effect = effect.as_str().unwrap_or_default();
    effect
        .split('_')
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The zones of a cluster at `location` when nobody named them: the zone of a zonal cluster;
/// one zone (`-a`) of a regional cluster's region (GKE picks three; one keeps fakes small).
pub fn default_locations(location: &str) -> Vec<String> {
    let zonal = location.rsplit_once('-').is_some_and(|(_, last)| last.len() == 1);
    if zonal { vec![location.to_owned()] } else { vec![format!("{location}-a")] }
}

/// The region of a zone or region (`europe-west1-b` is in `europe-west1`).
fn region_of(location: &str) -> &str {
    match location.rsplit_once('-') {
        Some((region, last)) if last.len() == 1 => region,
        _ => location,
    }
}

/// A change `nodePools.update` makes to one pool's configuration.
enum PoolPatch {
    Labels(Map<String, Value>),
    Taints(Vec<Value>),
    MachineType(String),
    DiskSizeGb(u64),
    DiskType(String),
    Accelerators(Vec<Value>),
    Locations(Vec<String>),
}

impl PoolPatch {
    fn apply(self, pool: &mut FakePool) {
        match self {
            PoolPatch::Labels(labels) => pool.node_labels = labels,
            PoolPatch::Taints(taints) => pool.taints = taints,
            PoolPatch::MachineType(machine_type) => pool.machine_type = machine_type,
            PoolPatch::DiskSizeGb(size) => pool.disk_size_gb = size,
            PoolPatch::DiskType(disk_type) => pool.disk_type = disk_type,
            PoolPatch::Accelerators(accelerators) => pool.accelerators = accelerators,
            PoolPatch::Locations(zones) => pool.locations = zones,
        }
    }
}

enum Effect {
    CreateCluster,
    DeleteCluster,
    MasterVersion(String),
    Channel(String),
    AuthorizedNetworks(Value),
    CreatePool(String),
    DeletePool(String),
    PoolVersion(String, String),
    PoolConfig(String, PoolPatch),
    PoolSize(String, u64),
    PoolAutoscaling(String, Value),
    Fail { pool: Option<String>, message: String },
}

struct FakeOperation {
    key: ClusterKey,
    operation_type: &'static str,
    target: String,
    start_time: String,
    end_time: String,
    due: Instant,
    done: bool,
    error: Option<String>,
    effect: Option<Effect>,
}

/// Every GKE object.
#[derive(Default)]
pub struct GkeState {
    pub clusters: BTreeMap<ClusterKey, FakeCluster>,
    operations: BTreeMap<String, FakeOperation>,
    /// Version catalogs by location; others get the configured default.
    pub catalogs: BTreeMap<String, VersionCatalog>,
}

impl GkeState {
    /// Finishes every operation that is due, applying its effect.
    pub fn advance(&mut self, now: Instant) {
        let due: Vec<String> =
            self.operations.iter().filter(|(_, op)| !op.done && op.due <= now).map(|(name, _)| name.clone()).collect();
        for name in due {
            let op = self.operations.get_mut(&name).expect("the operation was just listed");
            op.done = true;
            op.end_time = clock::now();
            let (key, effect) = (op.key.clone(), op.effect.take());
            if let Some(Effect::Fail { message, .. }) = &effect {
                op.error = Some(message.clone());
            }
            if let Some(effect) = effect {
                self.apply(&key, effect);
            }
        }
    }

    fn apply(&mut self, key: &ClusterKey, effect: Effect) {
        if let Effect::DeleteCluster = effect {
            if let Some(cluster) = self.clusters.remove(key)
                && let Some(server) = cluster.server
            {
                server.abort();
            }
            return;
        }
        let Some(cluster) = self.clusters.get_mut(key) else { return };
        cluster.status = "RUNNING".into();
        cluster.status_message.clear();
        let pool = |cluster: &mut FakeCluster, name: &str| -> Option<usize> {
            cluster.pools.iter().position(|p| p.name == name)
        };
        match effect {
            Effect::CreateCluster => cluster.pools.iter_mut().for_each(|p| p.status = "RUNNING".into()),
            Effect::MasterVersion(version) => cluster.master_version = version,
            Effect::Channel(channel) => cluster.channel = channel,
            Effect::AuthorizedNetworks(config) => cluster.authorized_networks = config,
            Effect::CreatePool(name) | Effect::PoolVersion(name, _) | Effect::PoolConfig(name, _)
                if pool(cluster, &name).is_none() => {}
            Effect::CreatePool(name) => {
                let index = pool(cluster, &name).expect("checked above");
                cluster.pools[index].status = "RUNNING".into();
                cluster.node_version = lowest_version(cluster);
            }
            Effect::DeletePool(name) => {
                cluster.pools.retain(|p| p.name != name);
                if !cluster.pools.is_empty() {
                    cluster.node_version = lowest_version(cluster);
                }
            }
            Effect::PoolVersion(name, version) => {
                let index = pool(cluster, &name).expect("checked above");
                cluster.pools[index].version = version;
                cluster.pools[index].status = "RUNNING".into();
                cluster.node_version = lowest_version(cluster);
            }
            Effect::PoolConfig(name, patch) => {
                let index = pool(cluster, &name).expect("checked above");
                patch.apply(&mut cluster.pools[index]);
                cluster.pools[index].status = "RUNNING".into();
            }
            Effect::PoolSize(name, count) => {
                if let Some(index) = pool(cluster, &name) {
                    cluster.pools[index].node_count = count;
                    cluster.pools[index].status = "RUNNING".into();
                }
            }
            Effect::PoolAutoscaling(name, autoscaling) => {
                if let Some(index) = pool(cluster, &name) {
                    cluster.pools[index].autoscaling = Some(autoscaling);
                    cluster.pools[index].status = "RUNNING".into();
                }
            }
            Effect::Fail { pool: Some(name), message } => {
                if let Some(index) = pool(cluster, &name) {
                    cluster.pools[index].status = "ERROR".into();
                    cluster.pools[index].status_message = message;
                }
            }
            Effect::Fail { pool: None, message } => {
                cluster.status = "ERROR".into();
                cluster.status_message = message;
            }
            Effect::DeleteCluster => unreachable!("handled above"),
        }
    }

    /// Moves a cluster's control plane to `version` at once, as a release-channel upgrade
    /// does; its nodes stay where they are until their pools are upgraded.
    pub fn force_version(&mut self, project: &str, location: &str, name: &str, version: &str) -> bool {
        let Some(cluster) = self.clusters.get_mut(&(project.into(), location.into(), name.into())) else {
            return false;
        };
        cluster.master_version = version.to_owned();
        true
    }

    /// Stops every cluster's API server.
    pub fn stop_servers(&mut self) {
        self.clusters.values_mut().filter_map(|c| c.server.take()).for_each(|task| task.abort());
    }

    pub fn inspect(&self) -> Value {
        let clusters: Vec<Value> = self
            .clusters
            .iter()
            .map(|((project, location, name), c)| {
                json!({
                    "project": project, "location": location, "name": name, "id": c.id, "status": c.status,
                    "masterVersion": c.master_version, "nodeVersion": c.node_version, "labels": c.labels,
                    "authorizedNetworks": c.authorized_networks,
                    "network": c.network, "subnetwork": c.subnetwork,
                    "releaseChannel": c.channel, "endpoint": c.endpoint,
                    "nodePools": c.pools.iter().map(|p| json!({
                        "name": p.name, "status": p.status, "version": p.version, "nodeCount": p.node_count,
                        "nodeLabels": p.node_labels, "taints": p.taints, "locations": p.locations,
                        "machineType": p.machine_type, "diskSizeGb": p.disk_size_gb, "diskType": p.disk_type,
                        "spot": p.spot, "accelerators": p.accelerators,
                    })).collect::<Vec<_>>(),
                    "kubernetes": c.kube.inspect(),
                })
            })
            .collect();
        json!({"clusters": clusters})
    }

    /// A cluster of `project` whose nodes use `subnetwork` of `network`, if any (Compute Engine
    /// refuses to delete such a subnetwork).
    pub fn cluster_on_subnetwork(&self, project: &str, network: &str, subnetwork: &str) -> Option<String> {
        self.clusters
            .iter()
            .find(|((p, _, _), c)| p == project && c.network == network && c.subnetwork == subnetwork)
            .map(|((_, _, name), _)| name.clone())
    }

    fn busy(&self, key: &ClusterKey) -> Option<String> {
        self.operations.iter().find(|(_, op)| !op.done && &op.key == key).map(|(name, _)| name.clone())
    }
}

fn lowest_version(cluster: &FakeCluster) -> String {
    cluster.pools.iter().map(|p| p.version.clone()).min_by_key(|v| version_key(v)).unwrap_or_default()
}

/// Google's error body.
pub fn error(status: u16, message: &str) -> Response {
    let code = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    status_error(status, code, message)
}

fn status_error(status: u16, code: &str, message: &str) -> Response {
    json_response(status, json!({"error": {"code": status, "message": message, "status": code}}))
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/v1/{*rest}", any(handle))
}

/// A parsed GKE path.
enum Target {
    Clusters,
    Cluster(String),
    Pools(String),
    Pool(String, String, Option<String>),
    Operation(String),
    ServerConfig,
}

fn parse(path: &str) -> Option<(String, String, Target)> {
    let rest = path.strip_prefix("/v1/projects/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let (project, scope, location) = (parts.first()?, parts.get(1)?, parts.get(2)?);
    if *scope != "locations" && *scope != "zones" {
        return None;
    }
    let target = match &parts[3..] {
        ["clusters"] => Target::Clusters,
        ["clusters", name] => Target::Cluster(name.to_string()),
        ["clusters", name, "nodePools"] => Target::Pools(name.to_string()),
        ["clusters", name, "nodePools", pool] => match pool.split_once(':') {
            Some((pool, verb)) => Target::Pool(name.to_string(), pool.to_string(), Some(verb.to_string())),
            None => Target::Pool(name.to_string(), pool.to_string(), None),
        },
        ["operations", name] => Target::Operation(name.to_string()),
        ["serverConfig"] => Target::ServerConfig,
        _ => return None,
    };
    Some((project.to_string(), location.to_string(), target))
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
        return error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.");
    }
    let Some((project, location, target)) = parse(uri.path()) else {
        return error(404, &format!("Not found: {}", uri.path()));
    };
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(e) => return error(400, &format!("Invalid JSON payload received. {e}")),
        }
    };
    let context = Context { shared: &shared, project, location };
    match (method, target) {
        (Method::GET, Target::Clusters) => context.list(),
        (Method::POST, Target::Clusters) => context.create(&body),
        (Method::GET, Target::Cluster(name)) => context.get(&name),
        (Method::PUT, Target::Cluster(name)) => context.update(&name, &body),
        (Method::DELETE, Target::Cluster(name)) => context.delete(&name),
        (Method::GET, Target::Pools(cluster)) => context.pools(&cluster),
        (Method::POST, Target::Pools(cluster)) => context.pool_create(&cluster, &body),
        (Method::GET, Target::Pool(cluster, pool, None)) => context.pool_get(&cluster, &pool),
        (Method::PUT, Target::Pool(cluster, pool, None)) => context.pool_update(&cluster, &pool, &body),
        (Method::DELETE, Target::Pool(cluster, pool, None)) => context.pool_delete(&cluster, &pool),
        (Method::POST, Target::Pool(cluster, pool, Some(verb))) => context.pool_verb(&cluster, &pool, &verb, &body),
        (Method::GET, Target::Operation(name)) => context.operation(&name),
        (Method::GET, Target::ServerConfig) => context.server_config(),
        _ => error(404, &format!("Method not found: {}", uri.path())),
    }
}

struct Context<'a> {
    shared: &'a Arc<Shared>,
    project: String,
    location: String,
}

fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= 40
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && !name.ends_with('-')
}

/// Every field of GKE's `UpdateNodePoolRequest` (discovery document, container v1).
const UPDATE_NODE_POOL_FIELDS: &[&str] = &[
    "accelerators",
    "bootDisk",
    "clusterId",
    "confidentialNodes",
    "consolidationDelay",
    "containerdConfig",
    "diskSizeGb",
    "diskType",
    "etag",
    "fastSocket",
    "flexStart",
    "gcfsConfig",
    "gvnic",
    "image",
    "imageProject",
    "imageType",
    "kubeletConfig",
    "labels",
    "linuxNodeConfig",
    "locations",
    "loggingConfig",
    "machineType",
    "maintenancePolicy",
    "maxRunDuration",
    "name",
    "nodeConfigUpdateMode",
    "nodeDrainConfig",
    "nodeNetworkConfig",
    "nodePoolId",
    "nodeVersion",
    "projectId",
    "queuedProvisioning",
    "resourceLabels",
    "resourceManagerTags",
    "storagePools",
    "tags",
    "taintConfig",
    "taints",
    "upgradeSettings",
    "windowsNodeConfig",
    "workloadMetadataConfig",
    "zone",
];

/// The `UpdateNodePoolRequest` changes the fake applies.
const EMULATED_NODE_POOL_UPDATES: &[&str] =
    &["nodeVersion", "labels", "taints", "machineType", "diskSizeGb", "diskType", "accelerators", "locations"];

/// An int64 as GKE takes it: a JSON string or a number.
fn int64(value: &Value) -> Option<i64> {
    match value {
        Value::String(text) => text.parse().ok(),
        value => value.as_i64(),
    }
}

/// A `NodeTaint` list (absent: none); an effect GKE does not know is refused as GKE does.
fn check_taints(value: &Value) -> Result<Vec<Value>, Response> {
    let taints = value.as_array().cloned().unwrap_or_default();
    for (i, taint) in taints.iter().enumerate() {
        let effect = taint["effect"].as_str().unwrap_or_default();
        if !["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"].contains(&effect) {
            return Err(error(400, &format!("Invalid value at 'taints[{i}].effect' ({effect:?}).")));
        }
        if taint["key"].as_str().is_none_or(str::is_empty) {
            return Err(error(400, &format!("Invalid value at 'taints[{i}].key': a taint needs a key.")));
        }
    }
    Ok(taints)
}

/// An `AcceleratorConfig` list (absent: none): each with a type and a count of at least 1.
fn check_accelerators(value: &Value) -> Result<Vec<Value>, Response> {
    let accelerators = value.as_array().cloned().unwrap_or_default();
    for (i, accelerator) in accelerators.iter().enumerate() {
        let count = int64(&accelerator["acceleratorCount"]).unwrap_or(0);
        if accelerator["acceleratorType"].as_str().is_none_or(str::is_empty) || count < 1 {
            return Err(error(400, &format!("Invalid value at 'accelerators[{i}]': {accelerator}.")));
        }
    }
    Ok(accelerators)
}

impl Context<'_> {
    /// Node-pool zones, each of which must be in the cluster's region.
    fn zones_of_region(&self, zones: &[Value]) -> Result<Vec<String>, Response> {
        let region = region_of(&self.location);
        zones
            .iter()
            .map(|zone| match zone.as_str() {
                Some(zone) if region_of(zone) == region && zone != region => Ok(zone.to_owned()),
                _ => Err(error(400, &format!("Location {zone} is not a zone of the cluster's region {region}."))),
            })
            .collect()
    }

    fn key(&self, name: &str) -> ClusterKey {
        (self.project.clone(), self.location.clone(), name.to_owned())
    }

    fn catalog(&self, gke: &GkeState) -> VersionCatalog {
        gke.catalogs.get(&self.location).cloned().unwrap_or_else(|| self.shared.config.versions.clone())
    }

    fn prefix(&self, location: &str) -> String {
        format!("{}/v1/projects/{}/locations/{location}", self.shared.base_url, self.project)
    }

    fn cluster_json(&self, key: &ClusterKey, c: &FakeCluster) -> Value {
        let link = format!("{}/clusters/{}", self.prefix(&key.1), key.2);
        let mut cluster = json!({
            "name": key.2,
            "description": c.description,
            "nodePools": c.pools.iter().map(|p| self.pool_json(&link, p)).collect::<Vec<_>>(),
            "masterAuth": {"clusterCaCertificate": STANDARD.encode(&c.ca_pem)},
            "loggingService": "logging.googleapis.com/kubernetes",
            "monitoringService": "monitoring.googleapis.com/kubernetes",
            "network": c.network,
            "subnetwork": c.subnetwork,
            "masterAuthorizedNetworksConfig": c.authorized_networks,
            "clusterIpv4Cidr": "10.4.0.0/14",
            "resourceLabels": c.labels,
            "labelFingerprint": format!("{:08x}", c.labels.len() as u32 * 2_654_435_761),
            "locations": default_locations(&key.1),
            "selfLink": link,
            "zone": key.1,
            "endpoint": c.endpoint,
            "initialClusterVersion": c.initial_version,
            "currentMasterVersion": c.master_version,
            "currentNodeVersion": c.node_version,
            "createTime": c.create_time,
            "status": c.status,
            "nodeIpv4CidrSize": 24,
            "servicesIpv4Cidr": "34.118.224.0/20",
            "currentNodeCount": c.nodes().len(),
            "location": key.1,
            "id": c.id,
            "etag": format!("{:x}", c.create_time.len() + c.master_version.len()),
        });
        if !c.status_message.is_empty() {
            cluster["statusMessage"] = json!(c.status_message);
        }
        if !c.channel.is_empty() {
            cluster["releaseChannel"] = json!({"channel": c.channel});
        }
        cluster
    }

    fn pool_json(&self, cluster_link: &str, p: &FakePool) -> Value {
        let mut pool = json!({
            "name": p.name,
            "config": {
                "machineType": p.machine_type, "diskSizeGb": p.disk_size_gb, "labels": p.node_labels,
                "imageType": "COS_CONTAINERD", "diskType": p.disk_type,
                "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
            },
            "initialNodeCount": p.node_count,
            "management": {"autoUpgrade": true, "autoRepair": true},
            "maxPodsConstraint": {"maxPodsPerNode": p.max_pods},
            "podIpv4CidrSize": 24,
            "locations": p.locations,
            "selfLink": format!("{cluster_link}/nodePools/{}", p.name),
            "version": p.version,
            "status": p.status,
        });
        if let Some(autoscaling) = &p.autoscaling {
            pool["autoscaling"] = autoscaling.clone();
        }
        if !p.status_message.is_empty() {
            pool["statusMessage"] = json!(p.status_message);
        }
        if p.spot {
            pool["config"]["spot"] = json!(true);
        }
        if !p.accelerators.is_empty() {
            pool["config"]["accelerators"] = json!(p.accelerators);
        }
        if !p.taints.is_empty() {
            pool["config"]["taints"] = json!(p.taints);
        }
        pool
    }

    fn operation_json(&self, name: &str, op: &FakeOperation) -> Value {
        let mut value = json!({
            "name": name,
            "zone": op.key.1,
            "operationType": op.operation_type,
            "status": if op.done { "DONE" } else { "RUNNING" },
            "selfLink": format!("{}/operations/{name}", self.prefix(&op.key.1)),
            "targetLink": op.target,
            "startTime": op.start_time,
            "location": op.key.1,
        });
        if op.done {
            value["endTime"] = json!(op.end_time);
        }
        if let Some(message) = &op.error {
            value["error"] = json!({"code": 13, "message": message});
            value["statusMessage"] = json!(message);
        }
        value
    }

    /// Records an operation on `key` and returns it as GKE does.
    fn start(
        &self,
        world: &mut super::World,
        key: &ClusterKey,
        operation_type: &'static str,
        target: String,
        effect: Effect,
    ) -> Response {
        let name = format!("operation-{}-{:08x}", world.next(), rand::random::<u32>());
        let op = FakeOperation {
            key: key.clone(),
            operation_type,
            target,
            start_time: clock::now(),
            end_time: String::new(),
            due: Instant::now() + self.shared.config.operation_duration,
            done: false,
            error: None,
            effect: Some(effect),
        };
        let body = self.operation_json(&name, &op);
        world.gke.operations.insert(name, op);
        json_response(200, body)
    }

    /// The refusal if the cluster is missing, busy or broken; the scripted failure otherwise.
    fn admit(
        &self,
        world: &mut super::World,
        key: &ClusterKey,
        kind: &str,
        verb: &str,
        name: &str,
    ) -> Result<Option<String>, Response> {
        let Some(cluster) = world.gke.clusters.get(key) else {
            return Err(error(404, &format!("Not found: projects/{}/locations/{}/clusters/{}.", key.0, key.1, key.2)));
        };
        if cluster.status == "ERROR" && verb != "delete" {
            return Err(status_error(400, "FAILED_PRECONDITION", "Cluster is in ERROR state; it can only be deleted."));
        }
        if let Some(running) = world.gke.busy(key) {
            return Err(status_error(
                400,
                "FAILED_PRECONDITION",
                &format!(
                    "Cluster is running incompatible operation projects/{}/locations/{}/operations/{running}.",
                    key.0, key.1
                ),
            ));
        }
        match world.faults.take_scripted(kind, verb, name) {
            Some(Failure::Refuse { status, message }) => Err(error(status, &message)),
            Some(Failure::OperationError { message }) => Ok(Some(message)),
            None => Ok(None),
        }
    }

    fn list(&self) -> Response {
        let world = self.shared.world();
        let clusters: Vec<Value> = world
            .gke
            .clusters
            .iter()
            .filter(|(key, _)| key.0 == self.project && (self.location == "-" || key.1 == self.location))
            .map(|(key, c)| self.cluster_json(key, c))
            .collect();
        json_response(200, json!({"clusters": clusters}))
    }

    fn get(&self, name: &str) -> Response {
        let world = self.shared.world();
        match world.gke.clusters.get(&self.key(name)) {
            Some(cluster) => json_response(200, self.cluster_json(&self.key(name), cluster)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{name}.", self.project, self.location),
            ),
        }
    }

    fn new_pool(&self, spec: &Value, version: &str) -> Result<FakePool, Response> {
        let name = spec["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return Err(error(400, &format!("Invalid node pool name {name:?}.")));
        }
        let locations = match spec["locations"].as_array() {
            Some(zones) if !zones.is_empty() => self.zones_of_region(zones)?,
            _ => default_locations(&self.location),
        };
        let taints = check_taints(&spec["config"]["taints"])?;
        let accelerators = check_accelerators(&spec["config"]["accelerators"])?;
        let max_pods = match &spec["maxPodsConstraint"]["maxPodsPerNode"] {
            Value::String(text) => text.clone(),
            Value::Number(n) => n.to_string(),
            _ => "110".into(),
        };
        Ok(FakePool {
            name: name.to_owned(),
            status: "PROVISIONING".into(),
            status_message: String::new(),
            version: version.to_owned(),
            node_count: spec["initialNodeCount"].as_u64().unwrap_or(3),
            machine_type: spec["config"]["machineType"]
                .as_str()
                .filter(|s| !s.is_empty())
                .unwrap_or("e2-medium")
                .into(),
            disk_size_gb: spec["config"]["diskSizeGb"].as_u64().filter(|d| *d > 0).unwrap_or(100),
            node_labels: spec["config"]["labels"].as_object().cloned().unwrap_or_default(),
            autoscaling: spec.get("autoscaling").filter(|a| a.is_object()).cloned(),
            max_pods,
            locations,
            disk_type: spec["config"]["diskType"].as_str().filter(|s| !s.is_empty()).unwrap_or("pd-balanced").into(),
            spot: spec["config"]["spot"] == true,
            accelerators,
            taints,
        })
    }

    fn create(&self, body: &Value) -> Response {
        let spec = &body["cluster"];
        let name = spec["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return error(
                400,
                &format!("Invalid value for field 'cluster.name': {name:?}. Must match [a-z]([-a-z0-9]*[a-z0-9])?."),
            );
        }
        let key = self.key(name);
        let mut world = self.shared.world();
        if world.gke.clusters.contains_key(&key) {
            return error(409, &format!("Already exists: projects/{}/locations/{}/clusters/{name}.", key.0, key.1));
        }
        let catalog = self.catalog(&world.gke);
        let channel = spec["releaseChannel"]["channel"].as_str().unwrap_or_default().replace("UNSPECIFIED", "");
        if !channel.is_empty() && !catalog.channels.iter().any(|(c, _)| *c == channel) {
            return error(400, &format!("Invalid release channel {channel:?}."));
        }
        let asked = spec["initialClusterVersion"].as_str().unwrap_or_default();
        let Some(version) = catalog.resolve(asked, &channel) else {
            return error(400, &format!("Version {asked:?} is invalid."));
        };
        // A network other than the project's default must exist, and the subnetwork be one of it
        // in the cluster's region, as GKE checks before it accepts the cluster.
        let network = spec["network"].as_str().filter(|n| !n.is_empty()).unwrap_or("default").to_owned();
        let subnetwork = spec["subnetwork"].as_str().unwrap_or_default().to_owned();
        if network != "default" && !world.compute.has_network(&key.0, &network) {
            return error(400, &format!("Network \"{network}\" does not exist."));
        }
        // A zone (`europe-west1-b`) is in the region before its last dash; a region is itself.
        let region = match key.1.rsplit_once('-') {
            Some((region, _)) if key.1.matches('-').count() >= 2 => region.to_owned(),
            _ => key.1.clone(),
        };
        if !subnetwork.is_empty() && !world.compute.has_subnetwork(&key.0, &region, &subnetwork, &network) {
            return error(
                400,
                &format!(
                    "Subnetwork \"{subnetwork}\" does not exist in network \"{network}\" and region \"{region}\"."
                ),
            );
        }
        let mut pools = Vec::new();
        let specs = spec["nodePools"].as_array().cloned().unwrap_or_default();
        let specs = if specs.is_empty() {
            vec![json!({"name": "default-pool", "initialNodeCount": spec["initialNodeCount"].as_u64().unwrap_or(3)})]
        } else {
            specs
        };
        for pool in &specs {
            match self.new_pool(pool, &version) {
                Ok(pool) => pools.push(pool),
                Err(refusal) => return refusal,
            }
        }
        let failure = match world.faults.take_scripted("cluster", "create", name) {
            Some(Failure::Refuse { status, message }) => return error(status, &message),
            Some(Failure::OperationError { message }) => Some(message),
            None => None,
        };
        let tls = match super::tls::cluster_tls(name) {
            Ok(tls) => tls,
            Err(message) => return error(500, &message),
        };
        let kube = KubeObjects::default();
        let router = super::kubeapi::routes(Arc::clone(self.shared), key.clone());
        let (address, server) = match super::tls::serve_tls(router, tls.server) {
            Ok(served) => served,
            Err(e) => return error(500, &format!("cannot start the cluster's API server: {e}")),
        };
        let cluster = FakeCluster {
            description: spec["description"].as_str().unwrap_or_default().into(),
            labels: spec["resourceLabels"].as_object().cloned().unwrap_or_default(),
            status: "PROVISIONING".into(),
            status_message: String::new(),
            master_version: version.clone(),
            node_version: version.clone(),
            initial_version: version,
            channel,
            network,
            subnetwork,
            authorized_networks: spec["masterAuthorizedNetworksConfig"].clone(),
            pools,
            create_time: clock::now(),
            id: format!("{:032x}", rand::random::<u128>()),
            endpoint: address.to_string(),
            ca_pem: tls.ca_pem,
            server: Some(server),
            kube,
        };
        world.gke.clusters.insert(key.clone(), cluster);
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        let effect = match failure {
            Some(message) => Effect::Fail { pool: None, message },
            None => Effect::CreateCluster,
        };
        self.start(&mut world, &key, "CREATE_CLUSTER", target, effect)
    }

    fn update(&self, name: &str, body: &Value) -> Response {
        let key = self.key(name);
        let mut world = self.shared.world();
        let update = body["update"].as_object().cloned().unwrap_or_default();
        if update.len() != 1 {
            return error(400, "Exactly one update can be applied to a cluster with each request.");
        }
        let failure = match self.admit(&mut world, &key, "cluster", "update", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let catalog = self.catalog(&world.gke);
        let cluster = world.gke.clusters.get(&key).expect("admitted");
        let (operation_type, effect) = match update.iter().next().expect("one entry") {
            (field, Value::String(asked)) if field == "desiredMasterVersion" => {
                let Some(version) = catalog.resolve(asked, &cluster.channel) else {
                    return error(400, &format!("Master version {asked:?} is unsupported."));
                };
                if version_key(&version) < version_key(&cluster.master_version) {
                    return error(
                        400,
                        &format!("Master cannot be downgraded from {} to {version}.", cluster.master_version),
                    );
                }
                ("UPGRADE_MASTER", Effect::MasterVersion(version))
            }
            (field, value) if field == "desiredReleaseChannel" => {
                let channel = value["channel"].as_str().unwrap_or_default().replace("UNSPECIFIED", "");
                if !channel.is_empty() && catalog.channel_default(&channel).is_none() {
                    return error(400, &format!("Invalid release channel {channel:?}."));
                }
                ("UPDATE_CLUSTER", Effect::Channel(channel))
            }
            (field, value) if field == "desiredMasterAuthorizedNetworksConfig" => {
                ("UPDATE_CLUSTER", Effect::AuthorizedNetworks(value.clone()))
            }
            (field, _) => return error(400, &format!("The fake cloud does not emulate update.{field}.")),
        };
        let effect = failure.map(|message| Effect::Fail { pool: None, message }).unwrap_or(effect);
        world.gke.clusters.get_mut(&key).expect("admitted").status = "RECONCILING".into();
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, operation_type, target, effect)
    }

    fn delete(&self, name: &str) -> Response {
        let key = self.key(name);
        let mut world = self.shared.world();
        let failure = match self.admit(&mut world, &key, "cluster", "delete", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        world.gke.clusters.get_mut(&key).expect("admitted").status = "STOPPING".into();
        let effect = failure.map(|message| Effect::Fail { pool: None, message }).unwrap_or(Effect::DeleteCluster);
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, "DELETE_CLUSTER", target, effect)
    }

    fn pools(&self, cluster: &str) -> Response {
        let key = self.key(cluster);
        let world = self.shared.world();
        let Some(c) = world.gke.clusters.get(&key) else {
            return error(404, &format!("Not found: cluster {cluster}."));
        };
        let link = format!("{}/clusters/{cluster}", self.prefix(&key.1));
        json_response(200, json!({"nodePools": c.pools.iter().map(|p| self.pool_json(&link, p)).collect::<Vec<_>>()}))
    }

    fn pool_get(&self, cluster: &str, pool: &str) -> Response {
        let key = self.key(cluster);
        let world = self.shared.world();
        let found = world.gke.clusters.get(&key).and_then(|c| c.pools.iter().find(|p| p.name == pool));
        match found {
            Some(p) => json_response(200, self.pool_json(&format!("{}/clusters/{cluster}", self.prefix(&key.1)), p)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{cluster}/nodePools/{pool}.", key.0, key.1),
            ),
        }
    }

    fn pool_create(&self, cluster: &str, body: &Value) -> Response {
        let key = self.key(cluster);
        let mut world = self.shared.world();
        let name = body["nodePool"]["name"].as_str().unwrap_or_default().to_owned();
        let failure = match self.admit(&mut world, &key, "nodePool", "create", &name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get(&key).expect("admitted");
        if c.pools.iter().any(|p| p.name == name) {
            return error(409, &format!("Already exists: node pool {name}."));
        }
        let asked = body["nodePool"]["version"].as_str().unwrap_or_default();
        let version = if asked.is_empty() { c.master_version.clone() } else { asked.to_owned() };
        let pool = match self.new_pool(&body["nodePool"], &version) {
            Ok(pool) => pool,
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get_mut(&key).expect("admitted");
        c.pools.push(pool);
        c.status = "RECONCILING".into();
        let effect = match failure {
            Some(message) => Effect::Fail { pool: Some(name.clone()), message },
            None => Effect::CreatePool(name.clone()),
        };
        let target = format!("{}/clusters/{cluster}/nodePools/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, "CREATE_NODE_POOL", target, effect)
    }

    /// Admits a change to an existing pool, then starts it.
    fn pool_change(
        &self,
        cluster: &str,
        pool: &str,
        verb: &str,
        operation_type: &'static str,
        decide: impl FnOnce(&FakeCluster, &VersionCatalog) -> Result<Effect, Response>,
    ) -> Response {
        let key = self.key(cluster);
        let mut world = self.shared.world();
        let failure = match self.admit(&mut world, &key, "nodePool", verb, pool) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let catalog = self.catalog(&world.gke);
        let c = world.gke.clusters.get(&key).expect("admitted");
        if !c.pools.iter().any(|p| p.name == pool) {
            return error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{cluster}/nodePools/{pool}.", key.0, key.1),
            );
        }
        let effect = match decide(c, &catalog) {
            Ok(effect) => {
                failure.map(|message| Effect::Fail { pool: Some(pool.to_owned()), message }).unwrap_or(effect)
            }
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get_mut(&key).expect("admitted");
        c.status = "RECONCILING".into();
        let p = c.pools.iter_mut().find(|p| p.name == pool).expect("checked above");
        p.status = if verb == "delete" { "STOPPING" } else { "RECONCILING" }.into();
        let target = format!("{}/clusters/{cluster}/nodePools/{pool}", self.prefix(&key.1));
        self.start(&mut world, &key, operation_type, target, effect)
    }

    /// `nodePools.update`: one change per request, as an operation; the fields of GKE's
    /// `UpdateNodePoolRequest` the fake does not emulate are refused as such, and names GKE does
    /// not know (`spot`: a pool's Spot VMs cannot change in place) as GKE refuses them.
    fn pool_update(&self, cluster: &str, pool: &str, body: &Value) -> Response {
        let fields = body.as_object().cloned().unwrap_or_default();
        if let Some(unknown) = fields.keys().find(|f| !UPDATE_NODE_POOL_FIELDS.contains(&f.as_str())) {
            return error(400, &format!("Invalid JSON payload received. Unknown name {unknown:?}: Cannot find field."));
        }
        let identity = ["name", "projectId", "zone", "clusterId", "nodePoolId", "etag", "imageType"];
        let changes: Vec<&String> = fields.keys().filter(|f| !identity.contains(&f.as_str())).collect();
        if let Some(field) = changes.iter().find(|f| !EMULATED_NODE_POOL_UPDATES.contains(&f.as_str())) {
            return error(400, &format!("The fake cloud does not emulate nodePools.update {field}."));
        }
        if changes.len() != 1 {
            return error(400, "Exactly one update can be applied to a node pool with each request.");
        }
        let owned = pool.to_owned();
        let value = &fields[changes[0].as_str()];
        let patch = match changes[0].as_str() {
            "nodeVersion" => return self.pool_upgrade(cluster, pool, value.as_str().unwrap_or_default()),
            "labels" => PoolPatch::Labels(value["labels"].as_object().cloned().unwrap_or_default()),
            "taints" => match check_taints(&value["taints"]) {
                Ok(taints) => PoolPatch::Taints(taints),
                Err(refusal) => return refusal,
            },
            "machineType" => match value.as_str().filter(|m| !m.is_empty()) {
                Some(machine_type) => PoolPatch::MachineType(machine_type.to_owned()),
                None => return error(400, "Invalid value for field 'machineType': it must name a machine type."),
            },
            "diskSizeGb" => match int64(value).filter(|size| *size >= 10) {
                Some(size) => PoolPatch::DiskSizeGb(size as u64),
                None => {
                    return error(400, &format!("Invalid value for field 'diskSizeGb': {value}. Must be at least 10."));
                }
            },
            "diskType" => match value.as_str().filter(|d| !d.is_empty()) {
                Some(disk_type) => PoolPatch::DiskType(disk_type.to_owned()),
                None => return error(400, "Invalid value for field 'diskType': it must name a disk type."),
            },
            "accelerators" => match check_accelerators(value) {
                Ok(accelerators) => PoolPatch::Accelerators(accelerators),
                Err(refusal) => return refusal,
            },
            "locations" => match value.as_array().filter(|zones| !zones.is_empty()) {
                Some(zones) => match self.zones_of_region(zones) {
                    Ok(zones) => PoolPatch::Locations(zones),
                    Err(refusal) => return refusal,
                },
                None => return error(400, "Invalid value for field 'locations': a node pool needs at least one zone."),
            },
            other => unreachable!("{other} is one of the emulated updates"),
        };
        // Labels, taints and zones change the pool; the rest migrates its nodes (an upgrade).
        let kind = match &patch {
            PoolPatch::Labels(_) | PoolPatch::Taints(_) | PoolPatch::Locations(_) => "UPDATE_CLUSTER",
            _ => "UPGRADE_NODES",
        };
        self.pool_change(cluster, pool, "update", kind, |_, _| Ok(Effect::PoolConfig(owned, patch)))
    }

    /// `nodePools.update` with `nodeVersion`: never past the control plane, never down.
    fn pool_upgrade(&self, cluster: &str, pool: &str, asked: &str) -> Response {
        let owned = pool.to_owned();
        let asked = asked.to_owned();
        self.pool_change(cluster, pool, "update", "UPGRADE_NODES", move |c, catalog| {
            let version = if asked == "-" || asked == "latest" || asked == c.master_version {
                Some(c.master_version.clone())
            } else {
                catalog.resolve(&asked, "")
            };
            let Some(version) = version else {
                return Err(error(400, &format!("Node version {asked:?} is unsupported.")));
            };
            if version_key(&version) > version_key(&c.master_version) {
                return Err(error(
                    400,
                    &format!("Node version {version} must not be newer than the master's {}.", c.master_version),
                ));
            }
            let current = c.pools.iter().find(|p| p.name == owned).map(|p| p.version.clone()).unwrap_or_default();
            if version_key(&version) < version_key(&current) {
                return Err(error(400, &format!("Node pool cannot be downgraded from {current} to {version}.")));
            }
            Ok(Effect::PoolVersion(owned, version))
        })
    }

    fn pool_verb(&self, cluster: &str, pool: &str, verb: &str, body: &Value) -> Response {
        let owned = pool.to_owned();
        match verb {
            "setSize" => {
                let Some(count) = body["nodeCount"].as_u64() else {
                    return error(400, "nodeCount is required.");
                };
                self.pool_change(cluster, pool, "update", "SET_NODE_POOL_SIZE", move |_, _| {
                    Ok(Effect::PoolSize(owned, count))
                })
            }
            "setAutoscaling" => {
                let autoscaling = body["autoscaling"].clone();
                let (min, max) = (
                    autoscaling["minNodeCount"].as_i64().unwrap_or(0),
                    autoscaling["maxNodeCount"].as_i64().unwrap_or(0),
                );
                if autoscaling["enabled"] == true && (min > max || max == 0) {
                    return error(400, "Autoscaling requires 0 < maxNodeCount and minNodeCount <= maxNodeCount.");
                }
                self.pool_change(cluster, pool, "update", "UPDATE_CLUSTER", move |_, _| {
                    Ok(Effect::PoolAutoscaling(owned, autoscaling))
                })
            }
            _ => error(404, &format!("Method not found: {verb}.")),
        }
    }

    fn pool_delete(&self, cluster: &str, pool: &str) -> Response {
        let owned = pool.to_owned();
        self.pool_change(cluster, pool, "delete", "DELETE_NODE_POOL", move |_, _| Ok(Effect::DeletePool(owned)))
    }

    fn operation(&self, name: &str) -> Response {
        let world = self.shared.world();
        match world.gke.operations.get(name).filter(|op| op.key.0 == self.project) {
            Some(op) => json_response(200, self.operation_json(name, op)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/operations/{name}.", self.project, self.location),
            ),
        }
    }

    fn server_config(&self) -> Response {
        let world = self.shared.world();
        let catalog = self.catalog(&world.gke);
        let all = catalog.all();
        let channels: Vec<Value> = catalog
            .channels
            .iter()
            .map(|(channel, versions)| {
                json!({
                    "channel": channel, "defaultVersion": versions.first(), "validVersions": versions,
                    "upgradeTargetVersion": versions.first(),
                })
            })
            .collect();
        json_response(
            200,
            json!({
                "defaultClusterVersion": catalog.default_version,
                "validNodeVersions": all,
                "defaultImageType": "COS_CONTAINERD",
                "validImageTypes": ["COS_CONTAINERD", "UBUNTU_CONTAINERD"],
                "validMasterVersions": all,
                "channels": channels,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_their_numbers() {
        assert!(version_key("1.32.6-gke.1200") > version_key("1.32.6-gke.300"));
        assert!(version_key("1.33.0-gke.1") > version_key("1.32.9-gke.9"));
        let catalog = VersionCatalog::default();
        assert_eq!(catalog.all()[0], "1.33.2-gke.1100");
        assert_eq!(catalog.resolve("latest", "STABLE").unwrap(), "1.31.9-gke.1300");
        assert_eq!(catalog.resolve("latest", "EXTENDED").unwrap(), "1.32.6-gke.1200");
        assert_eq!(catalog.resolve("1.30", "EXTENDED").unwrap(), "1.30.12-gke.1400");
        assert_eq!(catalog.resolve("1.0.0-gke.1", ""), None);
    }

    #[test]
    fn paths_parse_with_custom_verbs() {
        let (project, location, target) = parse("/v1/projects/p/locations/l/clusters/c/nodePools/np:setSize").unwrap();
        assert_eq!((project.as_str(), location.as_str()), ("p", "l"));
        assert!(matches!(target, Target::Pool(c, p, Some(v)) if c == "c" && p == "np" && v == "setSize"));
        assert!(parse("/v1/projects/p/regions/l/clusters").is_none());
    }
}
