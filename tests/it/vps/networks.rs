//! Networks: a DigitalOcean network is a VPC per subnet, a GKE network a Compute Engine network
//! with subnetworks; create, list, get, update of the description and delete; every refusal of
//! create and delete; another tenant's network is not found.

use better_compute::provider::{InstanceSpec, Instances};
use better_compute::reconcile::vps::provider_name;
use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, GKE_POOL, OWN_DO_POOL, SUSPENDED_POOL, do_network, instance, network, ready_network};
use crate::harness::violated_fields;

const CREATE: &str = "/api/compute/networks/create";
const GET: &str = "/api/compute/networks/get";
const LIST: &str = "/api/compute/networks/list";
const UPDATE: &str = "/api/compute/networks/update";
const DELETE: &str = "/api/compute/networks/delete";

/// The fake's VPCs named `name`.
fn vpcs_named(env: &Env, name: &str) -> Vec<Value> {
    let all = env.inspect()["digitalocean"]["vpcs"].as_array().cloned().unwrap_or_default();
    all.into_iter().filter(|v| v["name"] == name).collect()
}

/// The provider-side name of a subnet: `bc-s-` and 24 characters of its id.
pub fn subnet_name(id: &str) -> String {
    provider_name("bc-s", id)
}

async fn a_digitalocean_network_is_a_vpc_per_subnet_from_create_to_delete(backend: Backend) {
    let env = super::start(backend).await;
    let body = do_network("web", &[("front", "nyc3", "10.10.0.0/24"), ("back", "ams3", "10.20.0.0/20")]);
    let created = env.ok(CREATE, body.clone()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("net_"), "{created}");
    assert_eq!((created["state"].as_str(), created["version"].as_i64()), (Some("pending"), Some(1)));
    assert_eq!(created["subnets"][0]["name"], "front");
    assert!(created["subnets"][1]["id"].as_str().unwrap().starts_with("snet_"));
    // A retry with the same key is the same network; the same key with another field a conflict.
    assert_eq!(env.ok(CREATE, body.clone()).await["id"], created["id"]);
    let mut changed = body.clone();
    changed["description"] = json!("other");
    env.expect_failure(&env.acme_admin, CREATE, changed, 409, "CONFLICT").await;
    // The name is taken among live networks.
    let mut again = body.clone();
    again["idempotencyKey"] = json!("another-key");
    env.expect_failure(&env.acme_admin, CREATE, again, 409, "CONFLICT").await;

    let ready = env.wait_state("networks", "networkId", &id, "ready").await;
    for (i, subnet) in ready["subnets"].as_array().unwrap().iter().enumerate() {
        assert_eq!(subnet["state"], "ready", "{ready}");
        let vpc = vpcs_named(&env, &subnet_name(subnet["id"].as_str().unwrap()));
        assert_eq!(vpc.len(), 1, "subnet {i} is one VPC: {}", env.inspect());
        assert_eq!((&vpc[0]["region"], &vpc[0]["ip_range"]), (&subnet["region"], &subnet["ipRange"]));
    }

    let updated = env.ok(UPDATE, json!({"tenantId": "acme", "networkId": id, "description": "the web tier"})).await;
    assert_eq!((updated["description"].as_str(), updated["version"].as_i64()), (Some("the web tier"), Some(2)));
    assert_eq!(updated["state"], "ready", "the description changes nothing at the provider");
    env.expect_failure(&env.acme_admin, UPDATE, json!({"tenantId": "acme", "networkId": id}), 400, "INVALID_INPUT")
        .await;
    let listed = env.ok(LIST, json!({"tenantId": "acme"})).await;
    assert_eq!(listed["networks"].as_array().unwrap().len(), 1);
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme", "poolId": GKE_POOL})).await["networks"], json!([]));

    let deleting = env.ok(DELETE, json!({"tenantId": "acme", "networkId": id})).await;
    assert_eq!(deleting["state"], "deleting");
    env.expect_failure(
        &env.acme_admin,
        UPDATE,
        json!({"tenantId": "acme", "networkId": id, "description": "x"}),
        409,
        "INVALID_STATE",
    )
    .await;
    let deleted = env.wait_state("networks", "networkId", &id, "deleted").await;
    assert!(deleted["deletedAt"].is_string(), "{deleted}");
    assert_eq!(env.inspect()["digitalocean"]["vpcs"], json!([]));
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["networks"], json!([]));
    let with_deleted = env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await;
    assert_eq!(with_deleted["networks"][0]["state"], "deleted");
    assert_eq!(
        env.event_types(&id).await,
        ["network.created", "network.ready", "network.updated", "network.deleting", "network.deleted"]
    );
    // A deleted network's name is free again.
    let mut reuse = body;
    reuse["idempotencyKey"] = json!("reuse");
    env.ok(CREATE, reuse).await;
}

