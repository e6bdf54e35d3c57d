//! Plans against reality for load balancers: each part an update changes, alone, is planned and
//! then made, and so is the delete; what the plan said (its effect and the DigitalOcean load
//! balancer it named) must be what the fake DigitalOcean then recorded: updated in place (its
//! `updates` moved, same id), left as it was, or gone. Targets that reach the same machines
//! as before ask nothing of the provider, and the plan says so.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{CREATE, Env, POOL, REGION, regional};
use crate::harness::{Reality, assert_plan_was_reality, poll};

const PLAN: &str = "/api/compute/loadBalancers/plan";
const UPDATE: &str = "/api/compute/loadBalancers/update";
const DELETE: &str = "/api/compute/loadBalancers/delete";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planned_load_balancer_change_is_what_digitalocean_then_does() {
    let mut env = super::start(Backend::Postgres).await;
    env.start_worker();
    let first = env.instance("acme", POOL, REGION, None).await;
    let second = env.instance("acme", POOL, REGION, None).await;
    let created = env.ok(CREATE, regional("planned", json!({"pool": true}))).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let name = env.wait_load_balancer_state("acme", &id, "ready").await["providerName"].as_str().unwrap().to_owned();
    let cases = [
        (
            "forwarding",
            json!({"forwarding": [
                {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
                {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "https", "targetPort": 8443,
                 "tlsPassthrough": true},
            ]}),
            "inPlace",
        ),
        ("healthCheck", json!({"healthCheck": {"protocol": "tcp", "port": 8080}}), "inPlace"),
        ("stickySessions", json!({"stickySessions": {"cookieName": "BC_LB", "ttlSeconds": 600}}), "inPlace"),
        ("sourceRanges", json!({"sourceRanges": {"deny": ["198.51.100.128/25"]}}), "inPlace"),
        ("redirectHttpToHttps", json!({"redirectHttpToHttps": true}), "inPlace"),
        ("targets: one of the two machines", json!({"targets": {"instanceIds": [first.id]}}), "inPlace"),
        ("targets: the pool again", json!({"targets": {"pool": true}}), "inPlace"),
        (
            "targets: the same machines named one by one",
            json!({"targets": {"instanceIds": [first.id, second.id]}}),
            "none",
        ),
    ];
    for (what, change, expected) in cases {
        let mut body = json!({"tenantId": "acme", "loadBalancerId": id});
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        let plan = planned_then_made(&env, &id, &name, what, "update", body).await;
        assert_eq!(plan["effect"], expected, "{what}: {plan}");
    }
    let plan =
        planned_then_made(&env, &id, &name, "the delete", "delete", json!({"tenantId": "acme", "loadBalancerId": id}))
            .await;
    assert_eq!(plan["effect"], "delete", "{plan}");
}

/// Plans `call` of `body`, makes it, waits until the reconciler is done with it, and checks the
/// plan against what DigitalOcean did; returns the plan.
async fn planned_then_made(env: &Env, id: &str, name: &str, what: &str, call: &str, body: Value) -> Value {
    let before = env.fake_load_balancer(name).expect("the load balancer at DigitalOcean");
    let plan = env.ok(PLAN, json!({ call: body.clone() })).await;
    env.ok(if call == "delete" { DELETE } else { UPDATE }, body).await;
    if call == "delete" {
        poll(std::time::Duration::from_secs(30), "gone at DigitalOcean", || async {
            match env.fake_load_balancer(name) {
                None => Ok(()),
                Some(found) => Err(found.to_string()),
            }
        })
        .await;
    } else {
        env.wait_load_balancer_state("acme", id, "ready").await;
    }
    let after = env.fake_load_balancer(name);
    let updates = |lb: &Value| lb["updates"].as_u64().unwrap_or_default();
    let updated = after.as_ref().is_some_and(|after| updates(after) > updates(&before));
    assert_plan_was_reality(
        what,
        &plan,
        &Reality::digitalocean("load balancer", name, &before, after.as_ref(), updated),
    );
    plan
}
