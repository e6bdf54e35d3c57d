//! `delete` with `force: true`: a cluster stuck deleting because its account stopped answering
//! ends `deleted` at once (its events, its billing ended, its work dropped) and its GKE cluster
//! is recorded as an orphan, which the sweeper marks `stillThere` while the account fails and
//! `removed` once it answers and GKE has deleted it. Force is a tenant admin's (an editor or a
//! viewer is refused naming `force`), and is refused for a resource its provider answers for.

use better_compute::store::Backend;
use serde_json::json;

use fakecloud::FaultClass;

use super::{ACCOUNT, DELETE, Env, LIMIT, gke_name};
use crate::harness::poll;

crate::on_both_backends!(
    a_forced_delete_of_a_cluster_whose_account_is_unreachable_leaves_an_orphan_the_sweeper_removes,
    force_is_refused_to_editors_and_viewers_and_for_a_resource_its_provider_answers_for,
);

/// The types of acme's events about `subject`, oldest first.
async fn event_types(env: &Env, subject: &str) -> Vec<String> {
    let listed = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    let events = listed["events"].as_array().unwrap();
    events.iter().filter(|e| e["subject"] == subject).map(|e| e["type"].as_str().unwrap().to_owned()).collect()
}

async fn a_forced_delete_of_a_cluster_whose_account_is_unreachable_leaves_an_orphan_the_sweeper_removes(
    backend: Backend,
) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let id = env.ready_cluster("acme", "stranded").await;
    let name = gke_name(&id);
    let body = json!({"tenantId": "acme", "clusterId": id});

    // GKE stops answering for the cluster (its connections closed unanswered): the delete is
    // stuck, and the cluster says why.
    let unreachable = env.cloud.fail_calls("cluster", "*", &name, FaultClass::Unreachable);
    let deleting = env.ok(DELETE, body.clone()).await;
    assert_eq!(deleting["state"], "deleting", "{deleting}");
    let stuck = poll(LIMIT, "the stuck delete's problem", || async {
        let cluster = env.ok("/api/compute/kubernetesClusters/get", body.clone()).await;
        if cluster["problem"]["class"] == "unreachable" { Ok(cluster) } else { Err(cluster.to_string()) }
    })
    .await;
    assert!(stuck["problem"]["message"].as_str().unwrap().contains("cannot reach the API"), "{stuck}");

    let mut forced = body.clone();
    forced["force"] = json!(true);
    let deleted = env.ok(DELETE, forced.clone()).await;
    assert_eq!(deleted["state"], "deleted", "a forced delete ends the cluster at once: {deleted}");
    let types = event_types(&env, &id).await;
    assert_eq!(types.last().map(String::as_str), Some("kubernetes.cluster.deleted"), "{types:?}");
    assert!(env.work_failure(&id).await.is_none(), "the cluster's work is dropped");
    assert!(env.fake_clusters().iter().any(|c| c["name"] == name.as_str()), "GKE still has the cluster");

    // Its GKE cluster is an orphan; the sweeper finds the account still failing.
    let orphans = env
        .wait_orphans(&id, "the orphan tried while the account fails", |orphans| {
            orphans.iter().any(|o| o["status"] == "stillThere" && o["lastError"] != "")
        })
        .await;
    assert_eq!(orphans.len(), 1, "the node pool goes with its cluster: {orphans:?}");
    let orphan = &orphans[0];
    assert_eq!(
        (orphan["provider"].as_str(), orphan["kind"].as_str(), orphan["name"].as_str()),
        (Some("gke"), Some("cluster"), Some(name.as_str()))
    );
    assert_eq!(
        (orphan["tenantId"].as_str(), orphan["resourceKind"].as_str(), orphan["accountId"].as_str()),
        (Some("acme"), Some("kubernetes.clusters"), Some(ACCOUNT))
    );
    assert_eq!(orphan["location"], "europe-west1", "{orphan}");
    let reason = orphan["reason"].as_str().unwrap();
    assert!(reason.starts_with("forced delete by prn_"), "the reason names who forced: {reason}");
    assert!(orphan["lastError"].as_str().unwrap().contains(&name), "{orphan}");

    // Forcing again changes nothing: the cluster is deleted, its orphan recorded once.
    assert_eq!(env.ok(DELETE, forced).await["state"], "deleted");

    // The account answers again: the sweeper deletes the cluster at GKE and confirms it gone.
    assert!(env.cloud.clear_fault(unreachable));
    let removed =
        env.wait_orphans(&id, "the orphan removed", |orphans| orphans.iter().all(|o| o["status"] == "removed")).await;
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0]["lastError"], "", "{removed:?}");
    assert!(env.fake_clusters().iter().all(|c| c["name"] != name.as_str()), "GKE has no such cluster any more");

    // The audit trail says who forced it.
    let audit = env.server.admin_ok("/api/platform/audit/list", json!({"resourceId": id})).await;
    let forced_rows: Vec<_> = audit["auditEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["permission"] == "compute:kubernetes:force-delete" && row["resourceId"] == id.as_str())
        .cloned()
        .collect();
    assert!(!forced_rows.is_empty() && forced_rows.iter().all(|r| r["decision"] == "allow"), "{audit}");
    assert!(forced_rows[0]["principalId"].as_str().unwrap().starts_with("prn_"), "{forced_rows:?}");
}

async fn force_is_refused_to_editors_and_viewers_and_for_a_resource_its_provider_answers_for(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let id = env.ready_cluster("acme", "healthy").await;
    let forced = json!({"tenantId": "acme", "clusterId": id, "force": true});

    // An editor may delete, not force; a viewer may do neither.
    let editor = env.expect_failure(&env.acme_editor, DELETE, forced.clone(), 403, "ACCESS_DENIED").await;
    assert_eq!(editor["details"]["field"], "force", "{editor}");
    assert!(editor["message"].as_str().unwrap().contains("force"), "{editor}");
    env.expect_failure(&env.acme_viewer, DELETE, forced.clone(), 403, "ACCESS_DENIED").await;

    // A ready cluster whose provider answers: delete it without force.
    let ready = env.expect_failure(&env.acme_admin, DELETE, forced.clone(), 409, "INVALID_STATE").await;
    assert_eq!(ready["details"]["field"], "force", "{ready}");
    let message = ready["message"].as_str().unwrap();
    assert!(message.contains("stuck in deleting") && message.contains("cannot be reached"), "{message}");
    let still = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(still["state"], "ready", "a refused force changes nothing: {still}");
    assert!(env.orphans_as(&env.acme_admin, json!({"tenantId": "acme"})).await.is_empty());
}
