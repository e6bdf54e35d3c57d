//! A stuck cluster's `problem`: its class from the failing GKE call, when the next attempt
//! comes, what a person must do, and gone at the next success.

use std::time::Duration;

use better_compute::store::Backend;
use fakecloud::{FaultClass, RateLimitMode};
use serde_json::json;

use super::{now_seconds, seconds};
use crate::harness::PROJECT;

/// The GKE account of the Kubernetes suite's pool.
const ACCOUNT: &str = "acct_0000000000000000000000gke1";
use crate::kubernetes::{setup, standard};

crate::on_both_backends!(
    credentials_revoked_at_the_provider_give_permission_and_stop_the_retries,
    a_throttled_call_shows_the_next_attempt_the_provider_asked_for,
    a_used_up_quota_waits_minutes_and_names_the_quota,
);

async fn credentials_revoked_at_the_provider_give_permission_and_stop_the_retries(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let cluster = env.ok("/api/compute/kubernetesClusters/create", standard("revoked", "revoked")).await;
    let id = cluster["id"].as_str().unwrap();
    env.wait_cluster_state(id, "ready", Duration::from_secs(30)).await;

    // Every GKE call is now refused as a revoked key is; a change makes the worker look.
    env.cloud.set_error_rate("/v1/", 1.0, 403);
    let change = json!({"tenantId": "acme", "clusterId": id, "authorizedNetworks": ["10.0.0.0/8"]});
    env.ok("/api/compute/kubernetesClusters/update", change).await;
    let stuck = env.wait_problem(id, "permission").await;
    let problem = &stuck["problem"];
    assert_eq!(problem["attempts"], 1, "{problem}");
    let message = problem["message"].as_str().unwrap();
    assert!(message.contains("HTTP 403"), "the provider's refusal is named: {message}");
    assert!(message.contains("credentials"), "it says what a person must do: {message}");
    // No retry for ten minutes: the worker waits for a person (or a change).
    let waits = seconds(&problem["nextAttemptAt"]) - now_seconds();
    assert!(waits >= 9 * 60, "the next attempt comes in {waits} s");
    let since = seconds(&problem["since"]);
    assert!((now_seconds() - since).abs() < 60, "since {since}");

    // The operation log shows the refused call and its class.
    let log = env.operations(id, 5, "").await;
    let last = &log["operations"][0];
    assert_eq!((&last["outcome"], &last["errorClass"]), (&json!("error"), &json!("permission")), "{log}");

    // A 403 is a permission this cluster's calls lack, not refused credentials: the account's
    // breaker stays closed, so the account's other resources go on.
    let account = json!({"accountId": ACCOUNT});
    let open = env.server.admin_ok("/api/platform/accounts/get", account.clone()).await;
    assert_eq!(open["credentialsCheck"]["state"], "ok", "{open}");

    // The operator fixes the permission and gives the credentials again: the account's update
    // makes the cluster's pass run at once, whatever its backoff; the problem is gone.
    env.cloud.set_error_rate("/v1/", 0.0, 403);
    let key = env.cloud.service_account_key(PROJECT, "better-compute");
    env.server.admin_ok("/api/platform/accounts/update", json!({"accountId": ACCOUNT, "credentials": key})).await;
    let fixed = env.server.admin_ok("/api/platform/accounts/get", account).await;
    assert_eq!(fixed["credentialsCheck"]["state"], "ok", "{fixed}");
    let body = json!({"tenantId": "acme", "clusterId": id});
    env.get_until(&env.acme_admin, "kubernetesClusters", body, Duration::from_secs(20), "without a problem", |c| {
        c.get("problem").is_none() && c["state"] == "ready"
    })
    .await;
}

async fn a_throttled_call_shows_the_next_attempt_the_provider_asked_for(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let cluster = env.ok("/api/compute/kubernetesClusters/create", standard("throttled", "throttled")).await;
    let id = cluster["id"].as_str().unwrap();
    env.wait_cluster_state(id, "ready", Duration::from_secs(30)).await;

    // GKE takes one call a minute: the rest are answered 429 with the window's Retry-After.
    env.cloud.set_rate_limit(Some(RateLimitMode { limit: 1, window: Duration::from_secs(60) }));
    let change = json!({"tenantId": "acme", "clusterId": id, "description": "throttled"});
    env.ok("/api/compute/kubernetesClusters/update", change).await;
    let stuck = env.wait_problem(id, "throttled").await;
    let problem = &stuck["problem"];
    let waits = seconds(&problem["nextAttemptAt"]) - now_seconds();
    // The transient backoff would retry in 5 s; the provider asked for the rest of its minute.
    assert!((20..=61).contains(&waits), "the next attempt comes in {waits} s: {problem}");
    assert!(problem["message"].as_str().unwrap().contains("429"), "{problem}");
    env.cloud.set_rate_limit(None);
}

async fn a_used_up_quota_waits_minutes_and_names_the_quota(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let cluster = env.ok("/api/compute/kubernetesClusters/create", standard("quota", "quota")).await;
    let id = cluster["id"].as_str().unwrap();
    env.wait_cluster_state(id, "ready", Duration::from_secs(30)).await;

    // GKE answers the change 429 RESOURCE_EXHAUSTED for a regional CPU quota: not a rate.
    let used_up = env.cloud.fail_calls("cluster", "update", "*", FaultClass::Quota);
    let change = json!({"tenantId": "acme", "clusterId": id, "authorizedNetworks": ["10.0.0.0/8"]});
    env.ok("/api/compute/kubernetesClusters/update", change).await;
    let stuck = env.wait_problem(id, "quota").await;
    let problem = &stuck["problem"];
    let message = problem["message"].as_str().unwrap();
    assert!(message.contains("CPUS"), "names the quota: {message}");
    // Not the 5 s of a retryable failure: a minute, less its jitter.
    let waits = seconds(&problem["nextAttemptAt"]) - now_seconds();
    assert!((45..=61).contains(&waits), "the next attempt comes in {waits} s: {problem}");
    env.cloud.clear_fault(used_up);
}
