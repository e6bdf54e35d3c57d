//! Node pools changed in place: every field GKE's `nodePools.update`, `setSize` and
//! `setAutoscaling` change goes out one GKE operation at a time (queued behind each other, never
//! failing on "operation in progress") and lands on the fake GKE's pool and its nodes as kubectl
//! sees them; the fields GKE cannot change in place are refused, saying to make a new pool; the
//! same over gRPC and through `bcctl nodepools update`.

use std::process::Command;
use std::time::Duration;

use better_compute::cli::BearerToken;
use better_compute::proto::compute::kubernetes_node_pools_client::KubernetesNodePoolsClient;
use better_compute::proto::compute::{KubernetesTaint, UpdateKubernetesNodePoolRequest};
use better_compute::store::Backend;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::{Env, standard};
use crate::harness::{grpc_error, violated_fields};

crate::on_both_backends!(
    every_field_gke_changes_in_place_converges_one_operation_at_a_time,
    fields_gke_cannot_change_in_place_are_refused,
    the_same_update_over_grpc_and_through_the_cli,
    a_refused_pool_fails_its_cluster_until_it_is_changed,
);

const UPDATE: &str = "/api/compute/kubernetesNodePools/update";

/// The fake GKE's pool `name` of the (only) cluster.
fn fake_pool(env: &Env, name: &str) -> Value {
    let clusters = env.fake_clusters();
    clusters[0]["nodePools"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned().unwrap()
}

/// The nodes kubectl lists with an admin kubeconfig issued for the cluster.
async fn nodes(env: &Env, cluster: &str) -> Vec<Value> {
    let issued = env
        .ok(
            "/api/compute/kubernetesClusters/credentials",
            json!({"tenantId": "acme", "clusterId": cluster, "role": "admin"}),
        )
        .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, issued["kubeconfig"].as_str().unwrap()).unwrap();
    let output = tokio::task::block_in_place(|| {
        Command::new("kubectl").arg("--kubeconfig").arg(&path).args(["get", "nodes", "-o", "json"]).output().unwrap()
    });
    assert!(output.status.success(), "kubectl: {}", String::from_utf8_lossy(&output.stderr));
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    list["items"].as_array().unwrap().clone()
}

fn of_pool<'a>(nodes: &'a [Value], pool: &str) -> Vec<&'a Value> {
    nodes.iter().filter(|n| n["metadata"]["labels"]["cloud.google.com/gke-nodepool"] == pool).collect()
}

/// The cluster's events of `kind`.
async fn events_of(env: &Env, cluster: &str, kind: &str) -> Vec<Value> {
    let listed = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["subject"] == cluster && e["type"] == kind)
        .cloned()
        .collect()
}

