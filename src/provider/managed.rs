//! The managed-Kubernetes capability: clusters, node pools, their operations and the versions
//! a location offers. GKE implements it; the shapes follow GKE's v1 resources, which is what a
//! reconciler of managed clusters needs to see.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::{ErrorKind, ProviderError, ProviderResult};

/// What to create: a cluster and its first node pools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterSpec {
    /// The provider-side name (deterministic, so a crashed pass finds it again).
    pub name: String,
    /// A human description.
    pub description: String,
    /// Labels on the cluster (GKE `resourceLabels`).
    pub labels: BTreeMap<String, String>,
    /// `RAPID`, `REGULAR`, `STABLE` or `EXTENDED`; empty for no channel.
    pub release_channel: String,
    /// The version to start at; empty for the channel's default.
    pub version: String,
    /// The VPC network, empty for the default one.
    pub network: String,
    /// The node pools to create with the cluster.
    pub node_pools: Vec<NodePoolSpec>,
    /// An Autopilot cluster: the provider runs its nodes (no node pools are sent).
    pub autopilot: bool,
    /// IPv4 CIDRs that may reach the control plane; empty for any address.
    pub authorized_networks: Vec<String>,
    /// Nodes without public addresses.
    pub private_nodes: bool,
    /// The subnetwork, empty for the network's default.
    pub subnetwork: String,
}

/// What to create: one node pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePoolSpec {
    /// The pool's name inside its cluster.
    pub name: String,
    /// Nodes per zone at creation.
    pub node_count: u32,
    /// The machine type (`e2-standard-4`).
    pub machine_type: String,
    /// Boot disk size.
    pub disk_size_gb: u32,
    /// Kubernetes labels on the nodes.
    pub node_labels: BTreeMap<String, String>,
    /// Autoscaling bounds, if it scales.
    pub autoscaling: Option<Autoscaling>,
    /// Pods per node, if not the default.
    pub max_pods_per_node: Option<i64>,
    /// The zones the nodes run in; empty for the cluster's.
    pub zones: Vec<String>,
    /// Boot disk type; empty for the default.
    pub disk_type: String,
    /// Spot VMs.
    pub spot: bool,
    /// Accelerator type and count per node.
    pub accelerators: Option<(String, i64)>,
    /// Taints: key, value, effect (`NoSchedule`, ...).
    pub taints: Vec<(String, String, String)>,
}

/// Autoscaling bounds of a node pool.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Autoscaling {
    /// Whether the pool scales.
    #[serde(default)]
    pub enabled: bool,
    /// Fewest nodes per zone.
    #[serde(default)]
    pub min_node_count: i32,
    /// Most nodes per zone.
    #[serde(default)]
    pub max_node_count: i32,
}

/// A cluster as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cluster {
    /// The provider-side name.
    pub name: String,
    /// The location (region or zone).
    pub location: String,
    /// `PROVISIONING`, `RUNNING`, `RECONCILING`, `STOPPING`, `ERROR`, `DEGRADED`.
    pub status: String,
    /// Why it is in its status, when the provider says.
    pub status_message: String,
    /// The control plane's version.
    pub master_version: String,
    /// The nodes' version.
    pub node_version: String,
    /// Where the Kubernetes API listens: a host, or host:port.
    pub endpoint: String,
    /// The PEM of the CA that signed the API's certificate.
    pub ca_certificate_pem: String,
    /// Labels on the cluster.
    pub labels: BTreeMap<String, String>,
    /// The release channel, empty for none.
    pub release_channel: String,
    /// The CIDRs that may reach the control plane; empty for any address.
    pub authorized_networks: Vec<String>,
    /// The zones its nodes run in unless a node pool names its own.
    pub locations: Vec<String>,
    /// The node pools.
    pub node_pools: Vec<NodePool>,
}

/// A node pool as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePool {
    /// The pool's name.
    pub name: String,
    /// `PROVISIONING`, `RUNNING`, `RECONCILING`, `STOPPING`, `ERROR`, ...
    pub status: String,
    /// Why, when the provider says.
    pub status_message: String,
    /// The nodes' version.
    pub version: String,
    /// Nodes per zone at creation, or as last resized.
    pub node_count: u32,
    /// The machine type.
    pub machine_type: String,
    /// Kubernetes labels on the nodes.
    pub node_labels: BTreeMap<String, String>,
    /// Autoscaling, when on.
    pub autoscaling: Option<Autoscaling>,
    /// The zones the nodes run in.
    pub locations: Vec<String>,
    /// Boot disk size.
    pub disk_size_gb: u32,
    /// Boot disk type.
    pub disk_type: String,
    /// Spot VMs.
    pub spot: bool,
    /// Accelerator type and count per node (none: empty).
    pub accelerators: Vec<(String, i64)>,
    /// Taints: key, value, effect in Kubernetes' spelling (`NoSchedule`, ...).
    pub taints: Vec<(String, String, String)>,
}

/// One change to a cluster: the provider accepts one per request.
#[derive(Clone, Debug, PartialEq)]
pub enum ClusterChange {
    /// Upgrade the control plane.
    MasterVersion(String),
    /// Move to another release channel.
    ReleaseChannel(String),
    /// Replace the CIDRs that may reach the control plane (empty: any address).
    AuthorizedNetworks(Vec<String>),
}

