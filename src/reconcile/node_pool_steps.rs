//! The one change a running node pool needs to match its spec, in the order GKE takes them,
//! shared by the reconcilers that own node pools (clusters' pools and substrates' flavors).

use super::kubernetes_clusters::{sorted, version_older};
use crate::provider::{
    Autoscaling, Cluster, ManagedKubernetes, NodePool, NodePoolChange, NodePoolSpec, ProviderResult,
};

/// One provider call that moves a node pool toward its spec.
#[derive(Clone, Debug, PartialEq)]
pub enum PoolStep {
    /// Turn autoscaling on with these bounds, or off.
    SetAutoscaling(Autoscaling),
    /// One `nodePools.update` change.
    Update(NodePoolChange),
    /// Resize a pool that does not scale by itself.
    SetSize(u32),
}

/// The change `remote` needs, if any, in this order: autoscaling bounds, node labels, taints,
/// zones, machine type, boot disk type and size, accelerators, size (only when it does not
/// scale: the autoscaler owns the count), and last its nodes' version, up to the control
/// plane's. Fields the spec leaves to the provider (no disk size or type, no zones) are not
/// compared; a pool without zones of its own runs in the cluster's.
pub fn next_pool_step(spec: &NodePoolSpec, cluster: &Cluster, remote: &NodePool) -> Option<PoolStep> {
    let wanted = spec.autoscaling.clone().filter(|a| a.enabled);
    let have = remote.autoscaling.clone().filter(|a| a.enabled);
    if wanted != have {
        let off = Autoscaling { enabled: false, min_node_count: 0, max_node_count: 0 };
        return Some(PoolStep::SetAutoscaling(wanted.unwrap_or(off)));
    }
    if let Some(change) = update_due(spec, cluster, remote) {
        return Some(PoolStep::Update(change));
    }
    if wanted.is_none() && remote.node_count != spec.node_count {
        return Some(PoolStep::SetSize(spec.node_count));
    }
    if !remote.version.is_empty() && version_older(&remote.version, &cluster.master_version) {
        return Some(PoolStep::Update(NodePoolChange::Version(cluster.master_version.clone())));
    }
    None
}

fn update_due(spec: &NodePoolSpec, cluster: &Cluster, remote: &NodePool) -> Option<NodePoolChange> {
    if remote.node_labels != spec.node_labels {
        return Some(NodePoolChange::NodeLabels(spec.node_labels.clone()));
    }
    if sorted(&remote.taints) != sorted(&spec.taints) {
        return Some(NodePoolChange::Taints(spec.taints.clone()));
    }
    let zones = if spec.zones.is_empty() { &cluster.locations } else { &spec.zones };
    if !zones.is_empty() && sorted(zones) != sorted(&remote.locations) {
        return Some(NodePoolChange::Locations(zones.clone()));
    }
    if !spec.machine_type.is_empty() && spec.machine_type != remote.machine_type {
        return Some(NodePoolChange::MachineType(spec.machine_type.clone()));
    }
    if !spec.disk_type.is_empty() && spec.disk_type != remote.disk_type {
        return Some(NodePoolChange::DiskType(spec.disk_type.clone()));
    }
    if spec.disk_size_gb > 0 && spec.disk_size_gb != remote.disk_size_gb {
        return Some(NodePoolChange::DiskSizeGb(spec.disk_size_gb));
    }
    let accelerators: Vec<(String, i64)> = spec.accelerators.iter().cloned().collect();
    if accelerators != remote.accelerators {
        return Some(NodePoolChange::Accelerators(accelerators));
    }
    None
}

/// Issues `step` on pool `pool` of cluster `cluster`.
pub async fn take(gke: &dyn ManagedKubernetes, cluster: &str, pool: &str, step: &PoolStep) -> ProviderResult<()> {
    match step {
        PoolStep::SetAutoscaling(bounds) => gke.node_pool_set_autoscaling(cluster, pool, bounds).await.map(drop),
        PoolStep::Update(change) => gke.node_pool_update(cluster, pool, change).await.map(drop),
        PoolStep::SetSize(count) => gke.node_pool_set_size(cluster, pool, *count).await.map(drop),
    }
}
