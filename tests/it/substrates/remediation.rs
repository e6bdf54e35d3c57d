//! A substrate node that stops heartbeating is recreated when the pool's remediation says so:
//! its machine (a GKE node's Compute Engine instance) is deleted at the provider, its managed
//! instance group makes it again under the same name with a fresh disk, the old node is
//! `deleted` saying why, and the new machine's bcd joins as a new node of the same machine id.

use std::time::Duration;

use better_compute::store::{Backend, EventFilter};
use serde_json::{Value, json};

use super::{CONVERGE, ZONE, flavor, setup, substrate_policy};
use crate::harness::poll;

crate::on_both_backends!(a_silent_substrate_node_is_recreated_at_the_provider_and_joins_again);

async fn a_silent_substrate_node_is_recreated_at_the_provider_and_joins_again(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.worker_config.node_liveness_interval = Duration::from_millis(100);
    env.start_worker();
    let create = json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let mut policy = substrate_policy(create, vec![flavor("general", "e2-medium", 2)]);
    policy["remediation"] = json!({"unhealthyAfter": 30, "maxUnhealthy": 1});
    let pool = env.substrate_pool("healing", policy).await;
    let ready = poll(CONVERGE, "two ready nodes", || async {
        let ready = env.pool_nodes(&pool, "ready").await;
        if ready.len() == 2 { Ok(ready) } else { Err(format!("{} ready", ready.len())) }
    })
    .await;
    let (silent, other) = (&ready[0], &ready[1]);
    let machine = silent["machineId"].as_str().unwrap().to_owned();
    let silent_id = silent["id"].as_str().unwrap().to_owned();

    // Its system hangs: bcd stops, the node goes silent, and the remediation's one step for a
    // substrate node is taken.
    assert!(env.cloud.hang_gke_node(&machine), "the fake GKE has node {machine}");
    env.silence_node(&pool, &silent_id).await;
    let replaced = poll(CONVERGE, "the silent node recreated", || async {
        let deleted = env.pool_nodes(&pool, "deleted").await;
        let gone = deleted.into_iter().find(|n| n["id"] == silent_id.as_str());
        let joined = env.pool_nodes(&pool, "ready").await.into_iter().find(|n| n["machineId"] == machine.as_str());
        match (gone, joined) {
            (Some(gone), Some(joined)) => Ok((gone, joined)),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let (gone, joined): (Value, Value) = replaced;
    assert_ne!(joined["id"], gone["id"], "the new machine joins as a new node: {joined}");
    let filter = EventFilter { subject: pool.clone(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    let steps: Vec<&Value> =
        events.iter().filter(|e| e.event_type == "compute.node.remediation").map(|e| &e.data).collect();
    assert_eq!(steps.len(), 1, "one step: {steps:?}");
    assert_eq!((steps[0]["nodeId"].as_str(), steps[0]["step"].as_str()), (Some(silent_id.as_str()), Some("recreate")));
    let deleted = events
        .iter()
        .find(|e| e.event_type == "compute.node.deleted" && e.data["nodeId"] == silent_id.as_str())
        .expect("the old node's deleted event");
    let reason = deleted.data["reason"].as_str().unwrap();
    assert!(reason.contains("made again at the provider") && reason.contains("instance gke-"), "{reason}");
    let still = env.pool_nodes(&pool, "ready").await;
    assert!(still.iter().any(|n| n["id"] == other["id"]), "the node that heartbeats is left alone: {still:?}");
    env.stop_worker().await;
}