async fn every_field_gke_changes_in_place_converges_one_operation_at_a_time(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("inplace", "i1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let general = created["nodePools"][0]["id"].as_str().unwrap().to_owned();
    let pool_ref = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": general});

    // One request naming every field GKE changes in place, and a second one right behind it
    // while the first is still going out: both queue in the pool's spec; GKE takes one
    // operation at a time on a pool (a second is refused as "in progress"), and the reconciler
    // sends them one after another.
    let mut change = pool_ref.clone();
    change["nodeCount"] = json!(1);
    change["machineType"] = json!("g2-standard-8");
    change["diskGiB"] = json!(200);
    change["diskType"] = json!("pd-ssd");
    change["accelerators"] = json!({"type": "nvidia-l4", "count": 1});
    change["zones"] = json!(["europe-west1-b", "europe-west1-c"]);
    change["labels"] = json!({"tier": "gpu"});
    change["taints"] = json!([{"key": "gpu", "value": "true", "effect": "NoSchedule"}]);
    let updated = env.ok(UPDATE, change).await;
    assert_eq!((updated["state"].as_str(), updated["version"].as_i64()), (Some("updating"), Some(2)));
    assert_eq!(updated["machineType"], "g2-standard-8", "the answer shows what was asked for");
    let cluster = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(cluster["state"], "updating");
    let mut more = pool_ref.clone();
    more["diskGiB"] = json!(250);
    more["labels"] = json!({"tier": "gpu", "team": "ml"});
    let queued = env.ok(UPDATE, more).await;
    assert_eq!((queued["version"].as_i64(), queued["machineType"].as_str()), (Some(3), Some("g2-standard-8")));

    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(60)).await;
    let pool = ready["nodePools"].as_array().unwrap().iter().find(|p| p["id"] == general.as_str()).unwrap().clone();
    assert_eq!(pool["state"], "ready", "{pool}");
    assert_eq!((pool["diskGiB"].as_i64(), pool["currentNodeCount"].as_i64()), (Some(250), Some(1)));
    let fake = fake_pool(&env, "general");
    assert_eq!(fake["machineType"], "g2-standard-8");
    assert_eq!((fake["diskSizeGb"].as_u64(), fake["diskType"].as_str()), (Some(250), Some("pd-ssd")));
    assert_eq!(fake["accelerators"], json!([{"acceleratorType": "nvidia-l4", "acceleratorCount": "1"}]));
    assert_eq!(fake["locations"], json!(["europe-west1-b", "europe-west1-c"]));
    assert_eq!(fake["nodeLabels"], json!({"tier": "gpu", "team": "ml"}));
    assert_eq!(fake["taints"], json!([{"key": "gpu", "value": "true", "effect": "NO_SCHEDULE"}]));
    assert_eq!(fake["nodeCount"], 1, "one node per zone");
    // Every change went through without the cluster or the pool failing on a busy cluster.
    assert!(events_of(&env, &id, "kubernetes.cluster.error").await.is_empty());
    assert!(events_of(&env, &id, "kubernetes.nodepool.error").await.is_empty());

    // The nodes as Kubernetes shows them: one per zone, of the new machine type, labelled and
    // tainted as asked.
    let listed = nodes(&env, &id).await;
    let general_nodes = of_pool(&listed, "general");
    assert_eq!(general_nodes.len(), 2, "{general_nodes:?}");
    let mut zones: Vec<&str> = general_nodes
        .iter()
        .map(|n| n["metadata"]["labels"]["topology.kubernetes.io/zone"].as_str().unwrap())
        .collect();
    zones.sort();
    assert_eq!(zones, ["europe-west1-b", "europe-west1-c"]);
    for node in &general_nodes {
        assert_eq!(node["metadata"]["labels"]["node.kubernetes.io/instance-type"], "g2-standard-8");
        assert_eq!(node["metadata"]["labels"]["tier"], "gpu");
        assert_eq!(node["spec"]["taints"], json!([{"key": "gpu", "value": "true", "effect": "NoSchedule"}]));
    }
    let batch_nodes = of_pool(&listed, "batch");
    assert_eq!(batch_nodes[0]["metadata"]["labels"]["cloud.google.com/gke-spot"], "true");
    assert_eq!(batch_nodes[0]["spec"]["taints"][0]["key"], "dedicated");

    // Undone the same way: accelerators removed, taints and labels cleared, back to the
    // cluster's default zones, and resized.
    let mut undo = pool_ref.clone();
    undo["removeAccelerators"] = json!(true);
    undo["setTaints"] = json!(true);
    undo["setLabels"] = json!(true);
    undo["setZones"] = json!(true);
    undo["nodeCount"] = json!(3);
    let undone = env.ok(UPDATE, undo).await;
    let count = |field: &str| undone[field].as_array().map_or(0, Vec::len);
    assert_eq!((count("zones"), count("taints"), undone["accelerators"].is_null()), (0, 0, true), "{undone}");
    env.wait_cluster_state(&id, "ready", Duration::from_secs(60)).await;
    let fake = fake_pool(&env, "general");
    assert_eq!(fake["accelerators"], json!([]));
    assert_eq!(fake["taints"], json!([]));
    assert_eq!(fake["nodeLabels"], json!({}));
    let default_zones = env.fake_clusters()[0]["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "batch")
        .map(|p| p["locations"].clone())
        .unwrap();
    assert_eq!(fake["locations"], default_zones, "a pool without zones of its own runs in the cluster's");
    assert_eq!(fake["nodeCount"], 3);
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref).await;
    assert_eq!((pool["state"].as_str(), pool["currentNodeCount"].as_i64()), (Some("ready"), Some(3)));
    assert!(events_of(&env, &id, "kubernetes.cluster.error").await.is_empty());
}

