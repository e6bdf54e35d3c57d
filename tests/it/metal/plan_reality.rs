//! Plans against reality for bare-metal machines: each field an update of an idle machine
//! changes (its name, labels and BMC credentials), alone, is planned and then made, and so is its
//! delete; what the plan said (`none` for the update, `delete` for the delete, no provider object
//! touched) must be what the machine's BMC then shows: neither powered nor booted.

use std::time::Duration;

use better_compute::store::{Backend, METAL_KIND, now_micros};
use serde_json::{Value, json};

use crate::harness::{PASSWORD, Reality, System, assert_plan_was_reality, poll};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planned_machine_change_is_what_its_bmc_then_shows() {
    let mut env = System::on(Backend::Postgres).start().await;
    let pool = env.metal_pool(json!({})).await;
    env.start_worker();
    let (node, system) = env.enroll_at_fake_bmc(&pool, "m1").await;
    let machine = json!({"poolId": pool, "nodeId": node});
    let get = || env.ok("/api/compute/metal/get", machine.clone());
    poll(Duration::from_secs(60), "the machine manageable", || async {
        let got = get().await;
        if got["provisionState"] == "manageable" { Ok(()) } else { Err(got.to_string()) }
    })
    .await;
    let with = |change: Value| {
        let mut body = machine.clone();
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        body
    };
    let cases = [
        ("name", with(json!({"name": "m1-renamed"}))),
        ("labels", with(json!({"labels": {"rack": "r2"}}))),
        ("username", with(json!({"username": "operator"}))),
        ("password", with(json!({"password": PASSWORD}))),
    ];
    for (what, body) in cases {
        let before = env.cloud.bmc_system(&system).unwrap();
        let plan = env.ok("/api/compute/metal/plan", json!({"update": body.clone()})).await;
        env.ok("/api/compute/metal/update", body).await;
        // Whatever the update queued has run: no machine's work is due or leased.
        poll(Duration::from_secs(30), "the machines' work done", || async {
            let status = env.store.work_status(now_micros()).await.unwrap();
            let busy = status.iter().filter(|k| k.kind == METAL_KIND && (k.leased > 0 || k.queue_depth > 0)).count();
            if busy == 0 { Ok(()) } else { Err(format!("{status:?}")) }
        })
        .await;
        let after = env.cloud.bmc_system(&system).unwrap();
        assert_plan_was_reality(what, &plan, &Reality::bmc(&system, &before, &after, false));
    }
    let before = env.cloud.bmc_system(&system).unwrap();
    let plan = env.ok("/api/compute/metal/plan", json!({"delete": machine.clone()})).await;
    env.ok("/api/compute/metal/delete", machine.clone()).await;
    poll(Duration::from_secs(30), "the machine deleted", || async {
        let got = get().await;
        if got["deletedAt"].is_string() { Ok(()) } else { Err(got.to_string()) }
    })
    .await;
    let after = env.cloud.bmc_system(&system).unwrap();
    assert_plan_was_reality("the delete", &plan, &Reality::bmc(&system, &before, &after, true));
}
