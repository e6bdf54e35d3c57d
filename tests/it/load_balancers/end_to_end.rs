//! Load balancers over resources made through the vps module's own API and reconcilers, as
//! `bc-worker` runs them: a network with a subnet, instances of two tenants in the same pool and
//! region that get their droplets, a Let's Encrypt certificate. Each load balancer reaches
//! exactly its tenant's droplets on its network; deleting an instance through its API drops it
//! from its load balancers at once; a network with a load balancer on it cannot be deleted.

use std::time::Duration;

use serde_json::{Value, json};

use super::{CREATE, DELETE, Env, POOL, REGION, as_tenant, regional};
use better_compute::store::Backend;

use crate::harness::poll;

crate::on_both_backends!(load_balancers_over_networks_instances_and_certificates_made_through_their_api);

/// Polls `/api/compute/<resource>/get` as `tenant` until `check` holds.
async fn wait_for(
    env: &Env,
    tenant: &str,
    resource: &str,
    id_field: &str,
    id: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let token = if tenant == "acme" { env.acme_admin.clone() } else { env.globex_admin.clone() };
    poll(Duration::from_secs(30), &format!("{resource} {id}"), || async {
        let got =
            env.ok_as(&token, &format!("/api/compute/{resource}/get"), json!({"tenantId": tenant, id_field: id})).await;
        if check(&got) { Ok(got) } else { Err(got.to_string()) }
    })
    .await
}

/// An instance of `tenant` made through the API, once it has its droplet.
async fn instance(env: &Env, tenant: &str, name: &str, subnet: &str) -> (String, u64) {
    let token = if tenant == "acme" { env.acme_admin.clone() } else { env.globex_admin.clone() };
    let body = json!({"tenantId": tenant, "poolId": POOL, "name": name, "region": REGION, "size": "s-1vcpu-1gb",
        "image": "ubuntu-24-04-x64", "subnetId": subnet, "idempotencyKey": name});
    let made = env.ok_as(&token, "/api/compute/instances/create", body).await;
    let id = made["id"].as_str().unwrap().to_owned();
    let ready = wait_for(env, tenant, "instances", "instanceId", &id, |i| {
        i["machineId"].as_str().is_some_and(|m| !m.is_empty())
    })
    .await;
    (id, ready["machineId"].as_str().unwrap().parse().unwrap())
}

async fn load_balancers_over_networks_instances_and_certificates_made_through_their_api(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_vps_worker();
    let network = env
        .ok(
            "/api/compute/networks/create",
            json!({"tenantId": "acme", "poolId": POOL, "name": "private",
            "subnets": [{"name": "web", "region": REGION, "ipRange": "10.50.0.0/24"}], "idempotencyKey": "private"}),
        )
        .await;
    let network_id = network["id"].as_str().unwrap().to_owned();
    let network = wait_for(&env, "acme", "networks", "networkId", &network_id, |n| n["state"] == "ready").await;
    let subnet = network["subnets"][0]["id"].as_str().unwrap().to_owned();
    let (public, public_droplet) = instance(&env, "acme", "public", "").await;
    let (private, private_droplet) = instance(&env, "acme", "private", &subnet).await;
    let (_, theirs_droplet) = instance(&env, "globex", "theirs", "").await;
    let certificate = env
        .ok(
            "/api/compute/certificates/create",
            json!({"tenantId": "acme", "poolId": POOL, "name": "shop",
            "type": "letsEncrypt", "dnsNames": ["shop.example.com"], "idempotencyKey": "shop"}),
        )
        .await;
    let certificate = certificate["id"].as_str().unwrap().to_owned();

    let mut front = regional("front", json!({"pool": true}));
    front["forwarding"] = json!([
        {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
        {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 8080, "certificateId": certificate},
    ]);
    let front = env.ok(CREATE, front).await["id"].as_str().unwrap().to_owned();
    let back = env.ok(CREATE, regional("back", json!({"instanceIds": [private]}))).await;
    assert_eq!(back["subnetId"], subnet.as_str(), "it lives on the subnet its named instance is on");
    let back = back["id"].as_str().unwrap().to_owned();
    let globex = env
        .ok_as(&env.globex_admin.clone(), CREATE, as_tenant(regional("theirs", json!({"pool": true})), "globex"))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let front_fake = env
        .wait_fake("acme", &front, "front reaches acme's public droplet", |f| {
            Env::fake_droplets(f) == vec![public_droplet]
        })
        .await;
    let vpc = env.store.subnet_fetch(&subnet).await.unwrap().unwrap().provider_id;
    assert_ne!(front_fake["vpcUuid"], vpc.as_str());
    let back_fake = env
        .wait_fake("acme", &back, "back reaches the private droplet", |f| {
            Env::fake_droplets(f) == vec![private_droplet]
        })
        .await;
    assert_eq!(back_fake["vpcUuid"], vpc.as_str());
    env.wait_fake("globex", &globex, "globex's reaches its own", |f| Env::fake_droplets(f) == vec![theirs_droplet])
        .await;
    env.wait_load_balancer_state("acme", &front, "ready").await;

    // A network with a load balancer on it cannot be deleted.
    let (status, code, details) =
        env.refused("/api/compute/networks/delete", json!({"tenantId": "acme", "networkId": network_id})).await;
    assert_eq!((status, code.as_str()), (409, "INVALID_STATE"), "{details}");
    assert_eq!(details["loadBalancers"], json!([back]));

    // Deleting the instance through its API: the load balancer drops it at once.
    env.ok("/api/compute/instances/delete", json!({"tenantId": "acme", "instanceId": public})).await;
    env.wait_fake("acme", &front, "the deleted instance is dropped", |f| Env::fake_droplets(f).is_empty()).await;
    wait_for(&env, "acme", "instances", "instanceId", &public, |i| i["state"] == "deleted").await;
    env.wait_fake("globex", &globex, "globex's is untouched", |f| Env::fake_droplets(f) == vec![theirs_droplet]).await;
    assert_eq!(env.tag_requests(), 0);

    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": back})).await;
    env.wait_load_balancer_state("acme", &back, "deleted").await;
    env.ok("/api/compute/instances/delete", json!({"tenantId": "acme", "instanceId": private})).await;
    wait_for(&env, "acme", "instances", "instanceId", &private, |i| i["state"] == "deleted").await;
    env.ok("/api/compute/networks/delete", json!({"tenantId": "acme", "networkId": network_id})).await;
    wait_for(&env, "acme", "networks", "networkId", &network_id, |n| n["state"] == "deleted").await;
}
