//! A create's idempotency key, as the page promises it: a retry with the same key returns the
//! same cluster (also when creates with it race, and whatever changed since it was made), the
//! same key with any other field changed is `CONFLICT` saying the key was reused, spelling out
//! a default is the same request, and a cluster made by an earlier release is still recognised.

use better_compute::proto::compute::CreateKubernetesClusterRequest;
use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::Connection;

use super::{Env, FREE_POOL, POOL};

crate::on_both_backends!(
    racing_creates_with_one_key_answer_one_cluster,
    a_retry_returns_the_cluster_whatever_changed_since,
    spelling_out_a_default_is_the_same_request,
    a_cluster_of_an_earlier_release_is_recognised_on_a_retry,
);

const CREATE: &str = "/api/compute/kubernetesClusters/create";

fn autopilot(name: &str, key: &str) -> Value {
    json!({"tenantId": "acme", "poolId": POOL, "name": name, "mode": "autopilot", "location": "europe-west1",
           "idempotencyKey": key})
}

/// Sends `bodies` at once, each on its own task; the answers in the order they came.
async fn all_at_once(env: &Env, bodies: Vec<Value>) -> Vec<(u16, Value)> {
    let http = reqwest::Client::new();
    let mut calls = tokio::task::JoinSet::new();
    for body in bodies {
        let request = http
            .post(format!("{}{CREATE}", env.server.endpoint))
            .bearer_auth(&env.acme_admin)
            .header("content-type", "application/json")
            .body(body.to_string());
        calls.spawn(async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        });
    }
    calls.join_all().await
}

async fn racing_creates_with_one_key_answer_one_cluster(backend: Backend) {
    let env = super::setup(backend).max_clusters_per_tenant(1_000).start().await;
    for round in 0..20 {
        // The same request eight times at once: one cluster, eight times the same answer.
        let key = format!("same-{round}");
        let answers = all_at_once(&env, vec![autopilot(&format!("same-{round}"), &key); 8]).await;
        let ids: Vec<&str> = answers
            .iter()
            .map(|(status, answer)| {
                assert_eq!(*status, 200, "round {round}: {answer}");
                answer["id"].as_str().unwrap()
            })
            .collect();
        assert!(ids.iter().all(|id| *id == ids[0]), "round {round}: {ids:?}");

        // Eight different requests with one key: one is made, the other seven are told the key
        // was reused.
        let key = format!("reused-{round}");
        let bodies = (0..8)
            .map(|i| {
                let mut body = autopilot(&format!("reused-{round}"), &key);
                body["description"] = json!(format!("request {i}"));
                body
            })
            .collect();
        let answers = all_at_once(&env, bodies).await;
        let made: Vec<&Value> = answers.iter().filter(|(status, _)| *status == 200).map(|(_, a)| a).collect();
        assert_eq!(made.len(), 1, "round {round}: {answers:?}");
        for (status, answer) in answers.iter().filter(|(status, _)| *status != 200) {
            assert_eq!((*status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "round {round}");
            assert_eq!(answer["error"]["details"]["reason"], "idempotencyKeyReused", "round {round}: {answer}");
            assert_eq!(answer["error"]["details"]["clusterId"], made[0]["id"], "round {round}: {answer}");
        }
    }
    let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    assert_eq!(listed["clusters"].as_array().unwrap().len(), 40);
}

async fn a_retry_returns_the_cluster_whatever_changed_since(backend: Backend) {
    let env = super::setup(backend).max_clusters_per_tenant(1).start().await;
    let mut body = autopilot("web", "web");
    body["poolId"] = json!(FREE_POOL);
    let made = env.ok(CREATE, body.clone()).await;
    // The tenant is at its cap now, and the pool's offer is suspended: a new cluster would be
    // refused on both counts, the retry of the one made is not.
    let mut other = autopilot("other", "other");
    other["poolId"] = json!(FREE_POOL);
    let (status, refused) = env.post_as(&env.acme_admin, CREATE, other).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (429, Some("QUOTA_EXCEEDED")), "{refused}");
    let offer = json!({"poolId": FREE_POOL, "tenantId": "acme", "state": "suspended"});
    let (status, answer) = env.post_as(&env.server.admin_token, "/api/platform/offers/update", offer).await;
    assert_eq!(status, 200, "{answer}");
    let again = env.ok(CREATE, body.clone()).await;
    assert_eq!(again["id"], made["id"]);
    // The key reused for another request is still a conflict.
    body["description"] = json!("another");
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, body).await;
    assert_eq!((status, answer["error"]["details"]["reason"].as_str()), (409, Some("idempotencyKeyReused")));
}

async fn spelling_out_a_default_is_the_same_request(backend: Backend) {
    let env = super::start(backend).await;
    let made = env.ok(CREATE, autopilot("web", "web")).await;
    let mut spelled = autopilot("web", "web");
    spelled["releaseChannel"] = json!("regular");
    spelled["privateNodes"] = json!(false);
    spelled["authorizedNetworks"] = json!([]);
    assert_eq!(env.ok(CREATE, spelled).await["id"], made["id"]);
    let mut other = autopilot("web", "web");
    other["releaseChannel"] = json!("stable");
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, other).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "{answer}");
}

async fn a_cluster_of_an_earlier_release_is_recognised_on_a_retry(backend: Backend) {
    let env = super::start(backend).await;
    let body = autopilot("web", "web");
    let made = env.ok(CREATE, body.clone()).await;
    // As an earlier release wrote it: the digest of the fields it listed by hand.
    let request = CreateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        pool_id: POOL.into(),
        name: "web".into(),
        mode: "autopilot".into(),
        location: "europe-west1".into(),
        idempotency_key: "web".into(),
        ..Default::default()
    };
    let legacy = better_compute::service::legacy_request_digest(&request);
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let updated = sqlx::query("UPDATE kubernetes_clusters SET request_digest = $1 WHERE id = $2")
        .bind(&legacy)
        .bind(made["id"].as_str().unwrap())
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(updated.rows_affected(), 1);
    assert_eq!(env.ok(CREATE, body.clone()).await["id"], made["id"], "a retry, not a conflict");
    let mut changed = body;
    changed["description"] = json!("changed");
    let (status, answer) = env.post_as(&env.acme_admin, CREATE, changed).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("CONFLICT")), "{answer}");
}
