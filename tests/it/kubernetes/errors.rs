//! Every error code the clusters page names, through the JSON path and through gRPC, with its
//! documented details; and the secondary decisions of `credentials`.

use std::time::Duration;

use better_compute::cli::BearerToken;
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use better_compute::proto::compute::kubernetes_node_pools_client::KubernetesNodePoolsClient;
use better_compute::proto::compute::{
    CreateKubernetesClusterRequest, CreateKubernetesNodePoolRequest, DeleteKubernetesClusterRequest,
    DeleteKubernetesNodePoolRequest, GetKubernetesClusterRequest, KubernetesCredentialsRequest, KubernetesNodePoolSpec,
    KubernetesVersionsRequest, ListKubernetesClustersRequest, UpdateKubernetesClusterRequest,
};
use better_compute::store::Backend;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::{DO_POOL, POOL, standard};
use crate::harness::{grpc_error, violated_fields};

crate::on_both_backends!(
    create_refusals_carry_their_documented_codes_and_details,
    the_cap_counts_clusters_being_deleted,
    state_rules_of_update_delete_and_credentials,
    the_same_rules_hold_over_grpc,
);

const CREATE: &str = "/api/compute/kubernetesClusters/create";

async fn create_refusals_carry_their_documented_codes_and_details(backend: Backend) {
    let env = super::start(backend).await;
    let token = env.acme_admin.clone();
    let with = |change: Value| {
        let mut body = standard("c1", "e1");
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    // A pool the tenant cannot see, and one that does not exist, look the same.
    let (status, code, _) =
        env.refused_as(&token, CREATE, with(json!({"poolId": "pool_00000000000000000000000xyz"}))).await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
    let (_, code, _) = env
        .refused_as(&env.globex_admin.clone(), CREATE, {
            let mut b = with(json!({"poolId": DO_POOL}));
            b["tenantId"] = json!("globex");
            b
        })
        .await;
    assert_eq!(code, "NOT_FOUND", "acme's own pool is not visible to globex");
    let (status, code, _) = env.refused_as(&token, CREATE, with(json!({"poolId": DO_POOL}))).await;
    assert_eq!((status, code.as_str()), (422, "UNSUPPORTED"));
    let (status, code, details) = env.refused_as(&token, CREATE, with(json!({"location": "asia-east1"}))).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"));
    assert_eq!(details["zones"], json!(["europe-west1-b", "europe-west1-c", "us-central1-a"]));
    assert_eq!(details["regions"], json!(["europe-west1", "us-central1"]));
    // A zone is a zonal cluster's location.
    let mut zonal = with(json!({"location": "europe-west1-c", "name": "zonal", "idempotencyKey": "zonal"}));
    zonal["nodePools"][0]["zones"] = json!(["europe-west1-c"]);
    env.ok(CREATE, zonal).await;
    let (_, code, details) = env.refused_as(&token, CREATE, with(json!({"mode": "autopilot", "name": "auto"}))).await;
    assert_eq!((code.as_str(), violated_fields(&details)), ("INVALID_INPUT", vec!["nodePools".to_owned()]));
    let (_, code, _) = env.refused_as(&token, CREATE, with(json!({"nodePools": []}))).await;
    assert_eq!(code, "INVALID_INPUT", "standard takes 1 to 10 node pools");
    let mut wrong_zone = with(json!({}));
    wrong_zone["nodePools"][0]["zones"] = json!(["us-central1-a"]);
    let (_, _, details) = env.refused_as(&token, CREATE, wrong_zone).await;
    assert_eq!(violated_fields(&details), ["nodePools[0].zones[0]"]);
    // A project must be a live project of the tenant: another tenant's, or none, is NOT_FOUND.
    // Projects are the operator's catalog (`platform:projects:create` is for platform admins).
    let (status, theirs) = env
        .post_as(
            &env.server.admin_token.clone(),
            "/api/platform/projects/create",
            json!({"tenantId": "globex", "name": "theirs"}),
        )
        .await;
    assert_eq!(status, 200, "{theirs}");
    let theirs = theirs["id"].as_str().expect("a project id").to_owned();
    let (status, code, details) = env.refused_as(&token, CREATE, with(json!({"projectId": theirs}))).await;
    assert_eq!((status, code.as_str(), &details["resource"]), (404, "NOT_FOUND", &json!("project")));
    let (_, code, _) =
        env.refused_as(&token, CREATE, with(json!({"projectId": "prj_00000000000000000000000000"}))).await;
    assert_eq!(code, "NOT_FOUND");
    let (_, code, details) =
        env.refused_as(&token, CREATE, with(json!({"networkId": "net_0000000000000000000000000a"}))).await;
    assert_eq!((code.as_str(), violated_fields(&details)), ("INVALID_INPUT", vec!["networkId".to_owned()]));
    // The table's constraints.
    let mut bad = with(json!({"name": "Bad_Name", "releaseChannel": "nightly", "version": "latest",
        "authorizedNetworks": ["10.0.0.1/33"], "description": "x".repeat(257)}));
    bad["nodePools"][0]["nodeCount"] = json!(1001);
    bad["nodePools"][1]["taints"][0]["effect"] = json!("Sometimes");
    bad["nodePools"][1]["autoscaling"]["maxNodes"] = json!(0);
    let (_, code, details) = env.refused_as(&token, CREATE, bad).await;
    assert_eq!(code, "INVALID_INPUT");
    assert_eq!(
        violated_fields(&details),
        [
            "authorizedNetworks[0]",
            "description",
            "name",
            "nodePools[0].nodeCount",
            "nodePools[1].autoscaling.maxNodes",
            "nodePools[1].taints[0].effect",
            "releaseChannel",
            "version",
        ]
    );
    let mut missing = with(json!({}));
    missing["nodePools"][0].as_object_mut().unwrap().remove("nodeCount");
    let (_, _, details) = env.refused_as(&token, CREATE, missing).await;
    assert_eq!(violated_fields(&details), ["nodePools[0].nodeCount"], "nodeCount is required, 0 is allowed");
    let mut zero = with(json!({"name": "zero", "idempotencyKey": "zero"}));
    zero["nodePools"][0]["nodeCount"] = json!(0);
    env.ok(CREATE, zero).await;

    // Names and idempotency keys.
    env.ok(CREATE, with(json!({}))).await;
    let (status, code, _) = env.refused_as(&token, CREATE, with(json!({"idempotencyKey": "e2"}))).await;
    assert_eq!((status, code.as_str()), (409, "CONFLICT"), "the name is taken");
    let (status, code, details) = env.refused_as(&token, CREATE, with(json!({"description": "changed"}))).await;
    assert_eq!((status, code.as_str()), (409, "CONFLICT"), "same key, another request");
    assert!(details["clusterId"].as_str().unwrap().starts_with("kcl_"));
    // Another caller with the same key makes another cluster.
    let other = env.post_as(&env.acme_editor.clone(), CREATE, with(json!({"name": "c2"}))).await;
    assert_eq!(other.0, 200, "{}", other.1);

    // Versions: checked as for create, then the provider's answer.
    let versions = env
        .ok(
            "/api/compute/kubernetesClusters/versions",
            json!({"tenantId": "acme", "poolId": POOL, "location": "europe-west1"}),
        )
        .await;
    assert!(versions["validVersions"].as_array().unwrap().len() >= 3, "{versions}");
    assert!(versions["channels"].as_array().unwrap().iter().any(|c| c["channel"] == "regular"), "{versions}");
    let (_, code, _) = env
        .refused_as(
            &token,
            "/api/compute/kubernetesClusters/versions",
            json!({"tenantId": "acme", "poolId": POOL, "location": "mars-north1"}),
        )
        .await;
    assert_eq!(code, "INVALID_INPUT");
}

async fn the_cap_counts_clusters_being_deleted(backend: Backend) {
    let env = super::setup(backend).max_clusters_per_tenant(2).start().await;
    let first = env.ok(CREATE, standard("a", "a")).await;
    env.ok(CREATE, standard("b", "b")).await;
    let (status, code, details) = env.refused_as(&env.acme_admin.clone(), CREATE, standard("c", "c")).await;
    assert_eq!((status, code.as_str(), details["limit"].as_i64()), (429, "QUOTA_EXCEEDED", Some(2)));
    // No worker: the cluster stays `deleting`, and still counts.
    let deleting =
        env.ok("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": first["id"]})).await;
    assert_eq!(deleting["state"], "deleting");
    let (_, code, _) = env.refused_as(&env.acme_admin.clone(), CREATE, standard("c", "c")).await;
    assert_eq!(code, "QUOTA_EXCEEDED");
    // Another tenant has its own cap.
    let mut globex = standard("a", "a");
    globex["tenantId"] = json!("globex");
    assert_eq!(env.post_as(&env.globex_admin.clone(), CREATE, globex).await.0, 200);
}

