//! Clusters and node pools on GKE: the steps their reconciler takes to bring the provider to a
//! spec (the control plane's changes, then each pool's, one GKE operation at a time), and the
//! plans of their updates and deletes, made by running those steps from the state as last
//! applied.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Action, Effect, Plan};
use crate::domain::states::NodePoolState;
use crate::provider::{Autoscaling, Cluster, ClusterChange, NodePool, NodePoolChange, NodePoolSpec};
use crate::store::{ClusterRow, NodePoolRow};

/// The provider of every object here.
const GKE: &str = "gke";

/// The most steps a plan follows for one object: more than a spec can need.
const MAX_STEPS: usize = 32;

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

/// The changes the control plane needs, in the order they are sent (one per pass): the release
/// channel, the version the tenant asked for while it is `pending` (not yet sent), the CIDRs
/// that may reach the API.
pub fn cluster_changes(cluster: &ClusterRow, remote: &Cluster, version_pending: bool) -> Vec<ClusterChange> {
    let mut changes = Vec::new();
    if provider_channel(&cluster.release_channel) != remote.release_channel {
        changes.push(ClusterChange::ReleaseChannel(provider_channel(&cluster.release_channel)));
    }
    if version_pending && !cluster.requested_version.is_empty() {
        changes.push(ClusterChange::MasterVersion(cluster.requested_version.clone()));
    }
    if sorted(&cluster.authorized_networks) != sorted(&remote.authorized_networks) {
        changes.push(ClusterChange::AuthorizedNetworks(cluster.authorized_networks.clone()));
    }
    changes
}

/// The provider's spelling of a release channel.
pub fn provider_channel(channel: &str) -> String {
    channel.to_ascii_uppercase()
}

/// Whether `actual` is the version `asked` names: equal, or a minor (`1.33`) or patch
/// (`1.33.2`) it starts with.
pub fn version_matches(asked: &str, actual: &str) -> bool {
    actual == asked || actual.strip_prefix(asked).is_some_and(|rest| rest.starts_with(['.', '-']))
}

/// Whether GKE version `a` is older than `b`, by their numbers (`1.32.6-gke.1200` is older
/// than `1.33.2-gke.1100` and than `1.32.6-gke.1300`).
pub fn version_older(a: &str, b: &str) -> bool {
    let numbers = |v: &str| -> Vec<u64> {
        v.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect()
    };
    numbers(a) < numbers(b)
}

/// A list compared as a set: the provider need not keep the order it was given.
pub fn sorted<T: Ord + Clone>(list: &[T]) -> Vec<T> {
    let mut list = list.to_vec();
    list.sort();
    list
}

/// What GKE is asked to make of a stored pool.
pub fn pool_spec(pool: &NodePoolRow) -> NodePoolSpec {
    let spec: &crate::store::NodePoolSpecRow = &pool.spec;
    NodePoolSpec {
        name: pool.name.clone(),
        node_count: spec.node_count.max(0) as u32,
        machine_type: spec.machine_type.clone(),
        disk_size_gb: spec.disk_gib.max(0) as u32,
        node_labels: spec.labels.clone(),
        autoscaling: spec.autoscaling.map(|(min, max)| Autoscaling {
            enabled: true,
            min_node_count: min,
            max_node_count: max,
        }),
        max_pods_per_node: None,
        zones: spec.zones.clone(),
        disk_type: spec.disk_type.clone(),
        spot: spec.spot,
        accelerators: spec.accelerators.clone().map(|(kind, count)| (kind, i64::from(count))),
        taints: spec.taints.clone(),
    }
}

/// The cluster as GKE holds it once `cluster` was applied: what a plan runs the steps from.
fn applied_cluster(cluster: &ClusterRow) -> Cluster {
    let master_version = if cluster.kubernetes_version.is_empty() {
        cluster.requested_version.clone()
    } else {
        cluster.kubernetes_version.clone()
    };
    let node_version =
        if cluster.node_version.is_empty() { master_version.clone() } else { cluster.node_version.clone() };
    Cluster {
        name: cluster.provider_name(),
        location: cluster.location.clone(),
        status: "RUNNING".into(),
        master_version,
        node_version: node_version.clone(),
        release_channel: provider_channel(&cluster.release_channel),
        authorized_networks: cluster.authorized_networks.clone(),
        node_pools: cluster
            .node_pools
            .iter()
            .filter(|p| p.state != NodePoolState::Deleting && p.deleted_at.is_none())
            .map(|p| applied_pool(p, &node_version))
            .collect(),
        ..Cluster::default()
    }
}