async fn fields_gke_cannot_change_in_place_are_refused(backend: Backend) {
    let env = super::start(backend).await;
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("refuse", "r1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let batch = created["nodePools"][1]["id"].as_str().unwrap().to_owned();
    let pool_ref = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": batch});
    let refused = |body: Value| {
        let env = &env;
        async move {
            let (status, answer) = env.post_as(&env.acme_admin, UPDATE, body.clone()).await;
            assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{body}: {answer}");
            answer["error"].clone()
        }
    };
    let with = |change: Value| {
        let mut body = pool_ref.clone();
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };

    // Spot VMs and the name cannot change in place: refused naming the field, saying to make a
    // new pool; nothing is recorded.
    let error = refused(with(json!({"spot": false, "nodeCount": 2}))).await;
    assert_eq!(violated_fields(&error["details"]), ["spot"]);
    let message = error["details"]["fields"][0]["description"].as_str().unwrap();
    assert!(message.contains("create a new node pool"), "{message}");
    let error = refused(with(json!({"name": "renamed"}))).await;
    assert_eq!(violated_fields(&error["details"]), ["name"]);
    assert!(error["message"].as_str().unwrap().contains("create a new node pool"), "{error}");
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref.clone()).await;
    assert_eq!((pool["version"].as_i64(), pool["nodeCount"].as_i64()), (Some(1), Some(1)), "a refusal records nothing");
    // The value the pool already has is no change, and is accepted.
    let same = env.ok(UPDATE, with(json!({"spot": true, "name": "batch", "nodeCount": 2}))).await;
    assert_eq!((same["version"].as_i64(), same["nodeCount"].as_i64()), (Some(2), Some(2)));

    // The other rules of an update.
    let error = refused(pool_ref.clone()).await;
    assert!(error["details"]["accepted"].as_array().unwrap().iter().any(|f| f == "taints"), "{error}");
    let error = refused(with(json!({"zones": ["us-central1-a", "europe-west1-c"]}))).await;
    assert_eq!(violated_fields(&error["details"]), ["zones[0]"], "a zone of another region");
    let error = refused(with(json!({"autoscaling": {"minNodes": 1, "maxNodes": 2}, "disableAutoscaling": true,
        "accelerators": {"type": "nvidia-l4", "count": 1}, "removeAccelerators": true})))
    .await;
    assert_eq!(violated_fields(&error["details"]), ["accelerators", "autoscaling"]);
    let error = refused(with(json!({"autoscaling": {"minNodes": 3, "maxNodes": 2}}))).await;
    assert_eq!(violated_fields(&error["details"]), ["autoscaling"]);
    let error = refused(with(json!({"machineType": "Bad Type", "diskGiB": 9, "diskType": "SSD",
        "taints": [{"key": "k", "effect": "Sometimes"}]})))
    .await;
    assert_eq!(violated_fields(&error["details"]), ["diskGiB", "diskType", "machineType", "taints[0].effect"]);
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref).await;
    assert_eq!(pool["version"], 2, "no refusal recorded anything");
}