async fn state_rules_of_update_delete_and_credentials(backend: Backend) {
    // An operator policy lets every tenant user connect, so that the secondary decisions of
    // `edit` and `admin` are what refuses.
    let connect_only = r#"permit (principal, action == BetterCompute::Action::"compute:kubernetes:connect", resource)
        when { principal has tenant && resource has tenant && principal.tenant == resource.tenant };"#;
    let mut env = super::setup(backend).policies(&[("connect.cedar".into(), connect_only.into())]).start().await;
    let created = env.ok(CREATE, standard("s", "s")).await;
    let cluster = json!({"tenantId": "acme", "clusterId": created["id"]});
    let credentials = "/api/compute/kubernetesClusters/credentials";
    let (status, code, _) = env.refused_as(&env.acme_admin.clone(), credentials, cluster.clone()).await;
    assert_eq!((status, code.as_str()), (409, "INVALID_STATE"), "not ready yet");
    let (_, code, _) =
        env.refused_as(&env.acme_admin.clone(), "/api/compute/kubernetesClusters/update", cluster.clone()).await;
    assert_eq!(code, "INVALID_INPUT", "name at least one field");
    env.start_worker();
    env.wait_cluster_state(created["id"].as_str().unwrap(), "ready", Duration::from_secs(20)).await;

    let viewer = env.acme_viewer.clone();
    let view = env.post_as(&viewer, credentials, cluster.clone()).await;
    assert_eq!(view.0, 200, "connect alone gives view: {}", view.1);
    for role in ["edit", "admin"] {
        let mut asked = cluster.clone();
        asked["role"] = json!(role);
        let (status, code, _) = env.refused_as(&viewer, credentials, asked.clone()).await;
        assert_eq!((status, code.as_str()), (403, "ACCESS_DENIED"), "{role} needs more than connect");
        assert_eq!(env.post_as(&env.acme_editor.clone(), credentials, asked).await.0, 200, "{role} for an editor");
    }
    let mut short = cluster.clone();
    short["ttlSeconds"] = json!(599);
    let (_, code, details) = env.refused_as(&viewer, credentials, short).await;
    assert_eq!((code.as_str(), violated_fields(&details)), ("INVALID_INPUT", vec!["ttlSeconds".to_owned()]));
    let mut long = cluster.clone();
    long["ttlSeconds"] = json!(600);
    let issued = env.post_as(&viewer, credentials, long).await.1;
    let expires = issued["expiresAt"].as_str().unwrap();
    assert!(expires.ends_with('Z'), "{issued}");

    // Another tenant's cluster: refused by the decision before anything is looked up.
    let mut theirs = cluster.clone();
    theirs["tenantId"] = json!("globex");
    let (status, code, _) =
        env.refused_as(&env.globex_admin.clone(), "/api/compute/kubernetesClusters/get", theirs).await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "under globex, acme's cluster does not exist");
    let (_, code, _) =
        env.refused_as(&env.globex_admin.clone(), "/api/compute/kubernetesClusters/get", cluster.clone()).await;
    assert_eq!(code, "ACCESS_DENIED");

    env.ok("/api/compute/kubernetesClusters/delete", cluster.clone()).await;
    let mut change = cluster.clone();
    change["description"] = json!("late");
    let (_, code, _) = env.refused_as(&env.acme_admin.clone(), "/api/compute/kubernetesClusters/update", change).await;
    assert_eq!(code, "INVALID_STATE", "a cluster being deleted does not change");
}