async fn a_gke_network_is_a_compute_network_with_subnetworks(backend: Backend) {
    let env = super::start(backend).await;
    let body =
        network(GKE_POOL, "nodes", &[("eu", "europe-west1", "10.0.0.0/20"), ("us", "us-central1", "10.1.0.0/20")]);
    let ready = ready_network(&env, body).await;
    let id = ready["id"].as_str().unwrap();
    let compute = &env.inspect()["compute"];
    let network_name = provider_name("bc-n", id);
    assert_eq!(compute["networks"][0]["name"], network_name.as_str(), "{compute}");
    let subnetworks = compute["subnetworks"].as_array().unwrap();
    assert_eq!(subnetworks.len(), 2, "{compute}");
    for subnet in ready["subnets"].as_array().unwrap() {
        let found = subnetworks.iter().find(|s| s["name"] == subnet_name(subnet["id"].as_str().unwrap())).unwrap();
        assert_eq!((&found["region"], &found["ipCidrRange"]), (&subnet["region"], &subnet["ipRange"]));
        assert_eq!(found["network"], network_name.as_str());
    }
    env.ok(DELETE, json!({"tenantId": "acme", "networkId": id})).await;
    env.wait_state("networks", "networkId", id, "deleted").await;
    let compute = &env.inspect()["compute"];
    assert_eq!((&compute["networks"], &compute["subnetworks"]), (&json!([]), &json!([])));
}

