//! What a test sees of the fake GKE: every cluster with its node pools (their configuration,
//! and the instances their nodes run on with the generation a replacement bumps), the
//! operations started on it in order, and what exists inside it.

use serde_json::{Value, json};

use super::state::{FakeCluster, GkeState};

impl GkeState {
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
                    "nodePools": c.pools.iter().map(|p| {
                        let (nodes, generation) = p.instances.inspect();
                        json!({
                            "name": p.name, "status": p.status, "version": p.version, "nodeCount": p.node_count,
                            "nodeLabels": p.node_labels, "taints": p.taints, "locations": p.locations,
                            "machineType": p.machine_type, "diskSizeGb": p.disk_size_gb, "diskType": p.disk_type,
                            "spot": p.spot, "accelerators": p.accelerators, "autoscaling": p.autoscaling,
                            "nodes": nodes, "nodeGeneration": generation,
                        })
                    }).collect::<Vec<_>>(),
                    "operations": self.operation_history(c),
                    "kubernetes": c.kube.inspect(),
                })
            })
            .collect();
        json!({"clusters": clusters})
    }

    /// The operations started on `cluster`, oldest first.
    fn operation_history(&self, cluster: &FakeCluster) -> Vec<Value> {
        cluster
            .operation_log
            .iter()
            .filter_map(|(name, initiator)| {
                let op = self.operations.get(name)?;
                let pool = op.target_link.split_once("/nodePools/").map(|(_, pool)| pool);
                Some(json!({
                    "name": name, "operationType": op.operation_type, "targetLink": op.target_link,
                    "nodePool": pool, "status": op.status(), "error": op.error, "initiatedBy": initiator.as_str(),
                }))
            })
            .collect()
    }
}
