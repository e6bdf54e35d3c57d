//! As deployed: one `bc-server` and two `bc-worker` processes on Postgres converge 100 load
//! balancers on one DigitalOcean account, held by the fake to 60 calls in 2 s. The two workers
//! spend one budget (hardly a 429 between them, both taking a share), and the account's token,
//! rotated through the API mid-way and the old one revoked at the provider right after, fails
//! no pass: every call after the update goes out with the new token.

use std::time::{Duration, Instant};

use better_compute::secrets::SecretKey;
use better_compute::store::Backend;
use fakecloud::{FakeCloud, FakeCloudConfig, RateWindow};
use serde_json::json;
use sqlx::Row;

use super::{ACCOUNT, POOL, REGION, load_balancer};
use crate::harness::{Catalog, FAST_WORKER_ARGS, System, eventually, tenant_principal};

/// The token given through the API mid-way.
const ROTATED: &str = "dop_v1_rotated_token_for_the_pacing_test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_one_budget_and_a_rotated_token_fails_no_pass() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    cloud.set_digitalocean_rate_limits(&[RateWindow { requests: 60, window: Duration::from_secs(2) }]);
    cloud.accept_digitalocean_token(ROTATED);
    server.ok("/api/platform/tenants/create", &server.admin_token, json!({"id": "acme"})).await;
    let key = SecretKey::from_base64(&server.secret_key).unwrap();
    Catalog::new()
        .digitalocean_account(ACCOUNT, None, &[REGION])
        .pool(POOL, ACCOUNT, "metered", &[])
        .offer(POOL, "acme")
        .quota(POOL, "acme", "loadBalancers", 1_000)
        .seed(&server.store, &key, &cloud)
        .await;
    let limits = json!([{"requests": 60, "perSeconds": 2}]);
    server
        .ok("/api/platform/accounts/update", &server.admin_token, json!({"accountId": ACCOUNT, "rateLimits": limits}))
        .await;
    let acme = tenant_principal(&server.store, "acme", "admin").await;
    for n in 0..100 {
        server.ok("/api/compute/loadBalancers/create", &acme, load_balancer("acme", &format!("lb-{n}"))).await;
    }
    let database = sqlx::PgPool::connect(&server.database_url).await.unwrap();
    let ready = || async {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM load_balancers WHERE state = 'ready'")
            .fetch_one(&database)
            .await
            .unwrap();
        row.get::<i64, _>("n")
    };

    let started = Instant::now();
    let workers = [server.worker_process(FAST_WORKER_ARGS).await, server.worker_process(FAST_WORKER_ARGS).await];
    eventually(Duration::from_secs(120), "a third converged", || async { (ready().await >= 30).then_some(()) }).await;

    // The token rotates through the API; DigitalOcean revokes the old one right after.
    let old = FakeCloudConfig::default().digitalocean_token;
    server
        .ok("/api/platform/accounts/update", &server.admin_token, json!({"accountId": ACCOUNT, "credentials": ROTATED}))
        .await;
    let revoked = cloud.revoke_credentials(&old);

    eventually(Duration::from_secs(180), "all 100 ready", || async { (ready().await == 100).then_some(()) }).await;
    let took = started.elapsed();

    let failed: i64 = sqlx::query("SELECT COUNT(*) AS n FROM operation_log WHERE outcome <> 'ok'")
        .fetch_one(&database)
        .await
        .unwrap()
        .get("n");
    let failures: Vec<String> = sqlx::query("SELECT call, message FROM operation_log WHERE outcome <> 'ok' LIMIT 5")
        .fetch_all(&database)
        .await
        .unwrap()
        .iter()
        .map(|row| format!("{}: {}", row.get::<String, _>("call"), row.get::<String, _>("message")))
        .collect();
    assert_eq!(failed, 0, "no call of any pass failed: {failures:?}");
    let stuck: i64 = sqlx::query("SELECT COUNT(*) AS n FROM work_items WHERE attempts > 0 OR problem_class <> ''")
        .fetch_one(&database)
        .await
        .unwrap()
        .get("n");
    assert_eq!(stuck, 0, "no failed pass");

    let (before, after) = (cloud.digitalocean_calls(&old), cloud.digitalocean_calls(ROTATED));
    let throttled = before.throttled + after.throttled;
    assert!(throttled <= 5, "the two workers kept to one budget: {throttled} 429s ({before:?}, {after:?})");
    assert!(after.answered > 0, "the new token is used: {after:?}");
    let old_after_revocation = cloud.fault_hits(revoked).unwrap_or(0);
    // Only a call let out before the update committed can still carry the old token.
    assert!(old_after_revocation <= 2, "{old_after_revocation} calls used the revoked token");
    let shares: Vec<String> = workers.iter().map(|w| w.metrics()).collect();
    let calls_of = |metrics: &str| -> f64 {
        metrics
            .lines()
            .filter(|line| line.starts_with("bc_provider_account_calls_total{") && line.contains(ACCOUNT))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let (first, second) = (calls_of(&shares[0]), calls_of(&shares[1]));
    assert!(first > 0.0 && second > 0.0, "both workers called the provider: {first} and {second}");
    println!(
        "100 load balancers in {took:?} by two workers ({first} and {second} calls let out), {throttled} 429s, \
         {} calls with the old token and {} with the new, {old_after_revocation} refused after the revocation",
        before.answered, after.answered
    );
}
