//! Node pool create takes an idempotency key with the rules of every other create: a retry
//! returns the pool the first call made (also when the calls race), the same key with another
//! body is `CONFLICT` saying the key was reused, and a create without a key is refused by name.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, standard};

crate::on_both_backends!(
    a_retried_node_pool_create_returns_the_same_pool,
    racing_node_pool_creates_with_one_key_make_one_pool,
    a_node_pool_create_names_a_missing_key,
);

const CREATE: &str = "/api/compute/kubernetesNodePools/create";
const CLUSTER_GET: &str = "/api/compute/kubernetesClusters/get";

fn extra(cluster: &str, key: &str) -> Value {
    json!({"tenantId": "acme", "clusterId": cluster, "name": "extra", "machineType": "e2-medium", "nodeCount": 1,
           "idempotencyKey": key})
}

async fn cluster(env: &Env) -> String {
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("keys", "keys")).await;
    created["id"].as_str().unwrap().to_owned()
}

async fn pool_count(env: &Env, cluster: &str) -> usize {
    let got = env.ok(CLUSTER_GET, json!({"tenantId": "acme", "clusterId": cluster})).await;
    got["nodePools"].as_array().unwrap().len()
}

async fn a_retried_node_pool_create_returns_the_same_pool(backend: Backend) {
    let env = super::start(backend).await;
    let cluster = cluster(&env).await;
    let made = env.ok(CREATE, extra(&cluster, "extra-1")).await;
    assert!(made["id"].as_str().unwrap().starts_with("knp_"), "{made}");
    let again = env.ok(CREATE, extra(&cluster, "extra-1")).await;
    assert_eq!(again["id"], made["id"], "a retry answers the pool the first call made");
    assert_eq!(pool_count(&env, &cluster).await, 3, "the retry added nothing");

    let mut changed = extra(&cluster, "extra-1");
    changed["nodeCount"] = json!(2);
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, changed).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "{answer}");
    assert_eq!(answer["error"]["details"]["reason"], "idempotencyKeyReused", "{answer}");
    assert_eq!(answer["error"]["details"]["nodePoolId"], made["id"], "{answer}");

    // Another key with the same name is a new request: the name is taken.
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, extra(&cluster, "extra-2")).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "{answer}");
    assert_eq!(answer["error"]["details"]["name"], "extra", "{answer}");
    assert_eq!(pool_count(&env, &cluster).await, 3);
}

async fn racing_node_pool_creates_with_one_key_make_one_pool(backend: Backend) {
    let env = super::start(backend).await;
    let cluster = cluster(&env).await;
    let http = reqwest::Client::new();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let request = http
            .post(format!("{}{CREATE}", env.server.endpoint))
            .bearer_auth(&env.acme_admin)
            .header("content-type", "application/json")
            .body(extra(&cluster, "raced").to_string());
        calls.spawn(async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        });
    }
    let answers = calls.join_all().await;
    for (status, answer) in &answers {
        assert_eq!(*status, 200, "{answer}");
        assert_eq!(answer["id"], answers[0].1["id"], "{answers:?}");
    }
    assert_eq!(pool_count(&env, &cluster).await, 3);
}

async fn a_node_pool_create_names_a_missing_key(backend: Backend) {
    let env = super::start(backend).await;
    let cluster = cluster(&env).await;
    let mut body = extra(&cluster, "unused");
    body.as_object_mut().unwrap().remove("idempotencyKey");
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, body).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{answer}");
    assert!(answer.to_string().contains("idempotencyKey"), "the missing key is named: {answer}");
    assert_eq!(pool_count(&env, &cluster).await, 2, "nothing was added");
}
