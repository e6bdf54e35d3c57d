//! Store and provider calls in `/metrics`: a real `bc-server` counts and times the store calls
//! its API calls make, by operation and outcome, and an adapter's calls to the fake cloud are
//! counted and timed by provider and operation.

use better_compute::provider::{ManagedKubernetes, Networks};
use better_compute::telemetry::Metrics;
use serde_json::{Value, json};

use crate::harness::{ServerProcess, System};
use better_compute::store::Backend;

/// The value of `series` (a name with its labels, as the text format writes them) in `metrics`.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

/// `POST <path>` as the operator: the status.
async fn post(server: &ServerProcess, path: &str, body: Value) -> u16 {
    let response = reqwest::Client::new()
        .post(format!("{}{path}", server.endpoint))
        .bearer_auth(&server.admin_token)
        .json(&body)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_calls_are_counted_and_timed_by_operation_and_outcome() {
    let server = System::on(Backend::Postgres).process(&["--metrics-token", "scrape-me"]).await;
    assert_eq!(post(&server, "/api/platform/tenants/create", json!({"id": "acme"})).await, 200);
    assert_eq!(post(&server, "/api/platform/tenants/create", json!({"id": "acme"})).await, 409, "the id is taken");
    assert_eq!(post(&server, "/api/platform/tenants/list", json!({})).await, 200);

    let metrics = reqwest::Client::new()
        .get(format!("{}/metrics", server.endpoint))
        .bearer_auth("scrape-me")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for series in [
        r#"bc_store_calls_total{operation="tenant_create",outcome="ok"}"#,
        r#"bc_store_calls_total{operation="tenant_create",outcome="error"}"#,
        r#"bc_store_calls_total{operation="tenant_list",outcome="ok"}"#,
        // What a create does inside its transaction is counted by its own name too.
        r#"bc_store_calls_total{operation="event_append_in",outcome="ok"}"#,
        r#"bc_store_call_seconds_count{operation="tenant_create"}"#,
        r#"bc_store_call_seconds_count{operation="tenant_list"}"#,
    ] {
        let value = sample(&metrics, series);
        assert!(value.is_some_and(|count| count >= 1.0), "{series} is {value:?} in:\n{metrics}");
    }
    let seconds = sample(&metrics, r#"bc_store_call_seconds_sum{operation="tenant_create"}"#);
    assert!(seconds.is_some_and(|sum| sum > 0.0), "tenant_create took {seconds:?} in all");
    assert!(metrics.contains(r#"bc_store_call_seconds_bucket{le="+Inf",operation="tenant_list"}"#), "{metrics}");
}

#[tokio::test]
async fn provider_calls_are_counted_and_timed_by_provider_and_operation() {
    // Other tests of this process call the fake cloud at the same time: the counts only rise.
    let count = |series: &str| sample(&Metrics::new().encode(), series).unwrap_or(0.0);
    let listed_ok = r#"bc_provider_calls_total{provider="gke",operation="clusters.list",outcome="ok"}"#;
    let missing = r#"bc_provider_calls_total{provider="gke",operation="clusters.get",outcome="error"}"#;
    let timed = r#"bc_provider_call_seconds_count{provider="gke",operation="clusters.get"}"#;
    let networks = r#"bc_provider_calls_total{provider="digitalocean",operation="network_list",outcome="ok"}"#;
    let before = [listed_ok, missing, timed, networks].map(count);

    let cloud = crate::harness::adapters::cloud().await;
    let gke = crate::harness::adapters::gke(&cloud);
    gke.cluster_list().await.unwrap();
    gke.cluster_get("no-such-cluster").await.unwrap_err();
    crate::harness::adapters::digitalocean(&cloud).network_list().await.unwrap();

    let after = [listed_ok, missing, timed, networks].map(count);
    for ((series, before), after) in [listed_ok, missing, timed, networks].iter().zip(before).zip(after) {
        assert!(after >= before + 1.0, "{series} went from {before} to {after}");
    }
}