async fn create_refuses_what_the_pool_and_the_ranges_do_not_allow(backend: Backend) {
    let env = super::setup(backend).start().await;
    let token = env.acme_admin.clone();
    // Overlapping ranges within the network.
    let error = env
        .expect_failure(
            &token,
            CREATE,
            do_network("a", &[("x", "nyc3", "10.0.0.0/16"), ("y", "ams3", "10.0.8.0/24")]),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["subnets[1].ipRange"]);
    assert!(error["message"].as_str().unwrap().contains("overlaps"), "{error}");
    // A region the account does not have, an excluded one, a public range, a size DigitalOcean
    // does not take, a name twice.
    let error = env
        .expect_failure(&token, CREATE, do_network("a", &[("x", "lon1", "10.0.0.0/24")]), 400, "INVALID_INPUT")
        .await;
    assert_eq!(violated_fields(&error["details"]), ["subnets[0].region"]);
    assert_eq!(error["details"]["regions"], json!(["nyc3", "ams3", "sfo3"]));
    let error = env
        .expect_failure(&token, CREATE, do_network("a", &[("x", "sfo3", "10.0.0.0/24")]), 400, "INVALID_INPUT")
        .await;
    assert_eq!(
        (violated_fields(&error["details"]), &error["details"]["excludedRegions"]),
        (vec!["subnets[0].region".to_owned()], &json!(["sfo3"]))
    );
    let error =
        env.expect_failure(&token, CREATE, do_network("a", &[("x", "nyc3", "8.8.0.0/24")]), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["subnets[0].ipRange"]);
    let error = env
        .expect_failure(&token, CREATE, do_network("a", &[("x", "nyc3", "10.0.0.0/12")]), 400, "INVALID_INPUT")
        .await;
    assert!(error["message"].as_str().unwrap().contains("/16 to /28"), "{error}");
    let error = env
        .expect_failure(
            &token,
            CREATE,
            do_network("a", &[("x", "nyc3", "10.0.0.0/24"), ("x", "ams3", "10.1.0.0/24")]),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["subnets[1].name"]);
    // On GKE a subnet is in a region, not a zone.
    let error = env
        .expect_failure(
            &token,
            CREATE,
            network(GKE_POOL, "a", &[("x", "europe-west1-b", "10.0.0.0/24")]),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["subnets[0].region"]);
    // The table's constraints.
    let mut bad = do_network("Bad_Name", &[("x", "nyc3", "10.0.0.1/24")]);
    bad["description"] = json!("x".repeat(257));
    let error = env.expect_failure(&token, CREATE, bad, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["description", "name", "subnets[0].ipRange"]);
    let error = env.expect_failure(&token, CREATE, do_network("a", &[]), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["subnets"]);
    // The pool: another tenant's own pool is not found, a suspended offer takes nothing new.
    env.expect_failure(
        &env.globex_admin.clone(),
        CREATE,
        {
            let mut theirs = network(OWN_DO_POOL, "a", &[("x", "nyc3", "10.0.0.0/24")]);
            theirs["tenantId"] = json!("globex");
            theirs
        },
        404,
        "NOT_FOUND",
    )
    .await;
    env.expect_failure(
        &token,
        CREATE,
        network(SUSPENDED_POOL, "a", &[("x", "nyc3", "10.0.0.0/24")]),
        409,
        "INVALID_STATE",
    )
    .await;
    // A viewer may read but not create.
    env.expect_failure(
        &env.acme_viewer.clone(),
        CREATE,
        do_network("a", &[("x", "nyc3", "10.0.0.0/24")]),
        403,
        "ACCESS_DENIED",
    )
    .await;
    // Nothing was written by any refusal.
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await["networks"], json!([]));
}

async fn another_tenants_network_is_not_found_and_a_viewer_only_reads(backend: Backend) {
    let env = super::setup(backend).start().await;
    let created = env.ok(CREATE, do_network("mine", &[("x", "nyc3", "10.0.0.0/24")])).await;
    let id = created["id"].as_str().unwrap();
    let globex = env.globex_admin.clone();
    for path in [GET, DELETE] {
        env.expect_failure(&globex, path, json!({"tenantId": "globex", "networkId": id}), 404, "NOT_FOUND").await;
        env.expect_failure(&globex, path, json!({"tenantId": "acme", "networkId": id}), 403, "ACCESS_DENIED").await;
    }
    env.expect_failure(
        &globex,
        UPDATE,
        json!({"tenantId": "globex", "networkId": id, "description": "x"}),
        404,
        "NOT_FOUND",
    )
    .await;
    assert_eq!(env.post_as(&globex, LIST, json!({"tenantId": "globex"})).await.1["networks"], json!([]));
    let viewer = env.acme_viewer.clone();
    let (status, seen) = env.post_as(&viewer, GET, json!({"tenantId": "acme", "networkId": id})).await;
    assert_eq!((status, &seen["id"]), (200, &created["id"]));
    env.expect_failure(&viewer, DELETE, json!({"tenantId": "acme", "networkId": id}), 403, "ACCESS_DENIED").await;
    assert_eq!(env.ok(GET, json!({"tenantId": "acme", "networkId": id})).await["state"], "pending");
}

