//! Plans against reality for clusters and node pools: every field an update changes, one at a
//! time, is planned, then made; what the plan said (its effect and the GKE objects it named) must
//! be what the fake GKE then recorded doing (its operations, and whether each pool's nodes were
//! replaced or kept). Deletes likewise.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, standard};
use crate::harness::{Reality, assert_plan_was_reality, passes_recorded, poll};

const CLUSTERS: &str = "/api/compute/kubernetesClusters";
const POOLS: &str = "/api/compute/kubernetesNodePools";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planned_cluster_and_node_pool_change_is_what_gke_then_does() {
    let mut env = super::start(Backend::Postgres).await;
    env.start_worker();
    let mut request = standard("planned", "p1");
    request["version"] = json!("1.31");
    request["releaseChannel"] = json!("stable");
    let created = env.ok(&format!("{CLUSTERS}/create"), request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let name = created["providerName"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(30)).await;
    let pool_id = |index: usize| created["nodePools"][index]["id"].as_str().unwrap().to_owned();
    let (general, batch) = (pool_id(0), pool_id(1));
    let cluster = Planned { env: &env, id: &id, name: &name };

    // Each field of a node pool, alone. `general` runs two nodes in one zone, without
    // autoscaling; `batch` scales by itself.
    let pool = |id: &str, change: Value| {
        let mut body = json!({"tenantId": "acme", "clusterId": cluster.id, "nodePoolId": id});
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        body
    };
    let pool_cases = [
        ("nodeCount", pool(&general, json!({"nodeCount": 3})), "inPlace"),
        ("labels", pool(&general, json!({"labels": {"tier": "web"}})), "inPlace"),
        (
            "taints",
            pool(&general, json!({"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]})),
            "inPlace",
        ),
        ("zones", pool(&general, json!({"zones": ["europe-west1-b", "europe-west1-c"]})), "inPlace"),
        ("autoscaling on", pool(&general, json!({"autoscaling": {"minNodes": 1, "maxNodes": 4}})), "inPlace"),
        ("autoscaling off", pool(&general, json!({"disableAutoscaling": true})), "inPlace"),
        ("machineType", pool(&general, json!({"machineType": "g2-standard-8"})), "rolling"),
        ("diskGiB", pool(&general, json!({"diskGiB": 200})), "rolling"),
        ("diskType", pool(&general, json!({"diskType": "pd-ssd"})), "rolling"),
        ("accelerators", pool(&general, json!({"accelerators": {"type": "nvidia-l4", "count": 1}})), "rolling"),
        ("nodeCount of a pool that scales by itself", pool(&batch, json!({"nodeCount": 2})), "none"),
    ];
    for (what, body, expected) in pool_cases {
        let plan = cluster.planned_then_made(what, POOLS, body).await;
        assert_eq!(plan["effect"], expected, "{what}: {plan}");
    }

    // Each field of the cluster, alone: a new version upgrades the control plane, then every
    // pool's nodes.
    let change = |change: Value| {
        let mut body = json!({"tenantId": "acme", "clusterId": cluster.id});
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        body
    };
    let cluster_cases = [
        ("description", change(json!({"description": "planned first"})), "none"),
        ("authorizedNetworks", change(json!({"authorizedNetworks": ["203.0.113.0/24"]})), "inPlace"),
        ("releaseChannel", change(json!({"releaseChannel": "regular"})), "inPlace"),
        ("version", change(json!({"version": "1.32"})), "rolling"),
    ];
    for (what, body, expected) in cluster_cases {
        let plan = cluster.planned_then_made(what, CLUSTERS, body).await;
        assert_eq!(plan["effect"], expected, "{what}: {plan}");
    }

    // Deletes: a pool, then the cluster with the pool left.
    let plan = cluster.planned_then_made("a node pool's delete", POOLS, pool(&batch, json!({}))).await;
    assert_eq!(plan["effect"], "delete", "{plan}");
    let plan = cluster.planned_then_made("the cluster's delete", CLUSTERS, change(json!({}))).await;
    assert_eq!(plan["effect"], "delete", "{plan}");
}

/// The cluster the changes are made to.
struct Planned<'a> {
    env: &'a Env,
    id: &'a str,
    name: &'a str,
}

impl Planned<'_> {
    /// The fake GKE's cluster, `None` once it is gone.
    fn at_gke(&self) -> Option<Value> {
        self.env.fake_clusters().into_iter().find(|c| c["name"] == self.name)
    }

    /// Plans `body` (an update, or with nothing to change a delete) at `path`, makes it, waits
    /// until the reconciler is done with it, and checks the plan against what GKE did; returns
    /// the plan.
    async fn planned_then_made(&self, what: &str, path: &str, body: Value) -> Value {
        let delete =
            body.as_object().unwrap().keys().all(|k| ["tenantId", "clusterId", "nodePoolId"].contains(&k.as_str()));
        let call = if delete { "delete" } else { "update" };
        let before = self.at_gke().expect("the cluster at GKE");
        let plan = self.env.ok(&format!("{path}/plan"), json!({ call: body.clone() })).await;
        self.env.ok(&format!("{path}/{call}"), body.clone()).await;
        if delete && path.ends_with("Clusters") {
            poll(Duration::from_secs(60), "the cluster gone at GKE", || async {
                match self.at_gke() {
                    None => Ok(()),
                    Some(cluster) => Err(cluster["status"].to_string()),
                }
            })
            .await;
        } else {
            self.env.wait_cluster_state(self.id, "ready", Duration::from_secs(90)).await;
            // A change GKE is not asked for leaves the cluster ready: a pass must still have
            // looked at it before GKE's record is read.
            passes_recorded(&self.env.db.url, self.id, 1).await;
        }
        let after = self.at_gke();
        assert_plan_was_reality(what, &plan, &Reality::gke(self.name, &before, after.as_ref()));
        plan
    }
}
