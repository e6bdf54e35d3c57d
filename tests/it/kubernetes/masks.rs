//! Updates change what their `update_mask` names: through the JSON API the keys of the body are
//! the mask, so `[]`, `{}` and `null` clear a list, a map or a setting, alone or beside other
//! fields; over gRPC a caller's mask says the same, and without one only the fields given a value
//! are named; `bcctl` names what its clear flags clear. A body that names nothing is still refused.

use std::process::Command;

use better_compute::cli::BearerToken;
use better_compute::proto::compute::UpdateKubernetesClusterRequest;
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use better_compute::store::Backend;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::{Env, standard};
use crate::harness::{grpc_error, violated_fields};

crate::on_both_backends!(
    an_empty_list_in_a_json_update_clears_it_alone_or_beside_another_field,
    node_pool_lists_maps_and_settings_are_cleared_by_naming_them_empty,
    over_grpc_the_mask_names_an_empty_list_and_without_one_only_values_are_named,
    the_cli_clear_flags_name_what_they_clear,
    a_cidr_with_host_bits_set_is_kept_as_its_network,
);

const CREATE: &str = "/api/compute/kubernetesClusters/create";
const UPDATE: &str = "/api/compute/kubernetesClusters/update";
const POOL_UPDATE: &str = "/api/compute/kubernetesNodePools/update";

