//! What the fake GKE holds: clusters with their node pools and nodes, the operations that
//! change them, and the effects those operations apply when they are due.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use super::instances::PoolInstances;
use super::versions::{VersionCatalog, version_key};
use crate::kubeapi::KubeObjects;
use crate::operations::{FakeOperation, OperationEffect, Operations, finish_due};

/// (project, location, cluster name).
pub type ClusterKey = (String, String, String);

pub struct FakePool {
    pub(super) name: String,
    pub(super) status: String,
    pub(super) status_message: String,
    pub(super) version: String,
    pub(super) node_count: u64,
    pub(super) machine_type: String,
    pub(super) disk_size_gb: u64,
    pub(super) node_labels: Map<String, Value>,
    pub(super) autoscaling: Option<Value>,
    pub(super) max_pods: String,
    /// The zones its nodes run in; `node_count` nodes in each.
    pub(super) locations: Vec<String>,
    pub(super) disk_type: String,
    pub(super) spot: bool,
    /// GKE's `AcceleratorConfig` list, as last set.
    pub(super) accelerators: Vec<Value>,
    /// GKE's `NodeTaint` list, as last set.
    pub(super) taints: Vec<Value>,
    /// The Compute Engine instances its nodes run on.
    pub(super) instances: PoolInstances,
}

impl FakePool {
    /// Makes its instances match its zones and size; `replace` replaces every one of them.
    pub(super) fn refresh_instances(&mut self, cluster: &str, replace: bool) {
        self.instances.sync(cluster, &self.name, &self.locations, self.node_count, replace);
    }
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
    /// Its boot disk's size.
    pub disk_size_gb: u64,
    /// The pool's `AcceleratorConfig` list (`acceleratorType`, `acceleratorCount`).
    pub accelerators: Vec<Value>,
    /// The Compute Engine instance it runs on: a new one when GKE replaces the node.
    pub instance: String,
    /// When its instance was made.
    pub created: String,
    /// Its instance's incarnation: a new one each time its group makes it again.
    pub incarnation: u64,
    /// Its instance's system hangs: nothing runs on it.
    pub hung: bool,
}

pub struct FakeCluster {
    pub(super) description: String,
    pub(super) labels: Map<String, Value>,
    pub(super) status: String,
    pub(super) status_message: String,
    pub(super) master_version: String,
    pub(super) node_version: String,
    pub(super) initial_version: String,
    pub(super) channel: String,
    pub(super) network: String,
    /// The subnetwork its nodes use (empty: the network's default).
    pub(super) subnetwork: String,
    /// `masterAuthorizedNetworksConfig` as last set.
    pub(super) authorized_networks: Value,
    pub(super) pools: Vec<FakePool>,
    pub(super) create_time: String,
    /// GKE's id of the cluster: a new one for a cluster made again under the same name.
    pub id: String,
    /// `127.0.0.1:PORT` of its API server.
    pub endpoint: String,
    pub(super) ca_pem: String,
    pub(super) server: Option<JoinHandle<()>>,
    /// What exists inside the cluster.
    pub kube: KubeObjects,
    /// The operations started on it, oldest first: their names, and whether the API or the
    /// console (a test's hook) started each.
    pub(super) operation_log: Vec<(String, Initiator)>,
}

/// Who started an operation: for the inspection only, GKE does not tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initiator {
    /// A request to the API.
    Api,
    /// Someone in the Google Cloud console (a test's hook).
    Console,
}

impl Initiator {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Initiator::Api => "api",
            Initiator::Console => "console",
        }
    }
}

impl FakeCluster {
    /// Makes instance `name` in `zone` of one of its pools again (a Compute Engine delete of a
    /// group's instance); false when it has no such instance.
    pub fn recreate_instance(&mut self, zone: &str, name: &str) -> bool {
        self.pools.iter_mut().any(|pool| pool.instances.recreate(zone, name))
    }

