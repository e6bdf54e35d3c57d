//! The managed fields of a running node pool that GKE holds at other values than its spec (a
//! size changed in the console, labels edited by hand), compared as
//! [`crate::changes::kubernetes::next_pool_step`] compares them, so that what is reported as
//! drift is exactly what a pass would otherwise put back. The nodes' version is not among them:
//! it follows the control plane by the system's own step. Under `drift: report` the pass
//! converges to the spec with the drifted fields as found ([`adopt`]), so it sends nothing that
//! would put them back, and still takes any other step (an upgrade).

use serde_json::{Value, json};

use crate::changes::kubernetes::sorted;
use crate::domain::drift::DriftedField;
use crate::provider::{Autoscaling, Cluster, NodePool, NodePoolSpec};

/// Its path in the cluster: `nodePools[general].nodeCount`.
fn path(pool: &str, field: &str) -> String {
    format!("nodePools[{pool}].{field}")
}

fn bounds(autoscaling: &Option<Autoscaling>) -> Value {
    match autoscaling.as_ref().filter(|a| a.enabled) {
        Some(a) => json!({"minNodeCount": a.min_node_count, "maxNodeCount": a.max_node_count}),
        None => Value::Null,
    }
}

fn taints(list: &[(String, String, String)]) -> Value {
    let list: Vec<Value> = sorted(list)
        .into_iter()
        .map(|(key, value, effect)| json!({"key": key, "value": value, "effect": effect}))
        .collect();
    Value::Array(list)
}

fn accelerators(list: &[(String, i64)]) -> Value {
    let list: Vec<Value> = list.iter().map(|(kind, count)| json!({"type": kind, "count": count})).collect();
    Value::Array(list)
}

/// The fields of pool `spec` (running at the provider as `remote`, in `cluster`) that differ,
/// by their path in the cluster, each with the spec's value and the one found.
pub fn pool_drift(spec: &NodePoolSpec, cluster: &Cluster, remote: &NodePool) -> Vec<DriftedField> {
    let name = spec.name.as_str();
    let mut found = Vec::new();
    let mut compare = |field: &str, applied: Value, have: Value| {
        found.extend(DriftedField::compare(path(name, field), applied, have));
    };
    compare("autoscaling", bounds(&spec.autoscaling), bounds(&remote.autoscaling));
    compare("labels", json!(spec.node_labels), json!(remote.node_labels));
    compare("taints", taints(&spec.taints), taints(&remote.taints));
    let zones = if spec.zones.is_empty() { &cluster.locations } else { &spec.zones };
    if !zones.is_empty() {
        compare("zones", json!(sorted(zones)), json!(sorted(&remote.locations)));
    }
    if !spec.machine_type.is_empty() {
        compare("machineType", json!(spec.machine_type), json!(remote.machine_type));
    }
    if !spec.disk_type.is_empty() {
        compare("diskType", json!(spec.disk_type), json!(remote.disk_type));
    }
    if spec.disk_size_gb > 0 {
        compare("diskGib", json!(spec.disk_size_gb), json!(remote.disk_size_gb));
    }
    let wanted_accelerators: Vec<(String, i64)> = spec.accelerators.iter().cloned().collect();
    compare("accelerators", accelerators(&wanted_accelerators), accelerators(&remote.accelerators));
    // The autoscaler owns the count of a pool that scales by itself.
    if !spec.autoscaling.as_ref().is_some_and(|a| a.enabled) {
        compare("nodeCount", json!(spec.node_count), json!(remote.node_count));
    }
    found
}

