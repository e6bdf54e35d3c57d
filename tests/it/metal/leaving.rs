//! A machine leaves the control plane's hands powered off: retiring or deleting a machine that
//! is on powers it off first and says so in its event, and a BMC that cannot be reached at
//! delete leaves the machine `deleting` with its problem, never silently removed.

use std::time::Duration;

use fakecloud::FaultClass;
use serde_json::{Value, json};

use super::flow::{call, machine, metal_env, wait_for};
use crate::harness::{Env, poll};

/// The last `metal.machine.<change>` event of machine `node`.
async fn last_event(env: &Env, pool: &str, node: &str, change: &str) -> Value {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    let wanted = format!("metal.machine.{change}");
    events.into_iter().rev().find(|e| e.event_type == wanted && e.data["nodeId"] == node).unwrap().data
}

/// A manageable machine that someone powered on at its BMC: its node and system.
async fn powered_on(env: &Env, pool: &str, name: &str) -> (String, String) {
    let (system, enrolment) = machine(env, pool, name);
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(env, pool, &node, "manageable").await;
    assert!(env.cloud.bmc_set_power(&system, true));
    (node, system)
}

fn power(env: &Env, system: &str) -> String {
    env.cloud.bmc_system(system).unwrap()["powerState"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn retiring_a_powered_on_machine_powers_it_off_first_and_says_so() {
    let (env, pool) = metal_env(json!({})).await;
    let (node, system) = powered_on(&env, &pool, "l1").await;
    let retiring = call(&env, &pool, &node, "retire", json!({})).await;
    assert_eq!(retiring["provisionState"], "retiring", "{retiring}");
    assert_eq!(retiring["credentialsSet"], true, "kept until the machine is off: {retiring}");
    let retired = wait_for(&env, &pool, &node, "retired").await;
    assert_eq!(
        (retired["credentialsSet"].as_bool(), retired["previousState"].as_str()),
        (Some(false), Some("retiring"))
    );
    assert_eq!(power(&env, &system), "Off");
    let event = last_event(&env, &pool, &node, "retired").await;
    assert_eq!(event["reason"], "retire completed: the machine was on and was powered off first", "{event}");
}

#[tokio::test]
async fn a_delete_whose_bmc_cannot_be_reached_stays_deleting_with_its_problem_until_it_powers_off() {
    let (env, pool) = metal_env(json!({})).await;
    let (node, system) = powered_on(&env, &pool, "l2").await;
    let rule = env.cloud.fail_account(&system, FaultClass::Unreachable);
    let deleting = call(&env, &pool, &node, "delete", json!({})).await;
    assert_eq!((deleting["provisionState"].as_str(), deleting["deletedAt"].is_null()), (Some("deleting"), true));
    let stuck = poll(Duration::from_secs(60), "the delete stuck on its BMC", || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        if machine["problem"]["attempts"].as_i64() >= Some(3) { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await;
    assert_eq!((stuck["provisionState"].as_str(), stuck["deletedAt"].is_null()), (Some("deleting"), true), "{stuck}");
    assert!(stuck["problem"]["message"].as_str().unwrap().contains("powerOff"), "names the step: {stuck}");
    let listed = env.ok("/api/compute/metal/list", json!({"poolId": pool})).await;
    assert_eq!(listed["machines"].as_array().unwrap().len(), 1, "not silently removed: {listed}");
    assert_eq!(power(&env, &system), "On");

    assert!(env.cloud.clear_fault(rule));
    let deleted = poll(Duration::from_secs(60), "the machine deleted", || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        if machine["deletedAt"].is_string() { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await;
    assert_eq!(deleted["credentialsSet"], false, "{deleted}");
    assert_eq!(power(&env, &system), "Off", "powered off before it was deleted");
    let event = last_event(&env, &pool, &node, "deleted").await;
    assert_eq!(event["reason"], "delete completed: the machine was on and was powered off first", "{event}");
    let node_view = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!(node_view["state"], "deleted", "{node_view}");
}
