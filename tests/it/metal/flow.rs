//! The metal reconciler against the fake cloud's Redfish BMC and its fake machines: a machine
//! goes through every verb (the deploy's machine boots the image, fetches its boot
//! configuration and joins through the real bcd code), a BMC that stops answering mid-deploy
//! ends in `deployFailed` naming the step, and a worker killed during `releasing` is resumed
//! by another that still erases the disks exactly once.

use std::time::Duration;

use better_compute::store::Backend;
use fakecloud::BmcSystemSpec;
use serde_json::{Value, json};

use super::PASSWORD;
use crate::harness::{DO_TOKEN, Env, System, fast_config, poll, reconcilers, worker};

pub(super) const IMAGE: &str = "https://images.example/node-2026.12.iso";
/// The rescue image the pool's policy names.
const RESCUE: &str = "https://images.example/rescue-2026.12.iso";

/// An environment with acme's metal pool (with `policy`, plus the loopback network allowed for
/// BMC addresses: the fake cloud's BMCs listen on 127.0.0.1) and a running worker.
pub(super) async fn metal_env(policy: Value) -> (Env, String) {
    let (mut env, pool) = metal_env_without_worker(policy).await;
    env.start_worker();
    (env, pool)
}

/// [`metal_env`] before its worker starts (`env.worker_config` may still change).
pub(super) async fn metal_env_without_worker(mut policy: Value) -> (Env, String) {
    let metal = policy.as_object_mut().unwrap().entry("metal").or_insert_with(|| json!({}));
    metal["bmcAllowedNetworks"] = json!(["127.0.0.0/8"]);
    let env = System::on(Backend::Postgres).start().await;
    let account = env
        .server
        .admin_ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                "regions": ["nyc3"]}),
        )
        .await;
    let pool = env
        .server
        .admin_ok(
            "/api/platform/pools/create",
            json!({"accountId": account["id"], "name": "metal", "billingMode": "none", "policy": policy}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (env, pool)
}

/// A fake machine: its system id on the fake BMC, and the enrolment of it.
pub(super) fn machine(env: &Env, pool: &str, name: &str) -> (String, Value) {
    let path = env.cloud.add_bmc_system(BmcSystemSpec {
        name: name.to_owned(),
        username: "admin".to_owned(),
        password: PASSWORD.to_owned(),
    });
    let system = path.rsplit('/').next().unwrap().to_owned();
    let enrolment = json!({"poolId": pool, "name": name, "idempotencyKey": name, "labels": {"rack": "r7"},
        "bmc": {"driver": "redfish", "address": format!("{}{path}", env.cloud.https_url()), "username": "admin",
            "password": PASSWORD, "caCertificate": env.cloud.ca_pem()}});
    (system, enrolment)
}

/// Calls `metal/<method>` on the machine as acme's admin.
pub(super) async fn call(env: &Env, pool: &str, node: &str, method: &str, extra: Value) -> Value {
    let mut body = json!({"poolId": pool, "nodeId": node});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    env.ok(&format!("/api/compute/metal/{method}"), body).await
}

/// Polls the machine until it is in `state`.
pub(super) async fn wait_for(env: &Env, pool: &str, node: &str, state: &str) -> Value {
    poll(Duration::from_secs(60), &format!("machine {node} {state}"), || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        if machine["provisionState"] == state { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await
}

/// Moves the machine by `method` and waits for `state`.
pub(super) async fn run(env: &Env, pool: &str, node: &str, method: &str, extra: Value, state: &str) -> Value {
    call(env, pool, node, method, extra).await;
    wait_for(env, pool, node, state).await
}

pub(super) fn erased(env: &Env, system: &str) -> Value {
    env.cloud.bmc_system(system).unwrap()["erased"].clone()
}

/// The machine's events, as (type, previous state, reason).
async fn events(env: &Env, pool: &str, node: &str) -> Vec<(String, String, String)> {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.starts_with("metal.machine.") && e.data["nodeId"] == node)
        .map(|e| {
            let text = |key: &str| e.data[key].as_str().unwrap_or_default().to_owned();
            (e.event_type.clone(), text("previousState"), text("reason"))
        })
        .collect()
}

#[tokio::test]
async fn a_machine_goes_through_every_verb_and_its_deploy_joins_through_bcd() {
    let (env, pool) = metal_env(json!({"metal": {"rescueImage": RESCUE}})).await;
    let (system, enrolment) = machine(&env, &pool, "m1");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();

    let managed = wait_for(&env, &pool, &node, "manageable").await;
    assert_eq!(managed["powerState"], "off", "{managed}");
    let inspected = run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    let inventory = &inspected["inventory"];
    assert_eq!((inventory["cpus"].as_i64(), inventory["memoryMib"].as_i64()), (Some(8), Some(32768)), "{inspected}");
    assert_eq!(inventory["nics"].as_array().unwrap().len(), 2, "{inventory}");
    assert_eq!(inventory["disks"].as_array().unwrap().len(), 3, "{inventory}");
    assert!(inventory["serial"].as_str().unwrap().starts_with("FAKE"), "{inventory}");

    run(&env, &pool, &node, "commission", json!({}), "ready").await;
    assert_eq!(erased(&env, &system), json!({"disk0": 1, "disk1": 1, "disk2": 1}), "commissioning erases once");

    let deployed = run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
    assert_eq!((deployed["image"].as_str(), deployed["powerState"].as_str()), (Some(IMAGE), Some("on")));
    let bmc = env.cloud.bmc_system(&system).unwrap();
    let boot = bmc["boots"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((boot["device"].as_str(), boot["image"].as_str()), (Some("Cd"), Some(IMAGE)), "{bmc}");
    let config_url = boot["config"].as_str().expect("the deploy booted with its boot configuration").to_owned();
    // The machine's node is the enrolled one, joined through bcd with the deploy's token.
    let joined = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!((joined["state"].as_str(), joined["hostname"].as_str()), (Some("ready"), Some("m1")), "{joined}");
    assert!(!joined["bcdVersion"].as_str().unwrap_or_default().is_empty(), "{joined}");
    let token =
        env.ok("/api/compute/joinTokens/get", json!({"poolId": pool, "joinTokenId": joined["joinTokenId"]})).await;
    assert_eq!((token["maxUses"].as_i64(), token["uses"].as_i64()), (Some(1), Some(1)), "one-use: {token}");
    // The configuration answered once; its token is used, so the URL answers no more.
    let answered = reqwest::get(&config_url).await.unwrap();
    assert_eq!(answered.status(), 404, "{config_url} after the join");
    let body = answered.text().await.unwrap();
    assert!(!body.contains("bcjt_"), "{body}");

    let rescued = run(&env, &pool, &node, "rescue", json!({}), "rescue").await;
    let in_rescue = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!(rescued["previousState"], "rescuing");
    let bmc = env.cloud.bmc_system(&system).unwrap();
    let boot = bmc["boots"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(boot["device"], "Cd", "{bmc}");
    assert_eq!(boot["image"], RESCUE, "the pool's rescue image: {bmc}");
    let back = run(&env, &pool, &node, "rescue", json!({"exit": true}), "deployed").await;
    assert_eq!(back["previousState"], "exitingRescue");
    let bmc = env.cloud.bmc_system(&system).unwrap();
    assert_eq!(bmc["boots"].as_array().unwrap().last().unwrap()["device"], "Hdd", "back on its disk: {bmc}");
    // The installed system's bcd runs again as the same node.
    poll(Duration::from_secs(30), "the node heartbeats after rescue", || async {
        let now = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
        let again = now["lastHeartbeatAt"] != in_rescue["lastHeartbeatAt"];
        if now["state"] == "ready" && again { Ok(()) } else { Err(now.to_string()) }
    })
    .await;

    run(&env, &pool, &node, "release", json!({}), "ready").await;
    assert_eq!(erased(&env, &system), json!({"disk0": 2, "disk1": 2, "disk2": 2}), "release erases, once");
    let bmc = env.cloud.bmc_system(&system).unwrap();
    assert_eq!(bmc["media"]["inserted"], false, "{bmc}");
    assert_eq!(bmc["configMedia"]["inserted"], false, "{bmc}");
    assert_eq!(bmc["bootOverride"]["enabled"], "Disabled", "{bmc}");
    let left = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!(left["state"], "enrolled", "released, the node leaves the pool: {left}");

    let retired = run(&env, &pool, &node, "retire", json!({}), "retired").await;
    assert_eq!(retired["credentialsSet"], false, "{retired}");

    let seen = events(&env, &pool, &node).await;
    let types: Vec<&str> = seen.iter().map(|(t, _, _)| t.trim_start_matches("metal.machine.")).collect();
    let expected = [
        "enrolled",
        "manageable",
        "inspecting",
        "manageable",
        "commissioning",
        "erased",
        "ready",
        "deploying",
        "deployed",
        "rescuing",
        "rescue",
        "exitingRescue",
        "deployed",
        "releasing",
        "erased",
        "ready",
        "retiring",
        "retired",
    ];
    assert_eq!(types, expected, "{seen:?}");
    for (event, previous, reason) in &seen[1..] {
        assert!(!previous.is_empty() && !reason.is_empty(), "{event} names where it came from and why: {seen:?}");
    }
    assert!(seen.iter().any(|(t, _, r)| t == "metal.machine.deployed" && r == "deploy completed"), "{seen:?}");
}

#[tokio::test]
async fn a_bmc_that_stops_answering_mid_deploy_fails_the_deploy_naming_the_step() {
    let (env, pool) = metal_env(json!({"metal": {"deadlines": {"deploying": 4}}})).await;
    let (system, enrolment) = machine(&env, &pool, "m2");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    run(&env, &pool, &node, "commission", json!({}), "ready").await;

    env.cloud.set_bmc_unresponsive(&system, true);
    call(&env, &pool, &node, "deploy", json!({"image": IMAGE})).await;
    let failed = wait_for(&env, &pool, &node, "deployFailed").await;
    let error = failed["lastError"].as_str().unwrap();
    assert!(error.contains("deploy timed out at step powerOff"), "{error}");
    assert_eq!(failed["previousState"], "deploying");
    let seen = events(&env, &pool, &node).await;
    let (_, previous, reason) = seen.last().unwrap();
    assert_eq!((previous.as_str(), reason.as_str()), ("deploying", error), "{seen:?}");

    // Answering again, the machine deploys from where it failed.
    env.cloud.set_bmc_unresponsive(&system, false);
    run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
}

#[tokio::test]
async fn a_worker_killed_while_releasing_is_resumed_and_the_disks_are_erased_once() {
    let (mut env, pool) = metal_env(json!({})).await;
    let (system, enrolment) = machine(&env, &pool, "m3");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    run(&env, &pool, &node, "commission", json!({}), "ready").await;
    run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
    assert_eq!(erased(&env, &system), json!({"disk0": 1, "disk1": 1, "disk2": 1}));

    // The worker runs the release into a BMC that holds its calls, and is killed there: no
    // graceful stop, its lease runs out.
    env.stop_worker().await;
    let killed =
        tokio::spawn(worker(&env.store, fast_config(), reconcilers(env.resources(), None)).run(std::future::pending()));
    env.cloud.set_bmc_unresponsive(&system, true);
    call(&env, &pool, &node, "release", json!({})).await;
    poll(Duration::from_secs(20), "the release held by the BMC", || async {
        let bmc = env.cloud.bmc_system(&system).unwrap();
        if bmc["heldRequests"].as_u64() > Some(0) { Ok(()) } else { Err(bmc.to_string()) }
    })
    .await;
    killed.abort();
    assert_eq!(wait_for(&env, &pool, &node, "releasing").await["provisionState"], "releasing");
    env.cloud.set_bmc_unresponsive(&system, false);

    env.start_worker();
    wait_for(&env, &pool, &node, "ready").await;
    assert_eq!(erased(&env, &system), json!({"disk0": 2, "disk1": 2, "disk2": 2}), "the release erased exactly once");
}