/// A pool as GKE holds it once `pool` was applied, its nodes at `version`.
fn applied_pool(pool: &NodePoolRow, version: &str) -> NodePool {
    let spec = pool_spec(pool);
    NodePool {
        name: spec.name,
        status: "RUNNING".into(),
        version: version.to_owned(),
        node_count: spec.node_count,
        machine_type: spec.machine_type,
        node_labels: spec.node_labels,
        autoscaling: spec.autoscaling,
        locations: spec.zones,
        disk_size_gb: spec.disk_size_gb,
        disk_type: spec.disk_type,
        spot: spec.spot,
        accelerators: spec.accelerators.into_iter().collect(),
        taints: spec.taints,
        ..NodePool::default()
    }
}

/// What taking `step` does to the pool GKE holds.
fn apply_pool_step(remote: &mut NodePool, step: &PoolStep) {
    match step {
        PoolStep::SetAutoscaling(bounds) => remote.autoscaling = Some(bounds.clone()).filter(|a| a.enabled),
        PoolStep::SetSize(count) => remote.node_count = *count,
        PoolStep::Update(change) => match change {
            NodePoolChange::Version(version) => remote.version.clone_from(version),
            NodePoolChange::NodeLabels(labels) => remote.node_labels.clone_from(labels),
            NodePoolChange::Taints(taints) => remote.taints.clone_from(taints),
            NodePoolChange::MachineType(machine) => remote.machine_type.clone_from(machine),
            NodePoolChange::DiskSizeGb(size) => remote.disk_size_gb = *size,
            NodePoolChange::DiskType(disk) => remote.disk_type.clone_from(disk),
            NodePoolChange::Accelerators(accelerators) => remote.accelerators.clone_from(accelerators),
            NodePoolChange::Locations(zones) => remote.locations.clone_from(zones),
        },
    }
}

/// What taking `step` on pool `pool` does: the field of the resource behind it, its effect at
/// GKE, what GKE does, and what users notice.
fn pool_step_effect(pool: &str, remote: &NodePool, step: &PoolStep) -> (&'static str, Effect, String, Option<String>) {
    let recreated = |what: &str| {
        (
            Effect::Rolling,
            format!("GKE recreates every node of pool {pool} with {what}, surge 1"),
            Some(format!("every node of pool {pool} is drained and recreated, one at a time")),
        )
    };
    let (field, (effect, detail, disruption)) = match step {
        PoolStep::SetAutoscaling(bounds) if bounds.enabled => (
            "autoscaling",
            (
                Effect::InPlace,
                format!(
                    "GKE scales pool {pool} by itself between {} and {} nodes per zone",
                    bounds.min_node_count, bounds.max_node_count
                ),
                None,
            ),
        ),
        PoolStep::SetAutoscaling(_) => {
            ("autoscaling", (Effect::InPlace, format!("GKE stops scaling pool {pool} by itself"), None))
        }
        PoolStep::SetSize(count) => {
            let shrinks = *count < remote.node_count;
            (
                "nodeCount",
                (
                    Effect::InPlace,
                    format!("GKE resizes pool {pool} from {} to {count} nodes per zone", remote.node_count),
                    shrinks.then(|| format!("nodes of pool {pool} are drained and removed")),
                ),
            )
        }
        PoolStep::Update(change) => match change {
            NodePoolChange::NodeLabels(_) => {
                ("labels", (Effect::InPlace, format!("GKE relabels the nodes of pool {pool} where they run"), None))
            }
            NodePoolChange::Taints(_) => {
                ("taints", (Effect::InPlace, format!("GKE retaints the nodes of pool {pool} where they run"), None))
            }
            NodePoolChange::Locations(zones) => (
                "zones",
                (
                    Effect::InPlace,
                    format!("GKE moves pool {pool} to zones {}, adding and removing nodes", zones.join(", ")),
                    Some(format!("nodes of pool {pool} in zones it leaves are drained and removed")),
                ),
            ),
            NodePoolChange::MachineType(machine) => ("machineType", recreated(&format!("machine type {machine}"))),
            NodePoolChange::DiskType(disk) => ("diskType", recreated(&format!("boot disk type {disk}"))),
            NodePoolChange::DiskSizeGb(size) => ("diskGib", recreated(&format!("{size} GiB boot disks"))),
            NodePoolChange::Accelerators(list) if list.is_empty() => ("accelerators", recreated("no accelerators")),
            NodePoolChange::Accelerators(list) => {
                let list: Vec<String> = list.iter().map(|(kind, n)| format!("{n} × {kind}")).collect();
                ("accelerators", recreated(&list.join(", ")))
            }
            NodePoolChange::Version(version) => (
                "version",
                (
                    Effect::Rolling,
                    format!("GKE upgrades every node of pool {pool} to {version}, surge 1"),
                    Some(format!("every node of pool {pool} is drained and recreated, one at a time")),
                ),
            ),
        },
    };
    (field, effect, detail, disruption)
}

