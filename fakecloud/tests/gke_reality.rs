//! What the fake GKE shows of what it did: the operations started on a cluster, in order, and
//! the instances behind each node pool (replaced by the changes GKE rolls out by recreating
//! nodes, kept by those it applies in place); and the console's changes made behind the
//! control plane's back.

mod common;

use common::{Fixture, LOCATION, PROJECT, cluster, nodes, pool, start};
use reqwest::Method;
use serde_json::{Value, json};

const CLUSTER: &str = "c1";

fn cluster_path() -> String {
    format!("/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}")
}

fn pool_path(pool: &str) -> String {
    format!("{}/nodePools/{pool}", cluster_path())
}

/// A running cluster with pool `general` of two nodes (one zone).
async fn running_cluster() -> Fixture {
    let fixture = start().await;
    let body = json!({"cluster": {"name": CLUSTER, "nodePools": [{"name": "general", "initialNodeCount": 2}]}});
    let (status, answer) =
        fixture.call(Method::POST, &format!("/v1/projects/{PROJECT}/locations/{LOCATION}/clusters"), Some(body)).await;
    assert_eq!(status, 200, "{answer}");
    fixture.idle_cluster(CLUSTER).await;
    fixture
}

/// Sends a change and waits until its operation is done; returns the pool afterwards.
async fn change(fixture: &Fixture, method: Method, path: &str, body: Value) -> Value {
    let (status, answer) = fixture.call(method, path, Some(body)).await;
    assert_eq!(status, 200, "{answer}");
    pool(&fixture.idle_cluster(CLUSTER).await, "general")
}

#[tokio::test]
async fn the_operations_of_a_cluster_are_recorded_in_order_with_their_targets() {
    let fixture = running_cluster().await;
    let pools = format!("{}/nodePools", cluster_path());
    let steps: Vec<(Method, String, Value)> = vec![
        (Method::POST, pools, json!({"nodePool": {"name": "extra", "initialNodeCount": 1}})),
        (Method::POST, format!("{}:setSize", pool_path("general")), json!({"nodeCount": 3})),
        (Method::PUT, pool_path("general"), json!({"labels": {"labels": {"team": "a"}}})),
        (Method::PUT, pool_path("general"), json!({"machineType": "e2-standard-4"})),
        (Method::POST, format!("{}:setAutoscaling", pool_path("extra")), json!({"autoscaling": {"enabled": false}})),
        (Method::PUT, cluster_path(), json!({"update": {"desiredMasterAuthorizedNetworksConfig": {"enabled": true}}})),
        (Method::DELETE, pool_path("extra"), Value::Null),
    ];
    for (method, path, body) in steps {
        let body = (!body.is_null()).then_some(body);
        let (status, answer) = fixture.call(method, &path, body).await;
        assert_eq!(status, 200, "{path}: {answer}");
        fixture.idle_cluster(CLUSTER).await;
    }
    let operations = fixture.idle_cluster(CLUSTER).await["operations"].clone();
    let seen: Vec<(String, Value)> = operations
        .as_array()
        .unwrap()
        .iter()
        .map(|op| (op["operationType"].as_str().unwrap().to_owned(), op["nodePool"].clone()))
        .collect();
    let expected = [
        ("CREATE_CLUSTER", Value::Null),
        ("CREATE_NODE_POOL", json!("extra")),
        ("SET_NODE_POOL_SIZE", json!("general")),
        ("UPDATE_CLUSTER", json!("general")),
        ("UPGRADE_NODES", json!("general")),
        ("UPDATE_CLUSTER", json!("extra")),
        ("UPDATE_CLUSTER", Value::Null),
        ("DELETE_NODE_POOL", json!("extra")),
    ];
    let expected: Vec<(String, Value)> = expected.into_iter().map(|(t, p)| (t.to_owned(), p)).collect();
    assert_eq!(seen, expected, "{operations:#}");
    for op in operations.as_array().unwrap() {
        assert_eq!((op["status"].as_str(), op["initiatedBy"].as_str()), (Some("DONE"), Some("api")), "{op}");
        assert!(op["targetLink"].as_str().unwrap().contains(&format!("/clusters/{CLUSTER}")), "{op}");
        let (status, answer) = fixture
            .call(
                Method::GET,
                &format!("/v1/projects/{PROJECT}/locations/{LOCATION}/operations/{}", op["name"].as_str().unwrap()),
                None,
            )
            .await;
        assert_eq!((status, &answer["operationType"]), (200, &op["operationType"]), "the API knows it too");
    }
}

#[tokio::test]
async fn changes_gke_rolls_out_by_recreating_nodes_replace_every_node() {
    let fixture = running_cluster().await;
    let created = pool(&fixture.idle_cluster(CLUSTER).await, "general");
    let mut before = nodes(&created);
    assert_eq!((before.len(), created["nodeGeneration"].as_u64()), (2, Some(1)), "{created}");
    assert!(before.iter().all(|n| n.starts_with(&format!("gke-{CLUSTER}-general-"))), "{before:?}");
    let recreating = [
        json!({"machineType": "e2-standard-4"}),
        json!({"diskSizeGb": 200}),
        json!({"diskType": "pd-ssd"}),
        json!({"accelerators": [{"acceleratorType": "nvidia-l4", "acceleratorCount": "1"}]}),
        json!({"nodeVersion": "-"}),
    ];
    for (generation, body) in (2..).zip(recreating) {
        let after = change(&fixture, Method::PUT, &pool_path("general"), body.clone()).await;
        let names = nodes(&after);
        assert_eq!(names.len(), 2, "{body}: {after}");
        assert!(names.iter().all(|n| !before.contains(n)), "{body} replaces every node: {before:?} -> {names:?}");
        assert_eq!(after["nodeGeneration"].as_u64(), Some(generation), "{body}");
        before = names;
    }
}

