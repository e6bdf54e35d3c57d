//! The quota under concurrency, on Postgres (many connections, row locks): 50 creates at once
//! against a quota of 5 leave exactly 5 load balancers and 5 booked; the rest are
//! `QUOTA_EXCEEDED` and leave nothing behind.

use serde_json::json;
use sqlx::Connection;

use super::{CREATE, LIST, regional};
use better_compute::store::Backend;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_creates_against_a_quota_of_five_leave_exactly_five() {
    let env = super::start(Backend::Postgres).await;
    let http = reqwest::Client::new();
    let mut creates = tokio::task::JoinSet::new();
    for i in 0..50 {
        let request = http
            .post(format!("{}{CREATE}", env.server.endpoint))
            .bearer_auth(&env.acme_admin)
            .header("content-type", "application/json")
            .body(regional(&format!("lb-{i}"), json!({"pool": true})).to_string());
        creates.spawn(async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<serde_json::Value>().await.unwrap())
        });
    }
    let answers = creates.join_all().await;
    let made = answers.iter().filter(|(status, _)| *status == 200).count();
    let refused: Vec<_> = answers.iter().filter(|(status, _)| *status != 200).collect();
    assert_eq!(made, 5, "{answers:?}");
    for (status, body) in &refused {
        assert_eq!((*status, body["error"]["code"].as_str()), (429, Some("QUOTA_EXCEEDED")), "{body}");
    }
    assert_eq!(env.quota_used("acme").await, 5);
    let listed = env.ok(LIST, json!({"tenantId": "acme"})).await;
    assert_eq!(listed["loadBalancers"].as_array().unwrap().len(), 5);
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM load_balancers").fetch_one(&mut conn).await.unwrap();
    let items: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM work_items WHERE kind = 'provider-load-balancer'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let grants: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM authz_resources WHERE resource_type = 'compute-provider-load-balancer'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!((rows, items, grants), (5, 5, 5), "the refused creates wrote nothing");
}
