//! Redfish sessions against a BMC that keeps only four open, as real controllers do: twenty
//! machines behind one BMC converge together through one session, a session that expired is
//! made again, and the worker logs its sessions out when it stops.

use std::time::Duration;

use serde_json::json;

use super::flow::{call, machine, metal_env, wait_for};
use crate::harness::poll;

#[tokio::test]
async fn twenty_machines_behind_one_bmc_share_its_session_and_it_is_logged_out_at_shutdown() {
    let (mut env, pool) = metal_env(json!({"maxMachines": 20})).await;
    env.cloud.set_bmc_session_limits(4, Duration::from_secs(1800));
    let mut nodes = Vec::new();
    for i in 0..20 {
        let (_, enrolment) = machine(&env, &pool, &format!("s{i}"));
        nodes.push(env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned());
    }
    for node in &nodes {
        wait_for(&env, &pool, node, "manageable").await;
    }
    for node in &nodes {
        call(&env, &pool, node, "inspect", json!({})).await;
    }
    poll(Duration::from_secs(120), "every machine inspected", || async {
        let listed = env.ok("/api/compute/metal/list", json!({"poolId": pool})).await;
        let machines = listed["machines"].as_array().unwrap();
        let done = machines.iter().all(|m| m["provisionState"] == "manageable" && m["inventory"].is_object());
        if done && machines.len() == 20 { Ok(()) } else { Err(listed.to_string()) }
    })
    .await;
    let sessions = env.cloud.bmc_sessions();
    assert_eq!((sessions["made"].as_u64(), sessions["refused"].as_u64()), (Some(1), Some(0)), "{sessions}");
    assert_eq!(sessions["mostOpen"], 1, "one session for every machine behind the BMC: {sessions}");

    // A session the BMC let expire is made again, once.
    env.cloud.set_bmc_session_limits(4, Duration::from_millis(300));
    poll(Duration::from_secs(10), "the session expired", || async {
        let sessions = env.cloud.bmc_sessions();
        if sessions["open"] == 0 { Ok(()) } else { Err(sessions.to_string()) }
    })
    .await;
    env.cloud.set_bmc_session_limits(4, Duration::from_secs(1800));
    call(&env, &pool, &nodes[0], "inspect", json!({})).await;
    let inspected = poll(Duration::from_secs(30), "inspected again", || async {
        let filter = better_compute::store::EventFilter { subject: pool.clone(), limit: 1000, ..Default::default() };
        let events = env.store.event_list_after(&filter).await.unwrap();
        let again = events
            .iter()
            .filter(|e| e.data["nodeId"] == nodes[0].as_str() && e.event_type == "metal.machine.manageable");
        if again.count() == 3 { Ok(()) } else { Err(format!("{} events", events.len())) }
    });
    inspected.await;
    let sessions = env.cloud.bmc_sessions();
    assert_eq!((sessions["made"].as_u64(), sessions["open"].as_u64()), (Some(2), Some(1)), "{sessions}");

    env.stop_worker().await;
    let sessions = env.cloud.bmc_sessions();
    assert_eq!((sessions["open"].as_u64(), sessions["loggedOut"].as_u64()), (Some(0), Some(1)), "{sessions}");
}
