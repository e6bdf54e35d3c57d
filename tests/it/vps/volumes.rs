//! Volumes: a DigitalOcean volume per volume, `ready` once the provider's matches what was
//! asked; grown (never shrunk), attached to an instance of the tenant in its region and
//! detached through the provider's asynchronous actions; detached before it is deleted, and
//! gone from the provider once deleted. A create is idempotent by its key.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{DO_POOL, Env, instance};
use crate::harness::violated_fields;

const CREATE: &str = "/api/compute/volumes/create";
const GET: &str = "/api/compute/volumes/get";
const LIST: &str = "/api/compute/volumes/list";
const UPDATE: &str = "/api/compute/volumes/update";
const DELETE: &str = "/api/compute/volumes/delete";
const ATTACH: &str = "/api/compute/volumes/attach";
const DETACH: &str = "/api/compute/volumes/detach";

/// A volume request of acme on the DigitalOcean pool.
pub fn volume(name: &str, region: &str, size: i64) -> Value {
    json!({
        "tenantId": "acme", "poolId": DO_POOL, "name": name, "region": region, "sizeGigabytes": size,
        "filesystemType": "ext4", "description": "data", "idempotencyKey": name,
    })
}

/// The fake's volumes.
fn provider_volumes(env: &Env) -> Vec<Value> {
    env.inspect()["digitalocean"]["volumes"].as_array().cloned().unwrap_or_default()
}

/// The fake's droplet with id `machine`.
fn droplet(env: &Env, machine: &str) -> Value {
    let droplets = env.inspect()["digitalocean"]["droplets"].as_array().cloned().unwrap_or_default();
    droplets.into_iter().find(|d| d["id"].as_u64().is_some_and(|id| id.to_string() == machine)).expect("a droplet")
}

/// Makes an instance of acme in `region` and waits until it has its machine.
pub async fn ready_instance(env: &Env, name: &str, region: &str) -> Value {
    let created = env.ok("/api/compute/instances/create", instance(name, region, "")).await;
    env.wait_state("instances", "instanceId", created["id"].as_str().unwrap(), "ready").await
}