/// `spec` with each field named in `drifted` (paths as [`pool_drift`] gives them) as `remote`
/// holds it: what a pass converges to while the drift is reported.
pub fn adopt(spec: &NodePoolSpec, remote: &NodePool, drifted: &[String]) -> NodePoolSpec {
    let mut adopted = spec.clone();
    for field in drifted.iter().filter_map(|path| path.strip_prefix(&format!("nodePools[{}].", spec.name))) {
        match field {
            "autoscaling" => adopted.autoscaling = remote.autoscaling.clone().filter(|a| a.enabled),
            "labels" => adopted.node_labels.clone_from(&remote.node_labels),
            "taints" => adopted.taints.clone_from(&remote.taints),
            "zones" => adopted.zones.clone_from(&remote.locations),
            "machineType" => adopted.machine_type.clone_from(&remote.machine_type),
            "diskType" => adopted.disk_type.clone_from(&remote.disk_type),
            "diskGib" => adopted.disk_size_gb = remote.disk_size_gb,
            "accelerators" => adopted.accelerators = remote.accelerators.first().cloned(),
            "nodeCount" => adopted.node_count = remote.node_count,
            _ => {}
        }
    }
    adopted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::kubernetes::{PoolStep, next_pool_step};

    fn spec() -> NodePoolSpec {
        NodePoolSpec {
            name: "general".into(),
            node_count: 3,
            machine_type: "e2-standard-4".into(),
            node_labels: [("team".to_owned(), "web".to_owned())].into(),
            ..NodePoolSpec::default()
        }
    }

    fn running(spec: &NodePoolSpec) -> NodePool {
        NodePool {
            name: spec.name.clone(),
            status: "RUNNING".into(),
            node_count: spec.node_count,
            machine_type: spec.machine_type.clone(),
            node_labels: spec.node_labels.clone(),
            disk_size_gb: 100,
            disk_type: "pd-balanced".into(),
            ..NodePool::default()
        }
    }

    #[test]
    fn a_pool_as_applied_has_no_drift_and_provider_defaults_are_none() {
        assert!(pool_drift(&spec(), &Cluster::default(), &running(&spec())).is_empty());
    }

    #[test]
    fn a_resize_at_the_provider_is_drift_of_the_node_count() {
        let mut remote = running(&spec());
        remote.node_count = 5;
        let drift = pool_drift(&spec(), &Cluster::default(), &remote);
        assert_eq!(
            drift,
            vec![DriftedField { field: "nodePools[general].nodeCount".into(), applied: json!(3), found: json!(5) }]
        );
    }

    #[test]
    fn the_count_of_a_pool_that_scales_by_itself_is_not_drift() {
        let mut scaling = spec();
        scaling.autoscaling = Some(Autoscaling { enabled: true, min_node_count: 1, max_node_count: 9 });
        let mut remote = running(&scaling);
        remote.autoscaling = scaling.autoscaling.clone();
        remote.node_count = 7;
        assert!(pool_drift(&scaling, &Cluster::default(), &remote).is_empty());
    }

    #[test]
    fn adopting_the_drift_leaves_no_step_that_would_put_it_back_but_keeps_the_others() {
        let mut remote = running(&spec());
        remote.node_count = 5;
        remote.node_labels.insert("by-hand".into(), "yes".into());
        let drifted: Vec<String> =
            pool_drift(&spec(), &Cluster::default(), &remote).into_iter().map(|d| d.field).collect();
        assert_eq!(drifted, ["nodePools[general].labels", "nodePools[general].nodeCount"]);
        let cluster = Cluster { master_version: "1.33.2".into(), ..Cluster::default() };
        remote.version = "1.33.2".into();
        assert_eq!(next_pool_step(&adopt(&spec(), &remote, &drifted), &cluster, &remote), None);
        remote.version = "1.32.1".into();
        assert!(matches!(
            next_pool_step(&adopt(&spec(), &remote, &drifted), &cluster, &remote),
            Some(PoolStep::Update(crate::provider::NodePoolChange::Version(_)))
        ));
        assert_eq!(
            next_pool_step(&spec(), &cluster, &remote),
            Some(PoolStep::Update(crate::provider::NodePoolChange::NodeLabels(spec().node_labels)))
        );
    }
}
