//! Erase you can prove: release and commission erase every disk of a fake machine by the best
//! method its drive offers, read each back, and say so per disk in `metal.machine.erased`; what a
//! tenant wrote is gone before the next tenant's deploy, and a disk that cannot be erased fails
//! the state naming it instead of making the machine `ready` with data on it.

use serde_json::{Value, json};

use super::flow::{IMAGE, call, machine, metal_env, run, wait_for};
use crate::harness::Env;

/// What a tenant writes on every disk of its machine.
const MARKER: &str = "tenant-a: customer records 2026-12";

/// The pool's `metal.machine.erased` events of machine `node`, oldest first.
async fn erasures(env: &Env, pool: &str, node: &str) -> Vec<Value> {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type == "metal.machine.erased" && e.data["nodeId"] == node)
        .map(|e| e.data)
        .collect()
}

/// What each disk of `system` holds, by drive.
fn contents(env: &Env, system: &str) -> Vec<(String, String)> {
    let bmc = env.cloud.bmc_system(system).unwrap();
    let disks = bmc["disks"].as_object().unwrap();
    disks.iter().map(|(id, disk)| (id.clone(), disk["content"].as_str().unwrap_or_default().to_owned())).collect()
}

#[tokio::test]
async fn a_released_machine_holds_nothing_of_its_tenant_when_it_is_deployed_again() {
    let (env, pool) = metal_env(json!({})).await;
    let (system, enrolment) = machine(&env, &pool, "e1");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    run(&env, &pool, &node, "commission", json!({}), "ready").await;
    let commissioned = erasures(&env, &pool, &node).await;
    assert_eq!(commissioned.len(), 1, "commissioning erases once: {commissioned:?}");
    assert_eq!(commissioned[0]["provisionState"], "commissioning");

    run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
    let installed = contents(&env, &system);
    assert!(installed[0].1.contains("node image"), "the deploy installed its system on disk0: {installed:?}");
    for drive in ["disk0", "disk1", "disk2"] {
        assert!(env.cloud.write_bmc_disk(&system, drive, MARKER), "{drive}");
    }

    run(&env, &pool, &node, "release", json!({}), "ready").await;
    let released = erasures(&env, &pool, &node).await;
    assert_eq!(released.len(), 2, "{released:?}");
    let bmc = env.cloud.bmc_system(&system).unwrap();
    let disks = released[1]["disks"].as_array().unwrap();
    let report: Vec<(&str, &str, bool)> = disks
        .iter()
        .map(|d| (d["serial"].as_str().unwrap(), d["method"].as_str().unwrap(), d["verified"].as_bool().unwrap()))
        .collect();
    let serial = |i: u32| format!("{}-D{i}", bmc_serial(&bmc));
    let (s0, s1, s2) = (serial(0), serial(1), serial(2));
    assert_eq!(
        report,
        [(s0.as_str(), "cryptoErase", true), (s1.as_str(), "secureErase", true), (s2.as_str(), "overwrite", true)],
        "per disk: serial, method, verified by a read-back"
    );
    assert_eq!(bmc["erasedBy"], json!({"disk0": "CryptographicErase", "disk1": "BlockErase", "disk2": "Overwrite"}));
    assert!(contents(&env, &system).iter().all(|(_, text)| text.is_empty()), "{:?}", contents(&env, &system));

    // The next tenant's deploy finds its own system, and nothing of the first tenant's.
    run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
    for (drive, text) in contents(&env, &system) {
        assert!(!text.contains(MARKER), "{drive} still holds the first tenant's data: {text:?}");
    }
}

/// The serial of a fake machine, from its inventory as its BMC reports it.
fn bmc_serial(bmc: &Value) -> String {
    let id = bmc["id"].as_str().unwrap();
    format!("FAKE{:06}", id.trim_start_matches("system-").parse::<u64>().unwrap())
}

#[tokio::test]
async fn a_disk_that_cannot_be_erased_fails_the_release_naming_it() {
    let (env, pool) = metal_env(json!({})).await;
    let (system, enrolment) = machine(&env, &pool, "e2");
    let node = env.ok("/api/compute/metal/enroll", enrolment).await["id"].as_str().unwrap().to_owned();
    wait_for(&env, &pool, &node, "manageable").await;
    run(&env, &pool, &node, "inspect", json!({}), "manageable").await;
    run(&env, &pool, &node, "commission", json!({}), "ready").await;
    run(&env, &pool, &node, "deploy", json!({"image": IMAGE}), "deployed").await;
    assert!(env.cloud.write_bmc_disk(&system, "disk2", MARKER));
    assert!(env.cloud.set_bmc_disk_read_only(&system, "disk2", true));

    call(&env, &pool, &node, "release", json!({})).await;
    let failed = wait_for(&env, &pool, &node, "releaseFailed").await;
    let error = failed["lastError"].as_str().unwrap();
    assert!(error.contains("disk SATA HDD 2 (serial FAKE") && error.contains("still holds data"), "{error}");
    assert_eq!(erasures(&env, &pool, &node).await.len(), 1, "only commissioning's erase is reported");
    let held = contents(&env, &system);
    assert!(held.iter().any(|(drive, text)| drive == "disk2" && text.contains(MARKER)), "{held:?}");

    // Once the disk takes writes again, a release erases it and the machine is ready.
    assert!(env.cloud.set_bmc_disk_read_only(&system, "disk2", false));
    run(&env, &pool, &node, "release", json!({}), "ready").await;
    assert!(contents(&env, &system).iter().all(|(_, text)| text.is_empty()));
}
