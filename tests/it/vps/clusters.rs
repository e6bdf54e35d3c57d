//! The cluster page's `networkId`: a tenant network on the same account that has been
//! provisioned and has a ready subnet in the cluster's region; the nodes use it and that subnet
//! (the first by name). Another tenant's network or one on another account is `INVALID_INPUT`,
//! one not provisioned yet `INVALID_STATE`; a network a cluster uses is not deleted.

use better_compute::reconcile::vps::provider_name;
use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{DO_POOL, GKE_POOL, network, ready_network};
use crate::harness::violated_fields;

const CREATE: &str = "/api/compute/kubernetesClusters/create";

/// An autopilot cluster request of acme in `location` on `network_id`.
fn cluster(name: &str, location: &str, network_id: &str) -> Value {
    json!({"tenantId": "acme", "poolId": GKE_POOL, "name": name, "mode": "autopilot", "location": location,
           "networkId": network_id, "idempotencyKey": name})
}

async fn a_clusters_nodes_use_the_networks_first_ready_subnet_in_its_region(backend: Backend) {
    let env = super::start(backend).await;
    let subnets = [
        ("b-nodes", "europe-west1", "10.70.0.0/20"),
        ("a-nodes", "europe-west1", "10.71.0.0/20"),
        ("us", "us-central1", "10.72.0.0/20"),
    ];
    let net = ready_network(&env, network(GKE_POOL, "k8s", &subnets)).await;
    let net_id = net["id"].as_str().unwrap();
    let created = env.ok(CREATE, cluster("on-net", "europe-west1-b", net_id)).await;
    assert_eq!(created["networkId"], net["id"]);
    let cluster_id = created["id"].as_str().unwrap();
    env.wait_state("kubernetesClusters", "clusterId", cluster_id, "ready").await;
    let first = net["subnets"].as_array().unwrap().iter().find(|s| s["name"] == "a-nodes").unwrap();
    let at_provider = &env.inspect()["gke"]["clusters"][0];
    assert_eq!(at_provider["network"], provider_name("bc-n", net_id).as_str(), "{at_provider}");
    assert_eq!(at_provider["subnetwork"], provider_name("bc-s", first["id"].as_str().unwrap()).as_str());

    // A network a cluster rests on is not deleted; once the cluster is gone, it is.
    let error = env
        .expect_failure(
            &env.acme_admin,
            "/api/compute/networks/delete",
            json!({"tenantId": "acme", "networkId": net_id}),
            409,
            "INVALID_STATE",
        )
        .await;
    assert_eq!(error["details"]["clusters"], json!([cluster_id]));
    env.ok("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": cluster_id})).await;
    env.wait_state("kubernetesClusters", "clusterId", cluster_id, "deleted").await;
    env.ok("/api/compute/networks/delete", json!({"tenantId": "acme", "networkId": net_id})).await;
    env.wait_state("networks", "networkId", net_id, "deleted").await;
}

async fn network_id_refuses_other_tenants_other_accounts_and_networks_not_provisioned(backend: Backend) {
    let mut env = super::start(backend).await;
    let token = env.acme_admin.clone();
    let us_only = ready_network(&env, network(GKE_POOL, "us-only", &[("us", "us-central1", "10.80.0.0/20")])).await;
    let on_do = ready_network(&env, network(DO_POOL, "on-do", &[("a", "nyc3", "10.81.0.0/24")])).await;
    let mut theirs = network(GKE_POOL, "theirs", &[("eu", "europe-west1", "10.82.0.0/20")]);
    theirs["tenantId"] = json!("globex");
    let (status, theirs) = env.post_as(&env.globex_admin, "/api/compute/networks/create", theirs).await;
    assert_eq!(status, 200, "{theirs}");
    env.stop_worker().await;
    let pending = env
        .ok("/api/compute/networks/create", network(GKE_POOL, "later", &[("eu", "europe-west1", "10.83.0.0/20")]))
        .await;

    for (network_id, why) in [
        (theirs["id"].as_str().unwrap(), "another tenant's"),
        (on_do["id"].as_str().unwrap(), "on another account"),
        ("net_0000000000000000000000000a", "none at all"),
        (us_only["id"].as_str().unwrap(), "no subnet in the region"),
    ] {
        let error =
            env.expect_failure(&token, CREATE, cluster("c", "europe-west1", network_id), 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), ["networkId"], "{why}: {error}");
    }
    let error = env
        .expect_failure(
            &token,
            CREATE,
            cluster("c", "europe-west1", pending["id"].as_str().unwrap()),
            409,
            "INVALID_STATE",
        )
        .await;
    assert_eq!(error["details"]["state"], "pending");
    let listed =
        env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme", "includeDeleted": true})).await;
    assert_eq!(listed["clusters"], json!([]), "no refusal wrote anything");
}

crate::on_both_backends!(
    a_clusters_nodes_use_the_networks_first_ready_subnet_in_its_region,
    network_id_refuses_other_tenants_other_accounts_and_networks_not_provisioned,
);
