//! Every violated field at once, as `details.fields` promises: a request that breaks a rule of
//! the schema (a field's pattern) and rules only the service can check (zones of the cluster's
//! region, `minNodes` above `maxNodes`, node pools by mode) hears of all of them in one answer,
//! for cluster create, node pool create and node pool update; and nothing is written.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, standard};
use crate::harness::violated_fields;

crate::on_both_backends!(
    a_cluster_create_names_the_schemas_violations_with_the_services,
    node_pool_create_and_update_name_the_schemas_violations_with_the_services,
);

const CREATE: &str = "/api/compute/kubernetesClusters/create";

/// The answer to a request that must be refused as `INVALID_INPUT`: its sorted fields and details.
async fn invalid(env: &Env, path: &str, body: Value) -> (Vec<String>, Value) {
    let (status, answer) = env.post_as(&env.acme_admin, path, body.clone()).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{body}: {answer}");
    let details = answer["error"]["details"].clone();
    (violated_fields(&details), details)
}

async fn a_cluster_create_names_the_schemas_violations_with_the_services(backend: Backend) {
    let env = super::start(backend).await;
    // A name the schema refuses, a pool's zone outside the cluster's region and a pool whose
    // minimum exceeds its maximum: three fields, one answer.
    let mut request = standard("Bad_Name", "v1");
    request["nodePools"][0]["zones"] = json!(["us-central1-a"]);
    request["nodePools"][1]["autoscaling"] = json!({"minNodes": 3, "maxNodes": 2});
    let (fields, details) = invalid(&env, CREATE, request.clone()).await;
    assert_eq!(fields, ["name", "nodePools[0].zones[0]", "nodePools[1].autoscaling"], "{details}");

    // Pools by mode and duplicate names are the service's too.
    let mut autopilot = request.clone();
    autopilot["mode"] = json!("autopilot");
    let (fields, _) = invalid(&env, CREATE, autopilot).await;
    assert_eq!(fields, ["name", "nodePools", "nodePools[0].zones[0]", "nodePools[1].autoscaling"]);
    let mut twins = standard("twins", "v2");
    twins["nodePools"][1]["name"] = json!("general");
    twins["description"] = json!("x".repeat(257));
    let (fields, _) = invalid(&env, CREATE, twins).await;
    assert_eq!(fields, ["description", "nodePools[1].name"]);

    // A location that is no location of the pool joins them, with the allowed zones and regions.
    let mut elsewhere = request.clone();
    elsewhere["location"] = json!("asia-east1");
    let (fields, details) = invalid(&env, CREATE, elsewhere).await;
    assert_eq!(fields, ["location", "name", "nodePools[1].autoscaling"], "{details}");
    assert_eq!(details["regions"], json!(["europe-west1", "us-central1"]), "{details}");

    // A lookup that finds nothing, on a request whose fields are already wrong: the fields are
    // the answer.
    let mut unknown = request.clone();
    unknown["poolId"] = json!("pool_00000000000000000000000xyz");
    let (fields, _) = invalid(&env, CREATE, unknown).await;
    assert_eq!(fields, ["name", "nodePools[1].autoscaling"]);

    // A bound that broke its own rule is named once, not compared as well.
    let mut out_of_range = standard("Bad_Name", "v3");
    out_of_range["nodePools"][1]["autoscaling"] = json!({"minNodes": 3, "maxNodes": 0});
    let (fields, _) = invalid(&env, CREATE, out_of_range).await;
    assert_eq!(fields, ["name", "nodePools[1].autoscaling.maxNodes"]);

    let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    assert_eq!(listed["clusters"].as_array().map_or(0, Vec::len), 0, "nothing was written: {listed}");
    assert!(env.fake_clusters().is_empty());
}

async fn node_pool_create_and_update_name_the_schemas_violations_with_the_services(backend: Backend) {
    let env = super::start(backend).await;
    let created = env.ok(CREATE, standard("pools", "p1")).await;
    let id = created["id"].as_str().unwrap().to_owned();

    let add = json!({"tenantId": "acme", "clusterId": id, "name": "Bad_Name", "machineType": "e2-medium",
        "nodeCount": 1, "autoscaling": {"minNodes": 3, "maxNodes": 2}, "zones": ["us-central1-a"], "idempotencyKey": "bad"});
    let (fields, details) = invalid(&env, "/api/compute/kubernetesNodePools/create", add).await;
    assert_eq!(fields, ["autoscaling", "name", "zones[0]"], "{details}");

    // The batch pool runs spot nodes, which cannot change in place.
    let batch = created["nodePools"][1]["id"].as_str().unwrap();
    let change = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": batch, "machineType": "Bad Type",
        "autoscaling": {"minNodes": 3, "maxNodes": 2}, "zones": ["us-central1-a"], "spot": false});
    let (fields, details) = invalid(&env, "/api/compute/kubernetesNodePools/update", change).await;
    assert_eq!(fields, ["autoscaling", "machineType", "spot", "zones[0]"], "{details}");

    let cluster = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(cluster["nodePools"].as_array().unwrap().len(), 2, "no pool was added: {cluster}");
    assert_eq!(cluster["version"], 1, "nothing was written: {cluster}");
    assert!(cluster["nodePools"].as_array().unwrap().iter().all(|p| p["version"] == 1), "{cluster}");
}
