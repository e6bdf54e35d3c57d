//! Plans against reality for volumes, networks, instances and certificates: each updatable
//! field, alone, is planned and then made, and so is each delete; what the plan said (its effect
//! and the DigitalOcean objects it named) must be what the fake DigitalOcean then recorded (the
//! object kept, its actions, or the object gone).

use std::time::Duration;

use better_compute::reconcile::vps::provider_name;
use better_compute::store::Backend;
use serde_json::{Value, json};

use super::certificates::lets_encrypt;
use super::volumes::{ready_instance, volume};
use super::{Env, do_network, ready_network};
use crate::harness::{Reality, assert_plan_was_reality, poll};

/// The fake DigitalOcean's object of `collection` named (or, a droplet, tagged) `name`, `None`
/// once it is gone.
fn at_digitalocean(env: &Env, collection: &str, name: &str) -> Option<Value> {
    let all = env.inspect()["digitalocean"][collection].as_array().cloned().unwrap_or_default();
    let tagged = |o: &Value| o["tags"].as_array().is_some_and(|tags| tags.iter().any(|t| t == name));
    all.into_iter().find(|o| o["name"] == name || tagged(o))
}

/// Plans `call` (`update` or `delete`) of `body` on `/api/compute/<resource>`, makes it and
/// waits until the resource is `ready` again (an update) or gone at the provider (a delete);
/// returns the plan and the object as DigitalOcean had it before and has it after.
async fn planned_then_made(
    env: &Env,
    (resource, id_field): (&str, &str),
    (collection, name): (&str, &str),
    call: &str,
    body: Value,
) -> (Value, Value, Option<Value>) {
    let before = at_digitalocean(env, collection, name).unwrap_or_else(|| panic!("{collection} {name}"));
    let plan = env.ok(&format!("/api/compute/{resource}/plan"), json!({ call: body.clone() })).await;
    env.ok(&format!("/api/compute/{resource}/{call}"), body.clone()).await;
    if call == "delete" {
        poll(Duration::from_secs(30), "gone at DigitalOcean", || async {
            match at_digitalocean(env, collection, name) {
                None => Ok(()),
                Some(found) => Err(found.to_string()),
            }
        })
        .await;
    } else {
        env.wait_state(resource, id_field, body[id_field].as_str().unwrap(), "ready").await;
    }
    (plan, before, at_digitalocean(env, collection, name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planned_volume_network_instance_and_certificate_change_is_what_digitalocean_then_does() {
    let env = super::start(Backend::Postgres).await;
    let created = env.ok("/api/compute/volumes/create", volume("planned", "nyc3", 10)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_state("volumes", "volumeId", &id, "ready").await;
    let name = provider_name("bc-v", &id);
    let actions = |object: &Value| object["actions"].as_array().map_or(0, Vec::len);
    let volume_cases = [
        ("sizeGigabytes", json!({"sizeGigabytes": 20}), "inPlace"),
        ("description", json!({"description": "planned"}), "none"),
    ];
    for (what, change, expected) in volume_cases {
        let mut body = json!({"tenantId": "acme", "volumeId": id});
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        let (plan, before, after) =
            planned_then_made(&env, ("volumes", "volumeId"), ("volumes", &name), "update", body).await;
        let acted = after.as_ref().is_some_and(|after| actions(after) > actions(&before));
        assert_plan_was_reality(what, &plan, &Reality::digitalocean("volume", &name, &before, after.as_ref(), acted));
        assert_eq!(plan["effect"], expected, "{what}: {plan}");
    }
    let body = json!({"tenantId": "acme", "volumeId": id});
    let (plan, before, after) =
        planned_then_made(&env, ("volumes", "volumeId"), ("volumes", &name), "delete", body).await;
    assert_plan_was_reality(
        "a volume's delete",
        &plan,
        &Reality::digitalocean("volume", &name, &before, after.as_ref(), false),
    );

    // A network's description is its own; its delete removes each subnet's VPC.
    let network = ready_network(&env, do_network("planned", &[("web", "nyc3", "10.40.0.0/24")])).await;
    let network_id = network["id"].as_str().unwrap().to_owned();
    let subnet = provider_name("bc-s", network["subnets"][0]["id"].as_str().unwrap());
    let body = json!({"tenantId": "acme", "networkId": network_id, "description": "planned"});
    let (plan, before, after) =
        planned_then_made(&env, ("networks", "networkId"), ("vpcs", &subnet), "update", body).await;
    assert_plan_was_reality(
        "a network's description",
        &plan,
        &Reality::digitalocean("vpc", &subnet, &before, after.as_ref(), false),
    );
    assert_eq!(plan["effect"], "none", "{plan}");

    // An instance's delete removes its droplet; a certificate's, the provider's certificate.
    let instance = ready_instance(&env, "planned", "nyc3").await;
    let instance_id = instance["id"].as_str().unwrap().to_owned();
    let droplet = provider_name("bc-i", &instance_id);
    let body = json!({"tenantId": "acme", "instanceId": instance_id});
    let (plan, before, after) =
        planned_then_made(&env, ("instances", "instanceId"), ("droplets", &droplet), "delete", body).await;
    assert_plan_was_reality(
        "an instance's delete",
        &plan,
        &Reality::digitalocean("droplet", &droplet, &before, after.as_ref(), false),
    );

    let created = env.ok("/api/compute/certificates/create", lets_encrypt("planned", &["planned.example.com"])).await;
    let certificate_id = created["id"].as_str().unwrap().to_owned();
    env.wait_state("certificates", "certificateId", &certificate_id, "ready").await;
    let certificate = provider_name("bc-c", &certificate_id);
    let body = json!({"tenantId": "acme", "certificateId": certificate_id});
    let (plan, before, after) =
        planned_then_made(&env, ("certificates", "certificateId"), ("certificates", &certificate), "delete", body)
            .await;
    assert_plan_was_reality(
        "a certificate's delete",
        &plan,
        &Reality::digitalocean("certificate", &certificate, &before, after.as_ref(), false),
    );

    // The network's delete last: each subnet's VPC goes.
    let body = json!({"tenantId": "acme", "networkId": network_id});
    let (plan, before, after) =
        planned_then_made(&env, ("networks", "networkId"), ("vpcs", &subnet), "delete", body).await;
    assert_plan_was_reality(
        "a network's delete",
        &plan,
        &Reality::digitalocean("vpc", &subnet, &before, after.as_ref(), false),
    );
}
