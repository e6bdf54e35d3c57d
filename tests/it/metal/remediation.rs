//! Machines that heal: a deployed machine whose node stops heartbeating is power cycled through
//! its BMC when the pool's remediation says so (its system boots again from the disk and its
//! bcd heartbeats as the same node); one the power cycle does not bring back is redeployed with
//! its image (the installer lays the system again and bcd rejoins with a new one-use token as
//! the same node). Each step is carried out once, with its event and reason.

use std::time::Duration;

use better_compute::store::{EventFilter, EventRow};
use serde_json::{Value, json};

use super::flow::{IMAGE, machine, metal_env_without_worker, run, wait_for};
use crate::harness::{Env, poll};

const LIMIT: Duration = Duration::from_secs(60);

async fn node(env: &Env, pool: &str, id: &str) -> Value {
    env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": id})).await
}

/// The pool's events whose type starts with `prefix`, oldest first.
async fn events(env: &Env, pool: &str, prefix: &str) -> Vec<EventRow> {
    let filter =
        EventFilter { subject: pool.to_owned(), type_prefix: prefix.into(), limit: 1000, ..Default::default() };
    env.store.event_list_after(&filter).await.unwrap()
}

/// Waits until the pool has `count` events of type `event_type`.
async fn events_counted(env: &Env, pool: &str, event_type: &str, count: usize) -> Vec<EventRow> {
    poll(LIMIT, &format!("{count} {event_type}"), || async {
        let found = events(env, pool, event_type).await;
        if found.len() >= count {
            return Ok(found);
        }
        let all: Vec<String> =
            events(env, pool, "").await.iter().map(|e| format!("{} {}", e.event_type, e.data["reason"])).collect();
        Err(format!("the pool's events: {all:#?}"))
    })
    .await
}

async fn heartbeating_again(env: &Env, pool: &str, id: &str) -> Value {
    poll(LIMIT, "the node ready again", || async {
        let got = node(env, pool, id).await;
        if got["state"] == "ready" && got["remediation"] == "" { Ok(got) } else { Err(got.to_string()) }
    })
    .await
}

#[tokio::test]
async fn a_hung_machine_is_power_cycled_and_one_that_stays_silent_is_redeployed() {
    let policy = json!({"remediation": {"unhealthyAfter": 30, "maxUnhealthy": 1}});
    let (mut env, pool) = metal_env_without_worker(policy).await;
    env.worker_config.node_liveness_interval = Duration::from_millis(100);
    env.start_worker();
    let (system, enrolment) = machine(&env, &pool, "m1");
    let id = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &id, "manageable").await;
    run(&env, &pool, &id, "inspect", json!({}), "manageable").await;
    run(&env, &pool, &id, "commission", json!({}), "ready").await;
    run(&env, &pool, &id, "deploy", json!({"image": IMAGE}), "deployed").await;
    let first_token = heartbeating_again(&env, &pool, &id).await["joinTokenId"].clone();
    let boots = |env: &Env| env.cloud.bmc_system(&system).unwrap()["boots"].as_array().unwrap().len();
    let booted = boots(&env);

    // Its system hangs: the node goes silent, its power cycle is requested and carried out, and
    // the machine, booted again from its disk, heartbeats as the same node.
    assert!(env.cloud.hang_bmc_system(&system));
    env.silence_node(&pool, &id).await;
    let cycled = events_counted(&env, &pool, "metal.machine.powerCycled", 1).await;
    let reason = cycled[0].data["reason"].as_str().unwrap();
    assert!(reason.contains("power cycled through its BMC (reset)"), "{reason}");
    let back = heartbeating_again(&env, &pool, &id).await;
    assert_eq!(back["joinTokenId"], first_token, "the same node, with the credential it had: {back}");
    let last_boot = env.cloud.bmc_system(&system).unwrap()["boots"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_boot["device"], "Hdd", "booted from its disk: {last_boot}");
    assert_eq!(boots(&env), booted + 1, "one reset, once");
    let steps = events(&env, &pool, "compute.node.remediation").await;
    let names: Vec<&str> = steps.iter().map(|e| e.data["step"].as_str().unwrap()).collect();
    assert_eq!(names, ["powerCycle"], "{steps:?}");

    // Its installed system breaks: the power cycle boots nothing that heartbeats, so, silent for
    // another unhealthyAfter, the machine is redeployed with its image and rejoins as the node.
    assert!(env.cloud.break_bmc_system(&system));
    env.silence_node(&pool, &id).await;
    events_counted(&env, &pool, "metal.machine.powerCycled", 2).await;
    events_counted(&env, &pool, "compute.node.remediation", 2).await;
    // Another unhealthyAfter passes (moved back 45 s) with no heartbeat since the power cycle.
    env.execute(format!(
        "UPDATE nodes SET last_heartbeat_at = last_heartbeat_at - 45000000, remediated_at = remediated_at - 45000000, \
         remediation_done_at = remediation_done_at - 45000000 WHERE id = '{id}'"
    ))
    .await;
    let redeploying = events_counted(&env, &pool, "metal.machine.deploying", 2).await;
    let reason = redeploying[1].data["reason"].as_str().unwrap();
    assert!(reason.contains("remediation") && reason.contains(IMAGE), "{reason}");
    let deployed = wait_for(&env, &pool, &id, "deployed").await;
    assert_eq!(deployed["image"], IMAGE, "{deployed}");
    let rejoined = heartbeating_again(&env, &pool, &id).await;
    assert_ne!(rejoined["joinTokenId"], first_token, "rejoined with the redeploy's token: {rejoined}");
    let steps = events(&env, &pool, "compute.node.remediation").await;
    let names: Vec<&str> = steps.iter().map(|e| e.data["step"].as_str().unwrap()).collect();
    assert_eq!(names, ["powerCycle", "powerCycle", "redeploy"], "{steps:?}");
    assert_eq!(events(&env, &pool, "metal.machine.powerCycled").await.len(), 2, "each power cycle once");
}
