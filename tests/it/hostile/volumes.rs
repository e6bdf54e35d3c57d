//! Volumes against a hostile caller: another tenant's instance cannot be attached (it answers
//! as one that does not exist, word for word), another tenant's volume cannot be read or
//! changed, a viewer changes nothing, and a size out of bounds is refused naming
//! `sizeGigabytes` on create and on update.

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::violated_fields;
use crate::vps::DO_POOL;

/// A volume request of `tenant` on the DigitalOcean pool.
fn volume(tenant: &str, name: &str, size: Value) -> Value {
    json!({"tenantId": tenant, "poolId": DO_POOL, "name": name, "region": "nyc3", "sizeGigabytes": size,
           "idempotencyKey": name})
}

/// An instance request of `tenant` in nyc3.
fn instance(tenant: &str, name: &str) -> Value {
    json!({"tenantId": tenant, "poolId": DO_POOL, "name": name, "region": "nyc3", "size": "s-1vcpu-1gb",
           "image": "ubuntu-24-04-x64", "idempotencyKey": name})
}

async fn no_tenant_reaches_anothers_volume_or_instance_and_sizes_are_bounded(backend: Backend) {
    let env = crate::vps::setup(backend).start().await;
    let (acme, globex, viewer) = (env.acme_admin.clone(), env.globex_admin.clone(), env.acme_viewer.clone());
    let mine = env.ok("/api/compute/volumes/create", volume("acme", "data", json!(10))).await;
    let id = mine["id"].as_str().unwrap();
    let theirs = env.ok_as(&globex, "/api/compute/instances/create", instance("globex", "theirs")).await;

    // Globex's instance answers as an id that does not exist, word for word.
    let attach = |instance: &Value| json!({"tenantId": "acme", "volumeId": id, "instanceId": instance});
    let path = "/api/compute/volumes/attach";
    let foreign = env.expect_failure(&acme, path, attach(&theirs["id"]), 404, "NOT_FOUND").await;
    let unknown = "inst_0000000000000000000000zzzz";
    let missing = env.expect_failure(&acme, path, attach(&json!(unknown)), 404, "NOT_FOUND").await;
    assert_eq!(
        foreign["message"].as_str().unwrap().replace(theirs["id"].as_str().unwrap(), "ID"),
        missing["message"].as_str().unwrap().replace(unknown, "ID")
    );

    // Globex neither reads nor changes acme's volume, through its tenant or acme's.
    let own = [("sizeGigabytes", json!(20)), ("instanceId", theirs["id"].clone())];
    for (path, field) in [("get", None), ("update", Some(0)), ("attach", Some(1)), ("detach", None), ("delete", None)] {
        let path = format!("/api/compute/volumes/{path}");
        let mut body = json!({"tenantId": "globex", "volumeId": id});
        if let Some((name, value)) = field.map(|i| own[i].clone()) {
            body[name] = value;
        }
        env.expect_failure(&globex, &path, body.clone(), 404, "NOT_FOUND").await;
        body["tenantId"] = json!("acme");
        env.expect_failure(&globex, &path, body, 403, "ACCESS_DENIED").await;
    }

    // A viewer reads, and changes nothing.
    assert_eq!(
        env.ok_as(&viewer, "/api/compute/volumes/get", json!({"tenantId": "acme", "volumeId": id})).await["id"],
        id
    );
    env.expect_failure(&viewer, "/api/compute/volumes/create", volume("acme", "peek", json!(10)), 403, "ACCESS_DENIED")
        .await;
    let grow = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 20});
    env.expect_failure(&viewer, "/api/compute/volumes/update", grow, 403, "ACCESS_DENIED").await;

    // Sizes out of bounds, of the wrong type, or smaller than the volume's name their field.
    for size in
        [json!(0), json!(-1), json!(16385), json!(2147483648_i64), json!(-2147483649_i64), json!("ten"), json!(1.5)]
    {
        let error = env
            .expect_failure(
                &acme,
                "/api/compute/volumes/create",
                volume("acme", "bad", size.clone()),
                400,
                "INVALID_INPUT",
            )
            .await;
        assert_eq!(violated_fields(&error["details"]), ["sizeGigabytes"], "{size}: {error}");
        let update = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": size});
        let error = env.expect_failure(&acme, "/api/compute/volumes/update", update, 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), ["sizeGigabytes"], "{size}: {error}");
    }
    let shrink = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 9});
    let error = env.expect_failure(&acme, "/api/compute/volumes/update", shrink, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["sizeGigabytes"]);
    let unchanged = env.ok("/api/compute/volumes/get", json!({"tenantId": "acme", "volumeId": id})).await;
    assert_eq!(
        (unchanged["sizeGigabytes"].as_i64(), unchanged["version"].clone()),
        (Some(10), mine["version"].clone())
    );
}

crate::on_both_backends!(no_tenant_reaches_anothers_volume_or_instance_and_sizes_are_bounded);