async fn a_volume_grows_attaches_detaches_and_is_gone_once_deleted(backend: Backend) {
    let env = super::start(backend).await;
    let body = volume("data", "nyc3", 10);
    let created = env.ok(CREATE, body.clone()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("pvol_"), "{created}");
    assert_eq!((created["state"].as_str(), created["sizeGigabytes"].as_i64()), (Some("pending"), Some(10)));
    assert_eq!(env.ok(CREATE, body.clone()).await["id"], created["id"], "a retry is the same volume");
    let mut changed = body.clone();
    changed["sizeGigabytes"] = json!(20);
    env.expect_failure(&env.acme_admin, CREATE, changed, 409, "CONFLICT").await;

    env.wait_state("volumes", "volumeId", &id, "ready").await;
    let at_provider = provider_volumes(&env);
    assert_eq!(at_provider.len(), 1, "{at_provider:?}");
    assert_eq!(at_provider[0]["sizeGigabytes"], 10);
    assert_eq!(
        (at_provider[0]["region"].as_str(), at_provider[0]["filesystemType"].as_str()),
        (Some("nyc3"), Some("ext4"))
    );
    assert_eq!(env.ok(GET, json!({"tenantId": "acme", "volumeId": id})).await["description"], "data");
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["volumes"][0]["id"], created["id"]);

    // It grows, through the provider's resize action; it never shrinks.
    let growing = env.ok(UPDATE, json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 25})).await;
    assert_eq!((growing["state"].as_str(), growing["sizeGigabytes"].as_i64()), (Some("updating"), Some(25)));
    env.wait_state("volumes", "volumeId", &id, "ready").await;
    assert_eq!(provider_volumes(&env)[0]["sizeGigabytes"], 25);
    let shrink = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 5});
    let error = env.expect_failure(&env.acme_admin, UPDATE, shrink, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["sizeGigabytes"]);
    assert!(error["message"].as_str().unwrap().contains("only grows"), "{error}");

    // Attached to an instance: the provider's volume names its droplet, and so does ours.
    let web = ready_instance(&env, "web", "nyc3").await;
    let (instance_id, machine) = (web["id"].as_str().unwrap(), web["machineId"].as_str().unwrap());
    let attaching = env.ok(ATTACH, json!({"tenantId": "acme", "volumeId": id, "instanceId": instance_id})).await;
    assert_eq!((attaching["state"].as_str(), attaching["instanceId"].as_str()), (Some("updating"), Some(instance_id)));
    let attached = env.wait_state("volumes", "volumeId", &id, "ready").await;
    assert_eq!(attached["attachedMachineId"], machine, "{attached}");
    assert_eq!(provider_volumes(&env)[0]["dropletIds"], json!([machine.parse::<u64>().unwrap()]));
    assert_eq!(droplet(&env, machine)["volume_ids"], json!([provider_volumes(&env)[0]["id"]]));
    // The instance cannot go while the volume is on it.
    let error = env
        .expect_failure(
            &env.acme_admin,
            "/api/compute/instances/delete",
            json!({"tenantId": "acme", "instanceId": instance_id}),
            409,
            "INVALID_STATE",
        )
        .await;
    assert_eq!(
        (error["details"]["reason"].as_str(), error["details"]["volumes"].clone()),
        (Some("inUse"), json!([id]))
    );

    let detaching = env.ok(DETACH, json!({"tenantId": "acme", "volumeId": id})).await;
    assert_eq!((detaching["state"].as_str(), detaching["instanceId"].as_str()), (Some("updating"), Some("")));
    let detached = env.wait_state("volumes", "volumeId", &id, "ready").await;
    assert_eq!(detached["attachedMachineId"], "", "{detached}");
    assert_eq!(provider_volumes(&env)[0]["dropletIds"], json!([]));

    // Deleted while attached: detached first, then gone from the provider.
    env.ok(ATTACH, json!({"tenantId": "acme", "volumeId": id, "instanceId": instance_id})).await;
    env.wait_state("volumes", "volumeId", &id, "ready").await;
    let deleting = env.ok(DELETE, json!({"tenantId": "acme", "volumeId": id})).await;
    assert_eq!(deleting["state"], "deleting");
    env.wait_state("volumes", "volumeId", &id, "deleted").await;
    assert!(provider_volumes(&env).is_empty(), "{:?}", provider_volumes(&env));
    assert_eq!(droplet(&env, machine)["volume_ids"], json!([]));
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["volumes"], json!([]));
    let events = env.event_types(&id).await;
    assert_eq!(events.first().map(String::as_str), Some("volume.created"), "{events:?}");
    assert_eq!(events[events.len() - 2..], ["volume.deleting", "volume.deleted"], "{events:?}");
    assert_eq!(events.iter().filter(|e| *e == "volume.updated").count(), 4, "grow, attach, detach, attach: {events:?}");
}

async fn an_attach_names_an_instance_of_the_volumes_region(backend: Backend) {
    let env = super::setup(backend).start().await;
    let token = env.acme_admin.clone();
    let made = env.ok(CREATE, volume("data", "nyc3", 10)).await;
    let id = made["id"].as_str().unwrap();
    let elsewhere = env.ok("/api/compute/instances/create", instance("far", "ams3", "")).await;
    let attach = json!({"tenantId": "acme", "volumeId": id, "instanceId": elsewhere["id"]});
    let error = env.expect_failure(&token, ATTACH, attach, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["instanceId"]);
    assert!(error["message"].as_str().unwrap().contains("region"), "{error}");
    let near = env.ok("/api/compute/instances/create", instance("near", "nyc3", "")).await;
    let other = env.ok("/api/compute/instances/create", instance("other", "nyc3", "")).await;
    let attached = env.ok(ATTACH, json!({"tenantId": "acme", "volumeId": id, "instanceId": near["id"]})).await;
    assert_eq!(attached["instanceId"], near["id"]);
    // Attached again to the same instance: as it is; to another: refused until detached.
    let again = env.ok(ATTACH, json!({"tenantId": "acme", "volumeId": id, "instanceId": near["id"]})).await;
    assert_eq!(again["version"], attached["version"]);
    let elsewhere = json!({"tenantId": "acme", "volumeId": id, "instanceId": other["id"]});
    let error = env.expect_failure(&token, ATTACH, elsewhere, 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["instanceId"], near["id"]);
    // A deleted volume changes no more.
    env.ok(DELETE, json!({"tenantId": "acme", "volumeId": id})).await;
    let grow = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 20});
    env.expect_failure(&token, UPDATE, grow, 409, "INVALID_STATE").await;
}

crate::on_both_backends!(
    a_volume_grows_attaches_detaches_and_is_gone_once_deleted,
    an_attach_names_an_instance_of_the_volumes_region,
);