#[tokio::test]
async fn changes_gke_makes_in_place_keep_every_node() {
    let fixture = running_cluster().await;
    let before = nodes(&pool(&fixture.idle_cluster(CLUSTER).await, "general"));
    let in_place = [
        (Method::PUT, pool_path("general"), json!({"labels": {"labels": {"team": "a"}}})),
        (
            Method::PUT,
            pool_path("general"),
            json!({"taints": {"taints": [{"key": "k", "value": "v", "effect": "NO_SCHEDULE"}]}}),
        ),
        (
            Method::POST,
            format!("{}:setAutoscaling", pool_path("general")),
            json!({"autoscaling": {"enabled": true, "minNodeCount": 1, "maxNodeCount": 5}}),
        ),
    ];
    for (method, path, body) in in_place {
        let after = change(&fixture, method, &path, body.clone()).await;
        assert_eq!((nodes(&after), after["nodeGeneration"].as_u64()), (before.clone(), Some(1)), "{body}");
    }
}

#[tokio::test]
async fn a_resize_keeps_the_nodes_it_does_not_remove() {
    let fixture = running_cluster().await;
    let before = nodes(&pool(&fixture.idle_cluster(CLUSTER).await, "general"));
    let grown =
        change(&fixture, Method::POST, &format!("{}:setSize", pool_path("general")), json!({"nodeCount": 4})).await;
    let names = nodes(&grown);
    assert_eq!((names.len(), &names[..2], grown["nodeGeneration"].as_u64()), (4, &before[..], Some(1)), "{grown}");
    assert!(!before.contains(&names[2]) && !before.contains(&names[3]) && names[2] != names[3], "{names:?}");
    let shrunk =
        change(&fixture, Method::POST, &format!("{}:setSize", pool_path("general")), json!({"nodeCount": 1})).await;
    assert_eq!(nodes(&shrunk), before[..1], "{shrunk}");
}

#[tokio::test]
async fn a_resize_in_the_console_changes_the_pool_at_once_and_its_nodes_follow() {
    let fixture = running_cluster().await;
    let before = nodes(&pool(&fixture.idle_cluster(CLUSTER).await, "general"));
    assert!(fixture.cloud.gke_set_node_count(PROJECT, LOCATION, CLUSTER, "general", 3));

    let snapshot = cluster(&fixture.cloud.inspect(), CLUSTER).unwrap();
    let resized = pool(&snapshot, "general");
    assert_eq!(resized["nodeCount"], 3, "at once: {resized}");
    let names = nodes(&resized);
    assert_eq!((names.len(), &names[..2]), (3, &before[..]), "{names:?}");
    let last = snapshot["operations"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!(
        (&last["operationType"], &last["nodePool"], &last["status"], &last["initiatedBy"]),
        (&json!("SET_NODE_POOL_SIZE"), &json!("general"), &json!("DONE"), &json!("console")),
        "{last}"
    );
    let (_, got) = fixture.call(Method::GET, &cluster_path(), None).await;
    assert_eq!(got["currentNodeCount"], 3, "the cluster's nodes follow the pool");
    let (_, got) = fixture.call(Method::GET, &pool_path("general"), None).await;
    assert_eq!(got["status"], "RUNNING");

    assert!(!fixture.cloud.gke_set_node_count(PROJECT, LOCATION, CLUSTER, "missing", 3));
    assert!(!fixture.cloud.gke_set_node_count(PROJECT, LOCATION, "missing", "general", 3));
}

#[tokio::test]
async fn a_label_edited_in_the_console_shows_in_the_api_and_keeps_the_nodes() {
    let fixture = running_cluster().await;
    let before = nodes(&pool(&fixture.idle_cluster(CLUSTER).await, "general"));
    let labels = json!({"team": "b", "tier": "gold"}).as_object().cloned().unwrap();
    assert!(fixture.cloud.gke_set_node_labels(PROJECT, LOCATION, CLUSTER, "general", labels));

    let (status, got) = fixture.call(Method::GET, &pool_path("general"), None).await;
    assert_eq!((status, &got["config"]["labels"]), (200, &json!({"team": "b", "tier": "gold"})), "{got}");
    let snapshot = cluster(&fixture.cloud.inspect(), CLUSTER).unwrap();
    assert_eq!(nodes(&pool(&snapshot, "general")), before, "a label change keeps the nodes");
    let last = snapshot["operations"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!((&last["operationType"], &last["initiatedBy"]), (&json!("UPDATE_CLUSTER"), &json!("console")));

    assert!(!fixture.cloud.gke_set_node_labels(PROJECT, LOCATION, CLUSTER, "missing", Default::default()));
}