/// `base` with the keys of `change` set.
fn with(base: &Value, change: Value) -> Value {
    let mut body = base.clone();
    for (key, value) in change.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

fn count(value: &Value, field: &str) -> usize {
    match &value[field] {
        Value::Array(items) => items.len(),
        Value::Object(entries) => entries.len(),
        _ => 0,
    }
}

/// A standard cluster with authorized networks; returns its id.
async fn cluster_with_networks(env: &Env, name: &str) -> String {
    let mut request = standard(name, name);
    request["authorizedNetworks"] = json!(["203.0.113.0/24", "198.51.100.0/24"]);
    let created = env.ok(CREATE, request).await;
    assert_eq!(count(&created, "authorizedNetworks"), 2, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

async fn an_empty_list_in_a_json_update_clears_it_alone_or_beside_another_field(backend: Backend) {
    let env = super::start(backend).await;
    let id = cluster_with_networks(&env, "open").await;
    let cluster_ref = json!({"tenantId": "acme", "clusterId": id});

    // `[]` alone names the list: any address may reach the control plane.
    let cleared = env.ok(UPDATE, with(&cluster_ref, json!({"authorizedNetworks": []}))).await;
    assert_eq!((count(&cleared, "authorizedNetworks"), cleared["version"].as_i64()), (0, Some(2)), "{cleared}");

    // A list given replaces; `[]` beside another field clears it as well.
    let set = env.ok(UPDATE, with(&cluster_ref, json!({"authorizedNetworks": ["192.0.2.0/24"]}))).await;
    assert_eq!(set["authorizedNetworks"], json!(["192.0.2.0/24"]));
    let both = env.ok(UPDATE, with(&cluster_ref, json!({"authorizedNetworks": [], "description": "open"}))).await;
    assert_eq!((count(&both, "authorizedNetworks"), both["description"].as_str()), (0, Some("open")), "{both}");

    // `null` clears a field that can be empty; fields not in the body are left as they are.
    let plain = env.ok(UPDATE, with(&cluster_ref, json!({"description": null}))).await;
    assert_eq!((plain["description"].as_str(), plain["releaseChannel"].as_str()), (Some(""), Some("regular")));
    let got = env.ok("/api/compute/kubernetesClusters/get", cluster_ref.clone()).await;
    assert_eq!(got["version"], 5, "every update bumps the version");

    // The deprecated flag still clears, for one more release.
    env.ok(UPDATE, with(&cluster_ref, json!({"authorizedNetworks": ["192.0.2.0/24"]}))).await;
    let flagged = env.ok(UPDATE, with(&cluster_ref, json!({"setAuthorizedNetworks": true}))).await;
    assert_eq!(count(&flagged, "authorizedNetworks"), 0, "{flagged}");

    // Naming nothing is still refused, listing what can be named.
    for nothing in [cluster_ref.clone(), with(&cluster_ref, json!({"setAuthorizedNetworks": false}))] {
        let (status, answer) = env.post_as(&env.acme_admin, UPDATE, nothing).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("name at least one field"), "{answer}");
        assert!(answer["error"]["details"]["accepted"].as_array().unwrap().contains(&json!("authorizedNetworks")));
    }
}

async fn node_pool_lists_maps_and_settings_are_cleared_by_naming_them_empty(backend: Backend) {
    let env = super::start(backend).await;
    let created = env.ok(CREATE, standard("pools", "pools")).await;
    let id = created["id"].as_str().unwrap();
    let general = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": created["nodePools"][0]["id"]});
    let batch = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": created["nodePools"][1]["id"]});
    assert_eq!((count(&created["nodePools"][1], "labels"), count(&created["nodePools"][1], "taints")), (1, 1));

    // Labels (`{}`) and taints (`[]`) cleared together; empty zones are the cluster's default zones.
    let bare = env.ok(POOL_UPDATE, with(&batch, json!({"labels": {}, "taints": []}))).await;
    assert_eq!((count(&bare, "labels"), count(&bare, "taints"), bare["version"].as_i64()), (0, 0, Some(2)), "{bare}");
    let defaults = env.ok(POOL_UPDATE, with(&general, json!({"zones": [], "nodeCount": 3}))).await;
    assert_eq!((count(&defaults, "zones"), defaults["nodeCount"].as_i64()), (0, Some(3)), "{defaults}");

    // `null` turns autoscaling off and takes the accelerators off.
    assert!(created["nodePools"][1]["autoscaling"].is_object());
    let fixed = env.ok(POOL_UPDATE, with(&batch, json!({"autoscaling": null}))).await;
    assert!(fixed["autoscaling"].is_null(), "{fixed}");
    let gpu = env.ok(POOL_UPDATE, with(&general, json!({"accelerators": {"type": "nvidia-l4", "count": 1}}))).await;
    assert_eq!(gpu["accelerators"]["count"], 1);
    let plain = env.ok(POOL_UPDATE, with(&general, json!({"accelerators": null}))).await;
    assert!(plain["accelerators"].is_null(), "{plain}");

    // What a pool always has cannot be named without a value.
    let (status, answer) = env.post_as(&env.acme_admin, POOL_UPDATE, with(&general, json!({"nodeCount": null}))).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(violated_fields(&answer["error"]["details"]), ["nodeCount"]);
    let (status, answer) = env.post_as(&env.acme_admin, POOL_UPDATE, general.clone()).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("name at least one field"), "{answer}");
    let pool = env.ok("/api/compute/kubernetesNodePools/get", general).await;
    assert_eq!(pool["version"], 4, "the refusals changed nothing");
}

async fn over_grpc_the_mask_names_an_empty_list_and_without_one_only_values_are_named(backend: Backend) {
    let env = super::start(backend).await;
    let id = cluster_with_networks(&env, "grpc").await;
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut client = KubernetesClustersClient::new(InterceptedService::new(
        channel,
        BearerToken::new(Some(&env.acme_admin)).unwrap(),
    ));
    let update = |networks: &[&str], mask: Option<&[&str]>| UpdateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        cluster_id: id.clone(),
        authorized_networks: networks.iter().map(|n| n.to_string()).collect(),
        update_mask: mask.map(|paths| prost_types::FieldMask { paths: paths.iter().map(|p| p.to_string()).collect() }),
        ..Default::default()
    };

    // Named in the mask, an empty list clears.
    let cleared = client.update(update(&[], Some(&["authorized_networks"]))).await.unwrap().into_inner();
    assert!(cleared.authorized_networks.is_empty(), "{cleared:?}");
    assert_eq!(cleared.version, 2);

    // Without a mask, a list with items is named and replaces the old one ...
    let replaced = client.update(update(&["192.0.2.0/24"], None)).await.unwrap().into_inner();
    assert_eq!(replaced.authorized_networks, ["192.0.2.0/24"]);
    // ... and an empty one names nothing (proto3 cannot tell it from an absent one).
    let status = client.update(update(&[], None)).await.unwrap_err();
    assert_eq!((status.code(), grpc_error(&status).code.as_str()), (tonic::Code::InvalidArgument, "INVALID_INPUT"));
    assert!(status.message().contains("name at least one field"), "{status:?}");

    // A mask naming the list leaves the fields it does not name alone, even when given.
    let mut only_networks = update(&["198.51.100.0/24"], Some(&["authorized_networks"]));
    only_networks.description = Some("not named".into());
    let masked = client.update(only_networks).await.unwrap().into_inner();
    assert_eq!((masked.authorized_networks.len(), masked.description.as_str()), (1, ""));
    let unchanged = client.update(update(&[], Some(&["description"]))).await.unwrap().into_inner();
    assert_eq!(unchanged.authorized_networks, ["198.51.100.0/24"], "the list is not named");
}