/// What the control plane's `change` does.
fn cluster_change_effect(name: &str, change: &ClusterChange) -> (&'static str, Effect, String, Option<String>) {
    match change {
        ClusterChange::MasterVersion(version) => (
            "version",
            Effect::InPlace,
            format!("GKE upgrades the control plane of {name} to {version}"),
            Some("the Kubernetes API of a zonal cluster is unavailable for a few minutes while it upgrades".into()),
        ),
        ClusterChange::ReleaseChannel(channel) => {
            ("releaseChannel", Effect::InPlace, format!("GKE enrolls {name} in the {channel} channel"), None)
        }
        ClusterChange::AuthorizedNetworks(networks) if networks.is_empty() => {
            ("authorizedNetworks", Effect::InPlace, format!("GKE opens the API of {name} to any address"), None)
        }
        ClusterChange::AuthorizedNetworks(networks) => (
            "authorizedNetworks",
            Effect::InPlace,
            format!("GKE lets only {} reach the API of {name}", networks.join(", ")),
            Some("addresses outside the authorized networks lose access to the Kubernetes API".into()),
        ),
    }
}

/// The steps a pass would take for `pool` against `remote` until it matches, each with its
/// field, effect and detail, recorded in `effects`.
fn run_pool_steps(
    plan: &mut Plan,
    effects: &mut BTreeMap<&'static str, Vec<(Effect, String)>>,
    spec: &NodePoolSpec,
    cluster: &Cluster,
    remote: &mut NodePool,
) {
    for _ in 0..MAX_STEPS {
        let Some(step) = next_pool_step(spec, cluster, remote) else { return };
        let (field, effect, detail, disruption) = pool_step_effect(&spec.name, remote, &step);
        effects.entry(field).or_default().push((effect, detail));
        // Named as a delete names it: the cluster's provider name, then the pool's.
        plan.ask(Action::Update, GKE, "node pool", format!("{}/{}", cluster.name, spec.name));
        if let Some(disruption) = disruption {
            plan.disrupt(disruption);
        }
        apply_pool_step(remote, &step);
    }
}

/// Adds each field that differs between `before` and `after` (by JSON name) with the effect
/// and details the steps recorded for it; a field no step is for is recorded only.
fn fields(
    plan: &mut Plan,
    before: serde_json::Value,
    after: serde_json::Value,
    effects: &BTreeMap<&str, Vec<(Effect, String)>>,
) {
    let (serde_json::Value::Object(before), serde_json::Value::Object(after)) = (before, after) else { return };
    for (field, to) in after {
        let from = before.get(&field).cloned().unwrap_or(serde_json::Value::Null);
        if from == to {
            continue;
        }
        let (effect, detail) = match effects.get(field.as_str()) {
            Some(steps) => (
                steps.iter().map(|(effect, _)| *effect).max().unwrap_or(Effect::None),
                steps.iter().map(|(_, detail)| detail.as_str()).collect::<Vec<_>>().join("; "),
            ),
            None => (Effect::None, "recorded only: GKE is not asked".to_owned()),
        };
        plan.change(field, from, to, effect, detail);
    }
}

/// The fields of a cluster an update sets, by JSON name.
fn cluster_fields(cluster: &ClusterRow) -> serde_json::Value {
    json!({
        "description": cluster.description,
        "version": cluster.requested_version,
        "releaseChannel": cluster.release_channel,
        "authorizedNetworks": sorted(&cluster.authorized_networks),
    })
}

/// The fields of a node pool an update sets, by JSON name.
fn pool_fields(pool: &NodePoolRow) -> serde_json::Value {
    let spec = &pool.spec;
    let taints: Vec<_> = sorted(&spec.taints)
        .into_iter()
        .map(|(key, value, effect)| json!({"key": key, "value": value, "effect": effect}))
        .collect();
    json!({
        "nodeCount": spec.node_count,
        "autoscaling": spec.autoscaling.map(|(min, max)| json!({"minNodeCount": min, "maxNodeCount": max})),
        "machineType": spec.machine_type,
        "diskGib": spec.disk_gib,
        "diskType": spec.disk_type,
        "accelerators": spec.accelerators.as_ref().map(|(kind, count)| json!({"type": kind, "count": count})),
        "zones": sorted(&spec.zones),
        "labels": spec.labels,
        "taints": taints,
        "spot": spec.spot,
    })
}

