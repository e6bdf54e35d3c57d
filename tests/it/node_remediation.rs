//! What a pool's node policy does to silent nodes, as the worker's liveness sweep applies it: a
//! node joined with a token is marked (an event with the step and the reason, its view and the
//! pool's view say so), then forgotten past `forgetAfter` (`deleted`, its heartbeat refused);
//! more unhealthy nodes than `maxUnhealthy` stop remediation, which the pool's view and an event
//! say with the figures, until the pool is back within the bound; a policy out of bounds is
//! refused naming the field.

use std::time::Duration;

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, EventFilter, EventRow};
use serde_json::{Value, json};

use crate::harness::{OwnPool, RunningWorker, System, eventually};

crate::on_both_backends!(
    a_silent_token_node_is_marked_then_forgotten_and_its_credential_dies,
    more_unhealthy_nodes_than_max_unhealthy_stop_remediation_and_the_pool_says_why,
    a_remediation_policy_out_of_bounds_is_refused_naming_the_field,
);

const JOIN: &str = "/api/compute/nodes/join";
const HEARTBEAT: &str = "/api/compute/nodes/heartbeat";

/// Joins `count` machines to the pool with one token: each node's id and credential.
async fn join(s: &OwnPool, count: usize) -> Vec<(String, String)> {
    let (status, token) = s
        .as_admin(
            "/api/compute/joinTokens/create",
            json!({"poolId": s.pool, "idempotencyKey": "rack", "maxUses": count}),
        )
        .await;
    assert_eq!(status, 200, "{token}");
    let mut nodes = Vec::new();
    for n in 0..count {
        let machine = json!({"machineId": format!("machine-{n:04}"), "hostname": format!("node-{n}"),
            "architecture": "amd64", "os": "Debian GNU/Linux 13", "kernel": "6.12.0", "bcdVersion": "0.1.0"});
        let (status, joined) = s.server.post(JOIN, token["token"].as_str(), machine).await;
        assert_eq!(status, 200, "{joined}");
        nodes.push((joined["nodeId"].as_str().unwrap().to_owned(), joined["credential"].as_str().unwrap().to_owned()));
    }
    nodes
}

/// Moves the node's last heartbeat `seconds` further back.
async fn silence(s: &OwnPool, node: &str, seconds: i64) {
    let micros = seconds * 1_000_000;
    s.execute(&format!("UPDATE nodes SET last_heartbeat_at = last_heartbeat_at - {micros} WHERE id = '{node}'")).await;
}

/// A worker whose liveness sweep runs every 100 ms.
fn sweeping(s: &OwnPool) -> RunningWorker {
    let config = WorkerConfig { node_liveness_interval: Duration::from_millis(100), ..WorkerConfig::default() };
    s.server.start_worker(config, Vec::new())
}

async fn node(s: &OwnPool, id: &str) -> Value {
    s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": id})).await.1
}

async fn pool_nodes(s: &OwnPool) -> Value {
    s.as_admin("/api/compute/pools/get", json!({"tenantId": "acme", "poolId": s.pool})).await.1["nodes"].clone()
}

/// The pool's events whose type starts with `prefix`, oldest first.
async fn events(s: &OwnPool, prefix: &str) -> Vec<EventRow> {
    let filter = EventFilter { subject: s.pool.clone(), type_prefix: prefix.into(), limit: 1000, ..Default::default() };
    s.server.store.event_list_after(&filter).await.unwrap()
}

async fn a_silent_token_node_is_marked_then_forgotten_and_its_credential_dies(backend: Backend) {
    let policy = json!({"remediation": {"unhealthyAfter": 30, "maxUnhealthy": 1}, "forgetAfter": 600});
    let s = System::on(backend).own_pool("own", policy).await;
    let nodes = join(&s, 2).await;
    let (silent, alive) = (&nodes[0], &nodes[1]);
    // Silent for 45 s: past three 10 s heartbeats and past unhealthyAfter, not past forgetAfter.
    silence(&s, &silent.0, 45).await;
    let running = sweeping(&s);

    let marked = eventually(Duration::from_secs(20), "the silent node marked", || async {
        let got = node(&s, &silent.0).await;
        (got["remediation"] == "marked").then_some(got)
    })
    .await;
    assert_eq!(marked["state"], "notReady", "{marked}");
    assert!(marked["remediatedAt"].is_string(), "{marked}");
    let steps = events(&s, "compute.node.remediation").await;
    assert_eq!(steps.len(), 1, "one step, once: {steps:?}");
    assert_eq!(steps[0].data["nodeId"], json!(silent.0));
    assert_eq!(steps[0].data["step"], "marked");
    let reason = steps[0].data["reason"].as_str().unwrap();
    assert!(reason.contains("unhealthyAfter (30 s)") && reason.contains("joined with a token"), "{reason}");
    let summary = pool_nodes(&s).await;
    assert_eq!((summary["unhealthy"].as_i64(), summary["remediationPaused"].as_str()), (Some(1), Some("")));
    assert_eq!(node(&s, &alive.0).await["remediation"], "", "the node that heartbeats is left alone");

    // Silent past forgetAfter: deleted, saying why, and its credential is dead.
    silence(&s, &silent.0, 600).await;
    let forgotten = eventually(Duration::from_secs(20), "the silent node forgotten", || async {
        let got = node(&s, &silent.0).await;
        (got["state"] == "deleted").then_some(got)
    })
    .await;
    assert!(forgotten["deletedAt"].is_string(), "{forgotten}");
    let deleted = events(&s, "compute.node.deleted").await;
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    let reason = deleted[0].data["reason"].as_str().unwrap();
    assert!(reason.contains("forgetAfter (600 s)"), "{reason}");
    let (status, refused) = s.server.post(HEARTBEAT, Some(&silent.1), json!({"nodeId": silent.0})).await;
    assert_eq!((status, refused["error"]["details"]["reason"].as_str()), (401, Some("deleted")), "{refused}");
    let (status, beat) = s.server.post(HEARTBEAT, Some(&alive.1), json!({"nodeId": alive.0})).await;
    assert_eq!((status, beat["leave"].as_bool()), (200, Some(false)), "the other node heartbeats on: {beat}");
    running.stop().await.unwrap();
    s.server.stop().await;
}

