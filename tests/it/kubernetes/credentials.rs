//! What `credentials` returns and publishes: the kubeconfig is YAML text in block style, as
//! kubectl writes one (one cluster with its endpoint and CA, one user with a bearer token, one
//! context, `current-context` set), which kubectl reads; the `credentials-issued` event says when
//! the token expires in RFC 3339, the same text as the answer's `expiresAt`.

use std::process::Command;
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::standard;

crate::on_both_backends!(the_kubeconfig_is_yaml_and_the_event_says_its_expiry_as_the_answer_does);

async fn the_kubeconfig_is_yaml_and_the_event_says_its_expiry_as_the_answer_does(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("yaml", "yaml")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let issued = env
        .ok(
            "/api/compute/kubernetesClusters/credentials",
            json!({"tenantId": "acme", "clusterId": id, "role": "edit", "ttlSeconds": 900}),
        )
        .await;
    let text = issued["kubeconfig"].as_str().unwrap();

    // YAML in block style, not JSON (which is YAML 1.2, but not what YAML 1.1 tools or people
    // expect): no flow collections but kubectl's own `preferences: {}`.
    assert!(!text.trim_start().starts_with('{'), "{text}");
    assert!(text.starts_with("apiVersion: v1\n"), "{text}");
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        assert!(!line.contains(['{', '[']) || line == "preferences: {}", "a flow collection: {line}");
    }
    let config: Value = serde_yaml::from_str(text).unwrap();
    assert_eq!((config["apiVersion"].as_str(), config["kind"].as_str()), (Some("v1"), Some("Config")));
    let provider_name = ready["providerName"].as_str().unwrap();
    let clusters = config["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{config}");
    assert_eq!(clusters[0]["name"], provider_name);
    assert_eq!(clusters[0]["cluster"]["server"], format!("https://{}", ready["endpoint"].as_str().unwrap()));
    assert!(clusters[0]["cluster"]["certificate-authority-data"].as_str().is_some_and(|ca| ca.len() > 100));
    let users = config["users"].as_array().unwrap();
    assert_eq!(users.len(), 1, "{config}");
    assert!(users[0]["name"].as_str().unwrap().ends_with("-edit"), "{config}");
    let token = users[0]["user"]["token"].as_str().unwrap();
    assert!(token.len() > 16);
    let contexts = config["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 1, "{config}");
    assert_eq!(contexts[0]["context"]["user"], users[0]["name"]);
    assert_eq!(contexts[0]["context"]["cluster"], provider_name);
    assert_eq!(config["current-context"], contexts[0]["name"]);

    // kubectl reads it as it was meant.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    let view = tokio::task::block_in_place(|| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&path)
            .args(["config", "view", "--raw", "-o", "json"])
            .output()
            .expect("kubectl is installed")
    });
    assert!(view.status.success(), "kubectl: {}", String::from_utf8_lossy(&view.stderr));
    let seen: Value = serde_json::from_slice(&view.stdout).unwrap();
    assert_eq!(seen["users"][0]["user"]["token"], token);
    assert_eq!(seen["current-context"], provider_name);
    // An `edit` kubeconfig reads namespaced objects (the cluster's nodes are for `admin`).
    let accounts = tokio::task::block_in_place(|| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&path)
            .args(["get", "serviceaccounts", "-n", "kube-system", "-o", "name"])
            .output()
            .unwrap()
    });
    assert!(accounts.status.success(), "kubectl: {}", String::from_utf8_lossy(&accounts.stderr));

    // The event's expiry is the answer's, word for word.
    let expires = issued["expiresAt"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.contains('T'), "{issued}");
    let listed = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    let event = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subject"] == id.as_str() && e["type"] == "kubernetes.cluster.credentials-issued")
        .cloned()
        .unwrap_or_else(|| panic!("no credentials-issued event: {listed}"));
    assert_eq!(event["data"]["expiresAt"], expires, "{event}");
    assert_eq!((event["data"]["role"].as_str(), event["data"]["ttlSeconds"].as_f64()), (Some("edit"), Some(900.0)));
    assert!(!event.to_string().contains(token), "the token is not published");
}