    /// Makes the system of instance `name` hang; false when it has no such instance.
    pub fn hang_instance(&mut self, name: &str) -> bool {
        self.pools.iter_mut().any(|pool| pool.instances.hang(name))
    }

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
                let instance = pool.instances.instances.get(index);
                nodes.push(FakeNode {
                    pool: pool.name.clone(),
                    index: index as u64,
                    zone: zone.clone(),
                    version: pool.version.clone(),
                    machine_type: pool.machine_type.clone(),
                    spot: pool.spot,
                    labels: pool.node_labels.clone(),
                    taints: taints.clone(),
                    disk_size_gb: pool.disk_size_gb,
                    accelerators: pool.accelerators.clone(),
                    instance: instance.map(|i| i.name.clone()).unwrap_or_default(),
                    created: instance.map_or_else(|| self.create_time.clone(), |i| i.created.clone()),
                    incarnation: instance.map_or(0, |i| i.incarnation),
                    hung: instance.is_some_and(|i| i.hung),
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
pub(super) fn region_of(location: &str) -> &str {
    match location.rsplit_once('-') {
        Some((region, last)) if last.len() == 1 => region,
        _ => location,
    }
}

/// A change `nodePools.update` makes to one pool's configuration.
pub(super) enum PoolPatch {
    Labels(Map<String, Value>),
    Taints(Vec<Value>),
    MachineType(String),
    DiskSizeGb(u64),
    DiskType(String),
    Accelerators(Vec<Value>),
    Locations(Vec<String>),
}

impl PoolPatch {
    /// Whether GKE applies it by replacing every node (a surge upgrade), not in place.
    fn replaces_nodes(&self) -> bool {
        matches!(
            self,
            PoolPatch::MachineType(_) | PoolPatch::DiskSizeGb(_) | PoolPatch::DiskType(_) | PoolPatch::Accelerators(_)
        )
    }

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

pub(super) enum Effect {
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

impl OperationEffect for Effect {
    fn failure(&self) -> Option<&str> {
        match self {
            Effect::Fail { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// An operation on a cluster.
pub(super) type GkeOperation = FakeOperation<ClusterKey, Effect>;

/// Every GKE object.
#[derive(Default)]
pub struct GkeState {
    pub clusters: BTreeMap<ClusterKey, FakeCluster>,
    pub(super) operations: Operations<ClusterKey, Effect>,
    /// Version catalogs by location; others get the configured default.
    pub catalogs: BTreeMap<String, VersionCatalog>,
    /// How many operations run at once on one cluster, at most.
    pub operation_limit: usize,
    /// By cluster name: how many changes were refused because operations ran on the cluster.
    pub operations_refused: BTreeMap<String, u64>,
    /// By cluster name: the most operations that ever ran on the cluster at once.
    pub most_operations_running: BTreeMap<String, usize>,
}

impl GkeState {
    /// Finishes every operation that is due, applying its effect.
    pub fn advance(&mut self, now: Instant) {
        for (key, effect) in finish_due(&mut self.operations, now) {
            self.apply(&key, effect);
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
        // The cluster reconciles until its last operation is done.
        let others_running = !self.running(key).is_empty();
        let Some(cluster) = self.clusters.get_mut(key) else { return };
        if !others_running {
            cluster.status = "RUNNING".into();
            cluster.status_message.clear();
        }
        let pool = |cluster: &mut FakeCluster, name: &str| -> Option<usize> {
            cluster.pools.iter().position(|p| p.name == name)
        };
        match effect {
            Effect::CreateCluster => {
                for p in &mut cluster.pools {
                    p.status = "RUNNING".into();
                    p.refresh_instances(&key.2, true);
                }
            }
            Effect::MasterVersion(version) => cluster.master_version = version,
            Effect::Channel(channel) => cluster.channel = channel,
            Effect::AuthorizedNetworks(config) => cluster.authorized_networks = config,
            Effect::CreatePool(name) | Effect::PoolVersion(name, _) | Effect::PoolConfig(name, _)
                if pool(cluster, &name).is_none() => {}
            Effect::CreatePool(name) => {
                let index = pool(cluster, &name).expect("checked above");
                cluster.pools[index].status = "RUNNING".into();
                cluster.pools[index].refresh_instances(&key.2, true);
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
                cluster.pools[index].refresh_instances(&key.2, true);
                cluster.node_version = lowest_version(cluster);
            }
            Effect::PoolConfig(name, patch) => {
                let index = pool(cluster, &name).expect("checked above");
                let replace = patch.replaces_nodes();
                patch.apply(&mut cluster.pools[index]);
                cluster.pools[index].status = "RUNNING".into();
                cluster.pools[index].refresh_instances(&key.2, replace);
            }
            Effect::PoolSize(name, count) => {
                if let Some(index) = pool(cluster, &name) {
                    cluster.pools[index].node_count = count;
                    cluster.pools[index].status = "RUNNING".into();
                    cluster.pools[index].refresh_instances(&key.2, false);
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

    /// A cluster of `project` whose nodes use `subnetwork` of `network`, if any (Compute Engine
    /// refuses to delete such a subnetwork).
    pub fn cluster_on_subnetwork(&self, project: &str, network: &str, subnetwork: &str) -> Option<String> {
        self.clusters
            .iter()
            .find(|((p, _, _), c)| p == project && c.network == network && c.subnetwork == subnetwork)
            .map(|((_, _, name), _)| name.clone())
    }

    /// The operations not yet done on the cluster `key`, oldest first, by name.
    pub(super) fn running(&self, key: &ClusterKey) -> Vec<(&String, &GkeOperation)> {
        let mut running: Vec<_> = self.operations.iter().filter(|(_, op)| !op.done && &op.scope == key).collect();
        running.sort_by_key(|(_, op)| op.due);
        running
    }
}

/// The node pool an operation changes; `None` for one on the cluster itself.
pub(super) fn pool_of(operation: &GkeOperation) -> Option<&str> {
    operation.target_link.rsplit_once("/nodePools/").map(|(_, pool)| pool)
}

fn lowest_version(cluster: &FakeCluster) -> String {
    cluster.pools.iter().map(|p| p.version.clone()).min_by_key(|v| version_key(v)).unwrap_or_default()
}
