//! A substrate's flavors at the provider: the node pool spec of each flavor, and which of a
//! cluster's node pools are the substrate's own (named `bc-<pool>-<flavor>` and labelled with
//! the pool), so that nothing else on an adopted cluster is ever changed or deleted.

use std::collections::BTreeMap;

use super::objects::{FLAVOR_LABEL, SUBSTRATE_LABEL};
use crate::domain::substrate_policy::Flavor;
use crate::provider::{Autoscaling, NodePool, NodePoolSpec};
use crate::store::flavor_node_pool_name;

/// The node pool of `flavor`: its machines, and the pool's and flavor's labels on its nodes.
pub fn node_pool_spec(pool_id: &str, flavor: &Flavor) -> NodePoolSpec {
    let mut node_labels: BTreeMap<String, String> = flavor.labels.clone();
    node_labels.insert(SUBSTRATE_LABEL.to_owned(), pool_id.to_owned());
    node_labels.insert(FLAVOR_LABEL.to_owned(), flavor.name.clone());
    NodePoolSpec {
        name: flavor_node_pool_name(pool_id, &flavor.name),
        node_count: flavor.node_count.or(flavor.autoscaling.map(|bounds| bounds.min)).unwrap_or(0).max(0) as u32,
        machine_type: flavor.machine_type.clone(),
        disk_size_gb: flavor.disk_gib.max(0) as u32,
        node_labels,
        autoscaling: flavor.autoscaling.map(|bounds| Autoscaling {
            enabled: true,
            min_node_count: bounds.min as i32,
            max_node_count: bounds.max as i32,
        }),
        spot: flavor.spot,
        accelerators: flavor.accelerators.as_ref().map(|a| (a.kind.clone(), a.count)),
        taints: flavor.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.clone())).collect(),
        ..NodePoolSpec::default()
    }
}

/// The flavor a node pool of the cluster is, when it is this substrate's own.
pub fn own_flavor(pool_id: &str, remote: &NodePool) -> Option<String> {
    let flavor = remote.node_labels.get(FLAVOR_LABEL)?;
    let ours = remote.node_labels.get(SUBSTRATE_LABEL).is_some_and(|p| p == pool_id)
        && remote.name == flavor_node_pool_name(pool_id, flavor);
    ours.then(|| flavor.clone())
}

/// The nodes a node pool has at the provider (per zone, times its zones).
pub fn provider_nodes(remote: &NodePool) -> i64 {
    i64::from(remote.node_count) * remote.locations.len().max(1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const POOL: &str = "pool_0123456789abcdefghjkmnpqrs";

    #[test]
    fn only_a_pool_named_and_labelled_for_this_substrate_is_its_own() {
        let flavor: Flavor = serde_json::from_value(serde_json::json!({
            "name": "cpu", "machineType": "e2-standard-4", "nodeCount": 2, "diskGiB": 50,
        }))
        .unwrap();
        let spec = node_pool_spec(POOL, &flavor);
        let remote = NodePool { name: spec.name.clone(), node_labels: spec.node_labels.clone(), ..NodePool::default() };
        assert_eq!(own_flavor(POOL, &remote).as_deref(), Some("cpu"));
        // The tenant's pool of the same name, without the label, is not ours.
        let tenants = NodePool { name: spec.name.clone(), ..NodePool::default() };
        assert_eq!(own_flavor(POOL, &tenants), None);
        // Another substrate's pool on the same cluster is not ours.
        assert_eq!(own_flavor("pool_zzzzzzzzzzabcdefghjkmnpqrs", &remote), None);
    }
}
