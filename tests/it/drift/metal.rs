//! A deployed machine powered off at its BMC: `correct` powers it on again; `report` leaves it
//! off and shows `powerState` drift until it is powered on at the BMC or the tenant moves the
//! machine (a release), whose workflow then runs as usual.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{no_drift, only_drift};
use crate::harness::{Env, System, passes_recorded, poll};

const IMAGE: &str = "https://images.example/node-2026.12.iso";
const LIMIT: Duration = Duration::from_secs(60);
const DRIFT: &str = "metal.machine.drift";

/// acme's metal pool with `drift` as its drift policy (the fake BMCs listen on loopback, which
/// the policy allows), a running worker, and a machine deployed in it: the environment, the
/// pool, the machine's node and its system at the fake BMC.
async fn deployed(drift: &str) -> (Env, String, String, String) {
    let mut env = System::on(Backend::Postgres).start().await;
    let pool = env.metal_pool(json!({"drift": drift})).await;
    env.start_worker();
    let (node, system) = env.enroll_at_fake_bmc(&pool, "m1").await;
    wait_machine(&env, &pool, &node, "manageable", |m| m["provisionState"] == "manageable").await;
    call(&env, &pool, &node, "inspect", json!({})).await;
    wait_machine(&env, &pool, &node, "inspected", |m| {
        m["provisionState"] == "manageable" && m["inventory"].is_object()
    })
    .await;
    call(&env, &pool, &node, "commission", json!({})).await;
    wait_machine(&env, &pool, &node, "ready", |m| m["provisionState"] == "ready").await;
    call(&env, &pool, &node, "deploy", json!({"image": IMAGE})).await;
    wait_machine(&env, &pool, &node, "deployed", |m| m["provisionState"] == "deployed").await;
    (env, pool, node, system)
}

async fn call(env: &Env, pool: &str, node: &str, method: &str, extra: Value) -> Value {
    let mut body = json!({"poolId": pool, "nodeId": node});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    env.ok(&format!("/api/compute/metal/{method}"), body).await
}

async fn wait_machine(env: &Env, pool: &str, node: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    poll(LIMIT, &format!("machine {node}: {what}"), || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        if check(&machine) { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await
}

/// The machine's drift events, oldest first.
async fn drift_events(env: &Env, pool: &str, node: &str) -> Vec<Value> {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    events.into_iter().filter(|e| e.event_type == DRIFT && e.data["nodeId"] == node).map(|e| e.data).collect()
}

fn bmc_power(env: &Env, system: &str) -> String {
    env.cloud.bmc_system(system).unwrap()["powerState"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployed_machine_powered_off_at_its_bmc_is_powered_on_under_correct() {
    let (env, pool, node, system) = deployed("correct").await;
    assert!(env.cloud.bmc_set_power(&system, false));

    let event = poll(LIMIT, "a drift event", || async {
        let events = drift_events(&env, &pool, &node).await;
        events.first().cloned().ok_or_else(|| format!("{events:?}"))
    })
    .await;
    assert_eq!(event["action"], "corrected", "{event}");
    assert_eq!(event["fields"], json!([{"field": "powerState", "applied": "on", "found": "off"}]));
    poll(LIMIT, "the machine on again", || async {
        let power = bmc_power(&env, &system);
        if power == "On" { Ok(()) } else { Err(power) }
    })
    .await;
    let machine =
        wait_machine(&env, &pool, &node, "on without drift", |m| m["powerState"] == "on" && no_drift(m)).await;
    assert_eq!(machine["provisionState"], "deployed");
    assert_eq!(drift_events(&env, &pool, &node).await.len(), 1, "corrected once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployed_machine_powered_off_at_its_bmc_is_reported_until_powered_on_or_released() {
    let (env, pool, node, system) = deployed("report").await;
    assert!(env.cloud.bmc_set_power(&system, false));

    let drifted = wait_machine(&env, &pool, &node, "drift shown", |m| !no_drift(m)).await;
    assert_eq!(only_drift(&drifted), ("powerState".to_owned(), json!("on"), json!("off"), "reported".to_owned()));
    assert_eq!((drifted["provisionState"].as_str(), drifted["powerState"].as_str()), (Some("deployed"), Some("off")));

    // Further looks leave it off and tell the drift no more.
    passes_recorded(&env.db.url, &node, 3).await;
    assert_eq!(bmc_power(&env, &system), "Off");
    let events = drift_events(&env, &pool, &node).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["action"], "reported");

    // Powered on at the BMC: no drift.
    assert!(env.cloud.bmc_set_power(&system, true));
    wait_machine(&env, &pool, &node, "drift gone", |m| m["powerState"] == "on" && no_drift(m)).await;

    // Off again, then the tenant releases it: the release runs as usual, no drift left.
    assert!(env.cloud.bmc_set_power(&system, false));
    wait_machine(&env, &pool, &node, "drift shown again", |m| !no_drift(m)).await;
    assert_eq!(drift_events(&env, &pool, &node).await.len(), 2, "a new drift is told");
    call(&env, &pool, &node, "release", json!({})).await;
    let released = wait_machine(&env, &pool, &node, "released", |m| m["provisionState"] == "ready").await;
    assert!(no_drift(&released), "{released}");
}