/// The plan of an update that makes cluster `before` into `after`: the control plane's changes,
/// then the pools' upgrades a new version brings.
pub fn cluster_update(before: &ClusterRow, after: &ClusterRow) -> Plan {
    let mut plan = Plan::default();
    let mut effects = BTreeMap::new();
    let mut remote = applied_cluster(before);
    let name = remote.name.clone();
    let mut pending = after.version_pending;
    for _ in 0..MAX_STEPS {
        let Some(change) = cluster_changes(after, &remote, pending).into_iter().next() else { break };
        let (field, effect, detail, disruption) = cluster_change_effect(&name, &change);
        effects.entry(field).or_insert_with(Vec::new).push((effect, detail));
        plan.ask(Action::Update, GKE, "cluster", name.clone());
        if let Some(disruption) = disruption {
            plan.disrupt(disruption);
        }
        match change {
            ClusterChange::MasterVersion(version) => {
                remote.master_version = version;
                pending = false;
            }
            ClusterChange::ReleaseChannel(channel) => remote.release_channel = channel,
            ClusterChange::AuthorizedNetworks(networks) => remote.authorized_networks = networks,
        }
    }
    if after.mode == "standard" {
        let cluster = remote.clone();
        for pool in after.node_pools.iter().filter(|p| p.state != NodePoolState::Deleting && p.deleted_at.is_none()) {
            if let Some(found) = remote.node_pools.iter_mut().find(|p| p.name == pool.name) {
                run_pool_steps(&mut plan, &mut effects, &pool_spec(pool), &cluster, found);
            }
        }
    }
    fields(&mut plan, cluster_fields(before), cluster_fields(after), &effects);
    plan
}

/// The plan of an update that makes pool `before` of `cluster` into `after`.
pub fn node_pool_update(cluster: &ClusterRow, before: &NodePoolRow, after: &NodePoolRow) -> Plan {
    let mut plan = Plan::default();
    let mut effects = BTreeMap::new();
    let remote = applied_cluster(cluster);
    let mut pool = remote
        .node_pools
        .iter()
        .find(|p| p.name == before.name)
        .cloned()
        .unwrap_or_else(|| applied_pool(before, &remote.node_version));
    run_pool_steps(&mut plan, &mut effects, &pool_spec(after), &remote, &mut pool);
    fields(&mut plan, pool_fields(before), pool_fields(after), &effects);
    plan
}

/// The plan of deleting `cluster`: GKE deletes it with every node pool.
pub fn cluster_delete(cluster: &ClusterRow) -> Plan {
    let mut plan = Plan::default();
    let name = cluster.provider_name();
    plan.ask(Action::Delete, GKE, "cluster", name.clone());
    let live: Vec<&NodePoolRow> = cluster.node_pools.iter().filter(|p| p.deleted_at.is_none()).collect();
    for pool in &live {
        plan.ask(Action::Delete, GKE, "node pool", format!("{name}/{}", pool.name));
    }
    plan.change(
        "state",
        json!(cluster.state.as_str()),
        json!("deleted"),
        Effect::Delete,
        format!("GKE deletes cluster {name}"),
    );
    plan.disrupt(format!(
        "the Kubernetes API{} and every workload on the cluster's {} node pool{} stop",
        if cluster.endpoint.is_empty() { String::new() } else { format!(" at {}", cluster.endpoint) },
        live.len(),
        if live.len() == 1 { "" } else { "s" }
    ));
    plan.quota_effects.push("the cluster's billing ends once GKE has deleted it".into());
    plan
}

/// The plan of deleting pool `pool` of `cluster`.
pub fn node_pool_delete(cluster: &ClusterRow, pool: &NodePoolRow) -> Plan {
    let mut plan = Plan::default();
    plan.ask(Action::Delete, GKE, "node pool", format!("{}/{}", cluster.provider_name(), pool.name));
    plan.change(
        "state",
        json!(pool.state.as_str()),
        json!("deleted"),
        Effect::Delete,
        format!("GKE deletes node pool {} and its nodes", pool.name),
    );
    plan.disrupt(format!(
        "every node of pool {} is drained and removed; its pods move to other pools or wait",
        pool.name
    ));
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minor_or_patch_pin_matches_the_full_versions_under_it() {
        assert!(version_matches("1.33", "1.33.2-gke.1100"));
        assert!(version_matches("1.33.2", "1.33.2-gke.1100"));
        assert!(version_matches("1.33.2-gke.1100", "1.33.2-gke.1100"));
        assert!(!version_matches("1.3", "1.33.2-gke.1100"));
        assert!(!version_matches("1.32", "1.33.2-gke.1100"));
    }

    #[test]
    fn versions_order_by_their_numbers() {
        assert!(version_older("1.32.6-gke.1200", "1.33.2-gke.1100"));
        assert!(version_older("1.32.6-gke.300", "1.32.6-gke.1200"));
        assert!(!version_older("1.33.2-gke.1100", "1.33.2-gke.1100"));
        assert!(!version_older("1.33.2-gke.1100", "1.32.6-gke.1200"));
    }
}
