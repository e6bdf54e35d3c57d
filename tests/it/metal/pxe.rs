//! An IPMI deploy end to end: the machine behind pyghmi's BMC (tests/python/ipmi_bmc.py) boots
//! from the network, fetches its iPXE script by its MAC address (read from the BMC's FRU at
//! inspection), boots the deploy's installer with the boot configuration URL the script carries,
//! and joins through the real bcd. The script answers only while the deploy runs and its token is
//! unused, and the same `NOT_FOUND` for every other MAC.

use serde_json::{Value, json};

use super::PASSWORD;
use super::flow::{IMAGE, call, metal_env, run, wait_for};
use crate::harness::{Env, bcd_binary};
use crate::metal_drivers::ipmi::start_bmc_as;

/// The MACs the fake machine's FRU lists (tests/python/ipmi_bmc.py).
const MACS: [&str; 2] = ["52:54:00:1b:c0:01", "52:54:00:1b:c0:02"];

/// `GET <server>/api/compute/metal/pxe/<mac>`: the status and the body.
async fn pxe(env: &Env, mac: &str) -> (u16, String) {
    let answer = reqwest::get(format!("{}/api/compute/metal/pxe/{mac}", env.server.endpoint)).await.unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

#[tokio::test]
async fn an_ipmi_machine_boots_its_deploy_from_the_network_and_joins_through_bcd() {
    let (env, pool) = metal_env(json!({})).await;
    let state = tempfile::tempdir().unwrap();
    let scripts = format!("{}/api/compute/metal/pxe", env.server.endpoint);
    let bcd = bcd_binary().to_str().unwrap().to_owned();
    let bmc = start_bmc_as(PASSWORD, &[&scripts, &bcd, state.path().to_str().unwrap()]);
    let enrolment = json!({"poolId": pool, "name": "ipmi-1", "idempotencyKey": "ipmi-1",
        "bmc": {"driver": "ipmi", "address": format!("127.0.0.1:{}", bmc.port), "username": "admin",
            "password": PASSWORD}});
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;

    let inspected = run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    let macs: Vec<&str> =
        inspected["inventory"]["nics"].as_array().unwrap().iter().map(|n| n["mac"].as_str().unwrap()).collect();
    assert_eq!(macs, MACS, "the MACs come from the FRU: {inspected}");
    let (status, not_deploying) = pxe(&env, MACS[0]).await;
    assert_eq!(status, 404, "no script before a deploy: {not_deploying}");

    // IPMI has no disk erase of its own (commissioning needs the erase image, which the
    // control plane does not boot yet): the machine is put in `ready` as a commission would.
    env.execute(format!("UPDATE metal_machines SET provision_state = 'ready' WHERE node_id = '{node}'")).await;

    call(&env, &pool, &node, "deploy", json!({"image": IMAGE})).await;
    let deployed = wait_for(&env, &pool, &node, "deployed").await;
    assert_eq!(deployed["powerState"], "on", "{deployed}");
    let said = bmc.said();
    assert!(said.iter().any(|line| line == "bootdev network"), "the deploy set a network boot: {said:?}");
    assert!(said.iter().any(|line| line == &format!("machine: pxe {}: got a script", MACS[0])), "{said:?}");
    assert!(said.iter().any(|line| line == "machine: the installer joins through bcd"), "{said:?}");

    let joined = env.ok("/api/compute/nodes/get", json!({"poolId": pool, "nodeId": node})).await;
    assert_eq!(joined["state"], "ready", "the machine's node joined through bcd: {joined}");
    let token =
        env.ok("/api/compute/joinTokens/get", json!({"poolId": pool, "joinTokenId": joined["joinTokenId"]})).await;
    assert_eq!((token["maxUses"].as_i64(), token["uses"].as_i64()), (Some(1), Some(1)), "one-use: {token}");

    // Its token used, the deploy's script answers no more, as no other MAC's ever did: the same
    // answer for each, so a guess learns nothing.
    let mut answers = Vec::new();
    for mac in [MACS[0], MACS[1], "52:54:00:ff:ff:ff", "52-54-00-1B-C0-01", "not-a-mac"] {
        answers.push(pxe(&env, mac).await);
    }
    let first: Value = serde_json::from_str(&answers[0].1).unwrap();
    assert_eq!(first["error"]["code"], "NOT_FOUND", "{first}");
    assert!(answers.iter().all(|answer| answer == &answers[0]), "{answers:?}");
}
