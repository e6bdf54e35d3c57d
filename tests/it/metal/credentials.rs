//! Rotating a machine's BMC credentials: the new ones are checked against the BMC before the
//! old ones are dropped. Refused, they are dropped and the old ones keep working; taken, they
//! replace the old ones. Each outcome is an event, and no password is in either.

use std::time::Duration;

use serde_json::{Value, json};

use super::PASSWORD;
use super::flow::{machine, metal_env, run, wait_for};
use crate::harness::{Env, poll};

/// Waits for machine `node`'s `metal.machine.<change>` event number `nth` (from 1).
async fn event(env: &Env, pool: &str, node: &str, change: &str, nth: usize) -> Value {
    let wanted = format!("metal.machine.{change}");
    poll(Duration::from_secs(30), &wanted, || async {
        let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
        let events = env.store.event_list_after(&filter).await.unwrap();
        let found: Vec<Value> =
            events.into_iter().filter(|e| e.event_type == wanted && e.data["nodeId"] == node).map(|e| e.data).collect();
        found.get(nth - 1).cloned().ok_or_else(|| format!("{} so far", found.len()))
    })
    .await
}

#[tokio::test]
async fn new_bmc_credentials_replace_the_old_only_once_the_bmc_takes_them() {
    let (env, pool) = metal_env(json!({})).await;
    let (system, enrolment) = machine(&env, &pool, "c1");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;
    let by_node = json!({"poolId": pool, "nodeId": node});
    let with = |change: Value| {
        let mut body = by_node.clone();
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        body
    };

    // A password the BMC does not take: dropped, the old one still works.
    let wrong = "not-the-bmcs-Pa55";
    env.ok("/api/compute/metal/update", with(json!({"password": wrong}))).await;
    let refused = event(&env, &pool, &node, "credentialsRefused", 1).await;
    assert!(refused["reason"].as_str().unwrap().contains("the old ones stay in use"), "{refused}");
    let machine = env.ok("/api/compute/metal/get", by_node.clone()).await;
    assert!(machine["lastError"].as_str().unwrap().starts_with("credentials: "), "{machine}");
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    let inspected = env.ok("/api/compute/metal/get", by_node.clone()).await;
    assert!(inspected["inventory"].is_object(), "the old password works: {inspected}");

    // The operator sets new credentials at the BMC, then gives them: checked, then in use.
    let rotated = "rotated-Pa55-77c1";
    assert!(env.cloud.set_bmc_credentials(&system, "operator", rotated));
    env.ok("/api/compute/metal/update", with(json!({"username": "operator", "password": rotated}))).await;
    let taken = event(&env, &pool, &node, "credentialsRotated", 1).await;
    assert!(taken["reason"].as_str().unwrap().contains("the old ones are dropped"), "{taken}");
    let machine = env.ok("/api/compute/metal/get", by_node.clone()).await;
    assert_eq!(
        (machine["username"].as_str(), machine["lastError"].as_str()),
        (Some("operator"), Some("")),
        "{machine}"
    );
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;

    let filter = better_compute::store::EventFilter { subject: pool.clone(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    for password in [PASSWORD, wrong, rotated] {
        assert!(!format!("{events:?}").contains(password), "a password in the events");
        assert!(!machine.to_string().contains(password));
    }
}