async fn the_cli_clear_flags_name_what_they_clear(backend: Backend) {
    let env = super::start(backend).await;
    let id = cluster_with_networks(&env, "cli").await;
    let created = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    let batch = created["nodePools"][1]["id"].as_str().unwrap().to_owned();
    let bcctl = |args: &[&str]| {
        let output = tokio::task::block_in_place(|| {
            Command::new(env!("CARGO_BIN_EXE_bcctl"))
                .env("BC_ENDPOINT", &env.server.endpoint)
                .env("BC_TOKEN", &env.acme_admin)
                .args(["-o", "json"])
                .args(args)
                .output()
                .unwrap()
        });
        assert!(output.status.success(), "bcctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let cluster = bcctl(&["clusters", "update", "--tenant", "acme", &id, "--clear-authorized-networks"]);
    assert_eq!((count(&cluster, "authorizedNetworks"), cluster["version"].as_i64()), (0, Some(2)), "{cluster}");
    let pool = bcctl(&[
        "nodepools",
        "update",
        "--tenant",
        "acme",
        "--cluster",
        &id,
        &batch,
        "--clear-labels",
        "--clear-taints",
        "--no-autoscaling",
        "--count",
        "2",
    ]);
    assert_eq!((count(&pool, "labels"), count(&pool, "taints")), (0, 0), "{pool}");
    assert_eq!((pool["autoscaling"].is_null(), pool["nodeCount"].as_i64()), (true, Some(2)), "{pool}");

    // A value and the flag that clears it exclude each other, before anything is sent.
    let output = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_bcctl"))
            .env("BC_ENDPOINT", &env.server.endpoint)
            .env("BC_TOKEN", &env.acme_admin)
            .args(["clusters", "update", "--tenant", "acme", &id, "--clear-authorized-networks"])
            .args(["--authorized-network", "192.0.2.0/24"])
            .output()
            .unwrap()
    });
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot be used with"), "{output:?}");
}

/// GKE accepts a CIDR with host bits set and keeps its network; so does the API, on create and
/// on update, and shows the network. Anything that is not an IPv4 CIDR is refused naming its
/// entry. (Accepting host bits needs the proto's `ipv4_prefix` rule on `authorized_networks` to
/// accept them too.)
async fn a_cidr_with_host_bits_set_is_kept_as_its_network(backend: Backend) {
    let env = super::start(backend).await;
    let mut request = standard("cidr", "cidr");
    request["authorizedNetworks"] = json!(["10.0.0.5/24", "10.0.0.0/24", "203.0.113.9/32"]);
    let created = env.ok(CREATE, request).await;
    assert_eq!(created["authorizedNetworks"], json!(["10.0.0.0/24", "203.0.113.9/32"]), "masked, each once");
    let cluster_ref = json!({"tenantId": "acme", "clusterId": created["id"]});
    let updated = env.ok(UPDATE, with(&cluster_ref, json!({"authorizedNetworks": ["192.168.77.1/16"]}))).await;
    assert_eq!(updated["authorizedNetworks"], json!(["192.168.0.0/16"]));

    for wrong in ["10.0.0.1", "10.0.0.0/33", "300.1.2.3/8", "2001:db8::/32", "10.0.0.0/+8"] {
        let body = with(&cluster_ref, json!({"authorizedNetworks": ["192.0.2.0/24", wrong]}));
        let (status, answer) = env.post_as(&env.acme_admin, UPDATE, body).await;
        assert_eq!(status, 400, "{wrong}: {answer}");
        assert_eq!(violated_fields(&answer["error"]["details"]), ["authorizedNetworks[1]"], "{wrong}: {answer}");
    }
    let got = env.ok("/api/compute/kubernetesClusters/get", cluster_ref).await;
    assert_eq!(got["authorizedNetworks"], json!(["192.168.0.0/16"]), "the refusals changed nothing");
}
