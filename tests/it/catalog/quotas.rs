//! Quota booking under concurrency, on Postgres (where bookings really run in parallel).

use std::sync::Arc;

use better_compute::error::Code;
use better_compute::store::Backend;
use serde_json::json;

use crate::harness::{Client, Platform, System};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn fifty_parallel_bookings_against_a_quota_of_five_book_exactly_five_on_postgres() {
    let server = System::on(Backend::Postgres).server().await;
    let db = server.db.clone();
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    client
        .ok(
            "/api/platform/quotas/create",
            json!({"poolId": platform.do_pool, "tenantId": "acme", "resourceKind": "loadBalancers", "limit": 5}),
        )
        .await;
    // A store of its own with enough connections that the 50 transactions overlap.
    let store = Arc::new(better_compute::store::Store::connect(&db.url, 20).await.unwrap());
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (store, barrier, pool) = (store.clone(), barrier.clone(), platform.do_pool.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.quota_book(&pool, "acme", "loadBalancers", 1).await
            })
        })
        .collect();
    let mut booked = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(()) => booked += 1,
            Err(error) => {
                assert_eq!(error.code, Code::QuotaExceeded, "{error}");
                assert_eq!(error.details["limit"], 5);
            }
        }
    }
    assert_eq!(booked, 5, "exactly the limit is booked");
    let key = json!({"poolId": platform.do_pool, "tenantId": "acme", "resourceKind": "loadBalancers"});
    assert_eq!(client.ok("/api/platform/quotas/get", key.clone()).await["used"], 5);

    // Refunds give room back, and never go below zero.
    for _ in 0..7 {
        store.quota_refund(&platform.do_pool, "acme", "loadBalancers", 1).await.unwrap();
    }
    assert_eq!(client.ok("/api/platform/quotas/get", key).await["used"], 0);
    // Another tenant, or another kind, has no row: it is granted none.
    let error = store.quota_book(&platform.do_pool, "globex", "loadBalancers", 1).await.unwrap_err();
    assert_eq!((error.code, error.details["limit"].as_i64()), (Code::QuotaExceeded, Some(0)));
    let error = store.quota_book(&platform.do_pool, "acme", "instances", 1).await.unwrap_err();
    assert_eq!(error.code, Code::QuotaExceeded);
    store.close().await;
}