async fn the_same_update_over_grpc_and_through_the_cli(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("grpcpools", "g1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let general = created["nodePools"][0]["id"].as_str().unwrap().to_owned();
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut pools = KubernetesNodePoolsClient::new(InterceptedService::new(
        channel,
        BearerToken::new(Some(&env.acme_admin)).unwrap(),
    ));
    let request = |change: UpdateKubernetesNodePoolRequest| UpdateKubernetesNodePoolRequest {
        tenant_id: "acme".into(),
        cluster_id: id.clone(),
        node_pool_id: general.clone(),
        ..change
    };
    let spot = pools.update(request(UpdateKubernetesNodePoolRequest { spot: Some(true), ..Default::default() })).await;
    let status = spot.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    let error = grpc_error(&status);
    assert_eq!(error.code.as_str(), "INVALID_INPUT");
    assert!(error.message.contains("spot") && error.message.contains("new node pool"), "{}", error.message);

    let updated = pools
        .update(request(UpdateKubernetesNodePoolRequest {
            disk_type: Some("pd-ssd".into()),
            taints: vec![KubernetesTaint {
                key: "team".into(),
                value: "web".into(),
                effect: "PreferNoSchedule".into(),
            }],
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((updated.state.as_str(), updated.disk_type.as_str(), updated.taints.len()), ("updating", "pd-ssd", 1));
    env.wait_cluster_state(&id, "ready", Duration::from_secs(30)).await;
    let fake = fake_pool(&env, "general");
    assert_eq!(fake["diskType"], "pd-ssd");
    assert_eq!(fake["taints"], json!([{"key": "team", "value": "web", "effect": "PREFER_NO_SCHEDULE"}]));

    // `bcctl nodepools update`, followed with --wait until the cluster is ready again.
    let output = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_bcctl"))
            .env("BC_ENDPOINT", &env.server.endpoint)
            .env("BC_TOKEN", &env.acme_admin)
            .args(["-o", "json", "nodepools", "update", "--tenant", "acme", "--cluster", &id, &general])
            .args(["--machine-type", "e2-highmem-4", "--zone", "europe-west1-c", "--label", "tier=cache"])
            .args(["--taint", "cache=true:NoExecute", "--accelerator", "nvidia-l4:2", "--wait"])
            .output()
            .unwrap()
    });
    assert!(output.status.success(), "bcctl: {}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["machineType"], "e2-highmem-4", "{answer}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("ready"), "--wait shows progress");
    let cluster = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(cluster["state"], "ready", "--wait returned once the cluster was ready again");
    let fake = fake_pool(&env, "general");
    assert_eq!(fake["machineType"], "e2-highmem-4");
    assert_eq!(fake["locations"], json!(["europe-west1-c"]));
    assert_eq!(fake["nodeLabels"], json!({"tier": "cache"}));
    assert_eq!(fake["taints"], json!([{"key": "cache", "value": "true", "effect": "NO_EXECUTE"}]));
    assert_eq!(fake["accelerators"][0]["acceleratorCount"], "2");
}

async fn a_refused_pool_fails_its_cluster_until_it_is_changed(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("mend", "m1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    // The provider refuses the new pool's machine type: the pool and the cluster are `error`,
    // the pool named in the cluster's message...
    let refusal = "machine type a2-ultragpu-8g is not available in europe-west1-b";
    let failure = fakecloud::Failure::Refuse { status: 400, message: refusal.into() };
    env.cloud.fail_next("nodePool", "create", "gpu", failure);
    let gpu = env
        .ok(
            "/api/compute/kubernetesNodePools/create",
            json!({"tenantId": "acme", "clusterId": id, "name": "gpu", "machineType": "a2-ultragpu-8g", "nodeCount": 1,
                   "zones": ["europe-west1-b"], "idempotencyKey": "gpu"}),
        )
        .await;
    let (failed, _) = env.wait_cluster_state(&id, "error", Duration::from_secs(20)).await;
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains("\"gpu\"") && message.contains(refusal), "{failed}");
    let pool_ref = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": gpu["id"]});
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref.clone()).await;
    assert_eq!((pool["state"].as_str(), pool["message"].as_str()), (Some("error"), Some(refusal)));
    // ...until the pool is changed: another machine type and zone, and both are ready again.
    let mut change = pool_ref.clone();
    change["machineType"] = json!("g2-standard-4");
    change["zones"] = json!(["europe-west1-c"]);
    let changed = env.ok(UPDATE, change).await;
    assert_eq!((changed["state"].as_str(), changed["message"].as_str()), (Some("updating"), Some("")));
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(30)).await;
    assert_eq!(ready["message"], "", "{ready}");
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref).await;
    assert_eq!(pool["state"], "ready", "{pool}");
    let fake = fake_pool(&env, "gpu");
    assert_eq!(
        (fake["machineType"].as_str(), fake["locations"].clone()),
        (Some("g2-standard-4"), json!(["europe-west1-c"]))
    );
}