async fn a_network_with_an_instance_on_it_is_not_deleted(backend: Backend) {
    let mut env = super::start(backend).await;
    let ready = ready_network(&env, do_network("busy", &[("x", "nyc3", "10.30.0.0/24")])).await;
    let id = ready["id"].as_str().unwrap();
    let subnet = ready["subnets"][0]["id"].as_str().unwrap();
    let made = env.ok("/api/compute/instances/create", instance("vm", "nyc3", subnet)).await;
    let error = env
        .expect_failure(&env.acme_admin, DELETE, json!({"tenantId": "acme", "networkId": id}), 409, "INVALID_STATE")
        .await;
    assert_eq!(error["details"]["instances"], json!([made["id"]]));
    assert_eq!(error["details"]["reason"], "inUse");
    assert!(error["message"].as_str().unwrap().contains(made["id"].as_str().unwrap()), "{error}");
    assert_eq!(env.ok(GET, json!({"tenantId": "acme", "networkId": id})).await["state"], "ready", "nothing changed");
    // Once the instance is gone (not just being deleted), the network goes. The worker pauses
    // while the instance is being deleted, so the refusal is seen before it is gone.
    env.stop_worker().await;
    env.ok("/api/compute/instances/delete", json!({"tenantId": "acme", "instanceId": made["id"]})).await;
    env.expect_failure(&env.acme_admin, DELETE, json!({"tenantId": "acme", "networkId": id}), 409, "INVALID_STATE")
        .await;
    env.start_worker();
    env.wait_state("instances", "instanceId", made["id"].as_str().unwrap(), "deleted").await;
    env.ok(DELETE, json!({"tenantId": "acme", "networkId": id})).await;
    env.wait_state("networks", "networkId", id, "deleted").await;
}

async fn provider_refusals_put_the_network_in_error(backend: Backend) {
    let env = super::start(backend).await;
    // DigitalOcean refuses a VPC whose range overlaps another VPC of the account in the region.
    let first = ready_network(&env, do_network("one", &[("x", "nyc3", "10.40.0.0/24")])).await;
    let second = env.ok(CREATE, do_network("two", &[("y", "nyc3", "10.40.0.0/25")])).await;
    let failed = env.wait_state("networks", "networkId", second["id"].as_str().unwrap(), "error").await;
    assert!(failed["message"].as_str().unwrap().contains("overlaps"), "{failed}");
    assert_eq!(failed["subnets"][0]["state"], "error");
    assert!(env.event_types(second["id"].as_str().unwrap()).await.contains(&"network.error".to_owned()));

    // A VPC that still has a member (a droplet made outside better-compute) is not deleted: the
    // network is in error with DigitalOcean's words until a new delete finds it empty.
    let vpc = vpcs_named(&env, &subnet_name(first["subnets"][0]["id"].as_str().unwrap()))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let adapter = crate::harness::adapters::digitalocean(&env.cloud);
    let outsider = adapter
        .instance_create(&InstanceSpec {
            name: "outsider".into(),
            region: "nyc3".into(),
            size: "s-1vcpu-1gb".into(),
            image: "ubuntu-24-04-x64".into(),
            vpc_uuid: vpc,
            ..Default::default()
        })
        .await
        .unwrap();
    let id = first["id"].as_str().unwrap();
    env.ok(DELETE, json!({"tenantId": "acme", "networkId": id})).await;
    let refused = env.wait_state("networks", "networkId", id, "error").await;
    assert!(refused["message"].as_str().unwrap().contains("refused to delete"), "{refused}");
    adapter.instance_delete(outsider.id).await.unwrap();
    // (The delete backoff may have retried already; a new delete retries at once either way.)
    let again = env.ok(DELETE, json!({"tenantId": "acme", "networkId": id})).await;
    assert!(again["state"] == "deleting" || again["state"] == "deleted", "{again}");
    env.wait_state("networks", "networkId", id, "deleted").await;
}

crate::on_both_backends!(
    a_digitalocean_network_is_a_vpc_per_subnet_from_create_to_delete,
    a_gke_network_is_a_compute_network_with_subnetworks,
    create_refuses_what_the_pool_and_the_ranges_do_not_allow,
    another_tenants_network_is_not_found_and_a_viewer_only_reads,
    a_network_with_an_instance_on_it_is_not_deleted,
    provider_refusals_put_the_network_in_error,
);
