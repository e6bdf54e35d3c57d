//! BMCs that flake: a BMC that stops answering (a refused connection, a 503, a 500) for longer
//! than one retry and less than the deadline, in each transient state, leaves the state running
//! with its problem saying what fails; when the BMC answers again the state ends in its success,
//! and its end event carries the outage (`bmcOutage`).

use std::time::Duration;

use fakecloud::FaultClass;
use serde_json::{Value, json};

use super::flow::{IMAGE, call, machine, metal_env, wait_for};
use crate::harness::{Env, poll};

/// Waits until the machine's passes failed twice in a row on its BMC (its problem says so),
/// then ends the fault `rule`: the BMC answers again.
async fn ride_out(env: &Env, pool: &str, node: &str, rule: u64) -> Value {
    let stuck = poll(Duration::from_secs(60), "two failed passes", || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        let attempts = machine["problem"]["attempts"].as_i64().unwrap_or(0);
        if attempts >= 2 { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await;
    assert!(env.cloud.clear_fault(rule));
    stuck
}

/// The last `metal.machine.<state>` event of machine `node`.
async fn last_event(env: &Env, pool: &str, node: &str, state: &str) -> Value {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    let wanted = format!("metal.machine.{state}");
    events.into_iter().rev().find(|e| e.event_type == wanted && e.data["nodeId"] == node).unwrap().data
}

#[tokio::test]
async fn a_bmc_down_for_a_while_in_every_transient_state_ends_in_its_success_with_the_outage_told() {
    let deadlines = json!({"enrolling": 120, "inspecting": 120, "commissioning": 120, "deploying": 120,
        "rescuing": 120, "exitingRescue": 120, "releasing": 120});
    let (env, pool) = metal_env(json!({"metal": {"deadlines": deadlines}})).await;
    let (system, enrolment) = machine(&env, &pool, "f1");
    let throttled = || FaultClass::Throttled { retry_after: Duration::from_secs(1) };
    let steps = [
        ("enroll", json!({}), "enrolling", "manageable", FaultClass::Unreachable),
        ("inspect", json!({}), "inspecting", "manageable", throttled()),
        ("commission", json!({}), "commissioning", "ready", FaultClass::Retryable),
        ("deploy", json!({"image": IMAGE}), "deploying", "deployed", FaultClass::Unreachable),
        ("rescue", json!({}), "rescuing", "rescue", FaultClass::Retryable),
        ("exitRescue", json!({"exit": true}), "exitingRescue", "deployed", throttled()),
        ("release", json!({}), "releasing", "ready", FaultClass::Unreachable),
    ];
    let mut node = String::new();
    for (verb, extra, transient, success, class) in steps {
        // Down before the state's first call.
        let rule = env.cloud.fail_account(&system, class);
        match verb {
            "enroll" => {
                node = env.ok("/api/compute/metal/enroll", enrolment.clone()).await["id"].as_str().unwrap().to_owned();
            }
            "exitRescue" => drop(call(&env, &pool, &node, "rescue", extra).await),
            _ => drop(call(&env, &pool, &node, verb, extra).await),
        }
        let stuck = ride_out(&env, &pool, &node, rule).await;
        assert_eq!(stuck["provisionState"], transient, "the state rides the outage: {stuck}");
        let message = stuck["problem"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "the problem says what fails: {stuck}");

        let done = wait_for(&env, &pool, &node, success).await;
        assert_eq!(done["previousState"], transient, "{done}");
        // The pass that ended the state records its success right after.
        poll(Duration::from_secs(10), "the problem gone once the BMC answers", || async {
            let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
            if machine["problem"].is_null() { Ok(()) } else { Err(machine.to_string()) }
        })
        .await;
        let event = last_event(&env, &pool, &node, success).await;
        assert_eq!(event["reason"], format!("{verb} completed"), "{event}");
        let told = &event["bmcOutage"];
        assert!(told["failedPasses"].as_i64() >= Some(2), "{transient}: {event}");
        assert!(!told["lastError"].as_str().unwrap_or_default().is_empty(), "{transient}: {event}");
        assert!(told["since"].is_string() && told["step"].is_string(), "{transient}: {event}");
    }
}