async fn more_unhealthy_nodes_than_max_unhealthy_stop_remediation_and_the_pool_says_why(backend: Backend) {
    let policy = json!({"remediation": {"unhealthyAfter": 30, "maxUnhealthy": "40%"}});
    let s = System::on(backend).own_pool("own", policy).await;
    let nodes = join(&s, 3).await;
    // Two of three silent: 40% of 3 tolerates 1.
    silence(&s, &nodes[0].0, 45).await;
    silence(&s, &nodes[1].0, 45).await;
    let running = sweeping(&s);

    let summary = eventually(Duration::from_secs(20), "remediation to stop", || async {
        let summary = pool_nodes(&s).await;
        (summary["remediationPaused"] != "").then_some(summary)
    })
    .await;
    let why = summary["remediationPaused"].as_str().unwrap();
    assert!(why.contains("2 of the pool's 3 live nodes are unhealthy") && why.contains("maxUnhealthy 40%"), "{why}");
    let paused = events(&s, "compute.pool.remediation").await;
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0].event_type, "compute.pool.remediationPaused");
    assert_eq!(paused[0].data["reason"], json!(why));
    // The third goes silent too: later sweeps keep the reason up to date, take no step, and say
    // nothing again.
    silence(&s, &nodes[2].0, 45).await;
    eventually(Duration::from_secs(20), "the reason to follow", || async {
        let summary = pool_nodes(&s).await;
        summary["remediationPaused"].as_str().unwrap().contains("3 of the pool's 3").then_some(())
    })
    .await;
    assert!(events(&s, "compute.node.remediation").await.is_empty(), "no step while stopped");
    assert_eq!(events(&s, "compute.pool.remediation").await.len(), 1);

    // Two come back: within the bound again, remediation resumes and marks the third.
    for back in [&nodes[0], &nodes[2]] {
        let (status, _) = s.server.post(HEARTBEAT, Some(&back.1), json!({"nodeId": back.0})).await;
        assert_eq!(status, 200);
    }
    eventually(Duration::from_secs(20), "the other silent node marked", || async {
        (node(&s, &nodes[1].0).await["remediation"] == "marked").then_some(())
    })
    .await;
    let changes: Vec<String> = events(&s, "compute.pool.remediation").await.into_iter().map(|e| e.event_type).collect();
    assert_eq!(changes, ["compute.pool.remediationPaused", "compute.pool.remediationResumed"]);
    assert_eq!(pool_nodes(&s).await["remediationPaused"], "");
    running.stop().await.unwrap();
    s.server.stop().await;
}

async fn a_remediation_policy_out_of_bounds_is_refused_naming_the_field(backend: Backend) {
    let s = System::on(backend).own_pool("own", json!({})).await;
    for (policy, field) in [
        (json!({"remediation": {"unhealthyAfter": 5}}), "policy.remediation.unhealthyAfter"),
        (json!({"remediation": {"unhealthyAfter": 60, "maxUnhealthy": "150%"}}), "policy.remediation.maxUnhealthy"),
        (json!({"remediation": {"maxUnhealthy": 1}}), "policy.remediation.unhealthyAfter"),
        (json!({"forgetAfter": "soon"}), "policy.forgetAfter"),
    ] {
        let body = json!({"poolId": s.pool, "updateMask": "policy", "policy": policy});
        let (status, refused) = s.server.post("/api/platform/pools/update", Some(&s.server.admin_token), body).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(field), "{field}: {refused}");
    }
    s.server.stop().await;
}