/// One change to a node pool: the provider takes one per request (GKE's `nodePools.update`).
#[derive(Clone, Debug, PartialEq)]
pub enum NodePoolChange {
    /// Upgrade the nodes (never past the control plane).
    Version(String),
    /// Replace the nodes' Kubernetes labels.
    NodeLabels(BTreeMap<String, String>),
    /// Replace the nodes' taints: key, value, effect (`NoSchedule`, ...).
    Taints(Vec<(String, String, String)>),
    /// Move the nodes to another machine type.
    MachineType(String),
    /// Move the nodes to another boot disk size.
    DiskSizeGb(u32),
    /// Move the nodes to another boot disk type.
    DiskType(String),
    /// Replace the accelerators on every node (none: empty).
    Accelerators(Vec<(String, i64)>),
    /// Replace the zones the nodes run in.
    Locations(Vec<String>),
}

/// A long-running provider operation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Operation {
    /// Its name, to poll it.
    pub name: String,
    /// `CREATE_CLUSTER`, `UPGRADE_MASTER`, ...
    pub operation_type: String,
    /// `PENDING`, `RUNNING`, `DONE`, `ABORTING`.
    pub status: String,
    /// What it acts on.
    pub target_link: String,
    /// The error it ended with, if it ended badly.
    pub error: Option<String>,
}

impl Operation {
    /// Whether it has finished, well or badly.
    pub fn is_done(&self) -> bool {
        self.status == "DONE"
    }

    /// `Ok(true)` when it finished well, `Ok(false)` while it runs, and a permanent error when it
    /// ended `DONE` with an error (GKE reports a failed operation that way, not with a status).
    pub fn outcome(&self) -> ProviderResult<bool> {
        match (&self.error, self.is_done()) {
            (Some(message), true) => Err(ProviderError {
                reason: "OPERATION_FAILED".into(),
                ..ProviderError::new(ErrorKind::Permanent, "gke", format!("operation {} failed: {message}", self.name))
            }),
            (_, done) => Ok(done),
        }
    }
}

/// The versions a location offers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerConfig {
    /// The version a cluster gets when none is asked for.
    pub default_version: String,
    /// Every valid control-plane version, newest first.
    pub valid_master_versions: Vec<String>,
    /// Every valid node version, newest first.
    pub valid_node_versions: Vec<String>,
    /// The release channels.
    pub channels: Vec<ReleaseChannel>,
}

/// One release channel of a location.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReleaseChannel {
    /// `RAPID`, `REGULAR`, `STABLE`, `EXTENDED`.
    pub channel: String,
    /// The channel's default version.
    pub default_version: String,
    /// Versions the channel allows, newest first.
    pub valid_versions: Vec<String>,
}

/// Managed Kubernetes in one project and location.
#[async_trait::async_trait]
pub trait ManagedKubernetes: Send + Sync {
    /// Starts creating a cluster.
    async fn cluster_create(&self, spec: &ClusterSpec) -> ProviderResult<Operation>;
    /// Reads a cluster.
    async fn cluster_get(&self, name: &str) -> ProviderResult<Cluster>;
    /// Lists the clusters of the location.
    async fn cluster_list(&self) -> ProviderResult<Vec<Cluster>>;
    /// Starts one change to a cluster.
    async fn cluster_update(&self, name: &str, change: &ClusterChange) -> ProviderResult<Operation>;
    /// Starts deleting a cluster.
    async fn cluster_delete(&self, name: &str) -> ProviderResult<Operation>;
    /// Starts creating a node pool.
    async fn node_pool_create(&self, cluster: &str, spec: &NodePoolSpec) -> ProviderResult<Operation>;
    /// Reads a node pool.
    async fn node_pool_get(&self, cluster: &str, pool: &str) -> ProviderResult<NodePool>;
    /// Starts one change to a node pool.
    async fn node_pool_update(&self, cluster: &str, pool: &str, change: &NodePoolChange) -> ProviderResult<Operation>;
    /// Starts resizing a node pool.
    async fn node_pool_set_size(&self, cluster: &str, pool: &str, node_count: u32) -> ProviderResult<Operation>;
    /// Starts changing a node pool's autoscaling.
    async fn node_pool_set_autoscaling(
        &self,
        cluster: &str,
        pool: &str,
        autoscaling: &Autoscaling,
    ) -> ProviderResult<Operation>;
    /// Starts deleting a node pool.
    async fn node_pool_delete(&self, cluster: &str, pool: &str) -> ProviderResult<Operation>;
    /// Reads an operation by name.
    async fn operation_get(&self, name: &str) -> ProviderResult<Operation>;
    /// Reads the versions the location offers.
    async fn server_config(&self) -> ProviderResult<ServerConfig>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_done_with_an_error_is_a_permanent_failure() {
        let running = Operation { name: "op-1".into(), status: "RUNNING".into(), ..Default::default() };
        assert!(!running.outcome().unwrap());
        let failed = Operation { status: "DONE".into(), error: Some("quota".into()), ..running.clone() };
        let error = failed.outcome().unwrap_err();
        assert_eq!(error.kind, ErrorKind::Permanent);
        assert!(error.message.contains("quota"));
        let done = Operation { status: "DONE".into(), ..running };
        assert!(done.outcome().unwrap());
    }
}