async fn the_same_rules_hold_over_grpc(backend: Backend) {
    let env = super::start(backend).await;
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut client = KubernetesClustersClient::new(InterceptedService::new(
        channel,
        BearerToken::new(Some(&env.acme_admin)).unwrap(),
    ));
    let request = |pool: &str, location: &str, key: &str| CreateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        pool_id: pool.into(),
        name: "grpc".into(),
        mode: "standard".into(),
        location: location.into(),
        idempotency_key: key.into(),
        node_pools: vec![KubernetesNodePoolSpec {
            name: "p".into(),
            machine_type: "e2-medium".into(),
            node_count: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let created = client.create(request(POOL, "europe-west1", "g1")).await.unwrap().into_inner();
    assert_eq!((created.state.as_str(), created.release_channel.as_str()), ("pending", "regular"));
    let again = client.create(request(POOL, "europe-west1", "g1")).await.unwrap().into_inner();
    assert_eq!(again.id, created.id);
    let cases = [
        (request("pool_00000000000000000000000xyz", "europe-west1", "g2"), tonic::Code::NotFound, "NOT_FOUND"),
        (request(DO_POOL, "europe-west1", "g3"), tonic::Code::FailedPrecondition, "UNSUPPORTED"),
        (request(POOL, "asia-east1", "g4"), tonic::Code::InvalidArgument, "INVALID_INPUT"),
        (request(POOL, "europe-west1", "g5"), tonic::Code::AlreadyExists, "CONFLICT"),
    ];
    for (asked, grpc, code) in cases {
        let status = client.create(asked).await.unwrap_err();
        assert_eq!(status.code(), grpc, "{status:?}");
        assert_eq!(grpc_error(&status).code.as_str(), code);
    }
    let status = client
        .credentials(KubernetesCredentialsRequest {
            tenant_id: "acme".into(),
            cluster_id: created.id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(grpc_error(&status).code.as_str(), "INVALID_STATE");
    let versions = client
        .versions(KubernetesVersionsRequest {
            tenant_id: "acme".into(),
            pool_id: POOL.into(),
            location: "europe-west1-b".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!versions.default_version.is_empty());

    // The other methods of both services over gRPC.
    let cluster_ref = |id: &str| GetKubernetesClusterRequest { tenant_id: "acme".into(), cluster_id: id.into() };
    let got = client.get(cluster_ref(&created.id)).await.unwrap().into_inner();
    assert_eq!((got.provider_name.len(), got.node_pools.len()), (5 + 24, 1));
    let listed = client
        .list(ListKubernetesClustersRequest { tenant_id: "acme".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.clusters.len(), 1);
    let nothing = UpdateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        cluster_id: created.id.clone(),
        ..Default::default()
    };
    assert_eq!(grpc_error(&client.update(nothing).await.unwrap_err()).code.as_str(), "INVALID_INPUT");
    let described = UpdateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        cluster_id: created.id.clone(),
        description: Some("over gRPC".into()),
        ..Default::default()
    };
    assert_eq!(client.update(described).await.unwrap().into_inner().version, 2);
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut pools = KubernetesNodePoolsClient::new(InterceptedService::new(
        channel,
        BearerToken::new(Some(&env.acme_admin)).unwrap(),
    ));
    let added = pools
        .create(CreateKubernetesNodePoolRequest {
            tenant_id: "acme".into(),
            cluster_id: created.id.clone(),
            name: "more".into(),
            machine_type: "e2-medium".into(),
            node_count: Some(0),
            idempotency_key: "more-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((added.state.as_str(), added.node_count), ("pending", 0));
    let duplicate = pools
        .create(CreateKubernetesNodePoolRequest {
            tenant_id: "acme".into(),
            cluster_id: created.id.clone(),
            name: "more".into(),
            machine_type: "e2-medium".into(),
            node_count: Some(1),
            idempotency_key: "more-2".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(grpc_error(&duplicate).code.as_str(), "CONFLICT", "pool names are unique in a cluster");
    let deleted = client
        .delete(DeleteKubernetesClusterRequest {
            tenant_id: "acme".into(),
            cluster_id: created.id.clone(),
            validate_only: false,
            force: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.state, "deleting");
    let late = pools
        .delete(DeleteKubernetesNodePoolRequest {
            tenant_id: "acme".into(),
            cluster_id: created.id.clone(),
            node_pool_id: added.id.clone(),
            validate_only: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(late.state, "deleting", "the cluster's delete took its pools with it");
}
