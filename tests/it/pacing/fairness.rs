//! One account's budget shared fairly: with the fake DigitalOcean holding the account to 60
//! calls in 2 s (its 250 a minute, scaled down so the test runs fast) and the account paced to
//! the same, 300 load balancers of three tenants converge with hardly a 429, and the smallest
//! tenant's one load balancer, made after the largest tenant's 250 are under way, does not
//! wait behind them.

use std::time::{Duration, Instant};

use better_compute::store::Backend;
use fakecloud::{FakeCloudConfig, RateWindow};
use serde_json::json;
use sqlx::{Connection, Row};

use super::{load_balancer, setup};
use crate::harness::eventually;

/// Ready load balancers of `tenant`, read from the store.
async fn ready_of(env: &super::Env, tenant: &str) -> i64 {
    let mut connection = sqlx::AnyConnection::connect(&env.server.db.url).await.unwrap();
    sqlx::query("SELECT COUNT(*) AS n FROM load_balancers WHERE tenant_id = $1 AND state = 'ready'")
        .bind(tenant)
        .fetch_one(&mut connection)
        .await
        .unwrap()
        .try_get("n")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_smallest_tenant_does_not_wait_behind_the_largest_and_the_limit_holds() {
    let mut env = setup(Backend::Postgres).start().await;
    let initech = env.third_tenant().await;
    env.pace_account(&[(60, 2)]).await;
    env.cloud.set_digitalocean_rate_limits(&[RateWindow { requests: 60, window: Duration::from_secs(2) }]);

    for n in 0..250 {
        env.ok("/api/compute/loadBalancers/create", load_balancer("acme", &format!("acme-{n}"))).await;
    }
    for n in 0..49 {
        env.ok_as(&env.globex_admin, "/api/compute/loadBalancers/create", load_balancer("globex", &format!("gx-{n}")))
            .await;
    }
    let started = Instant::now();
    env.start_worker();
    eventually(Duration::from_secs(60), "the worker busy with acme's", || async {
        (ready_of(&env, "acme").await >= 5).then_some(())
    })
    .await;

    // initech's one load balancer, behind acme's 245 and globex's backlog.
    let busy_after = started.elapsed();
    let asked = Instant::now();
    let small = env.ok_as(&initech, "/api/compute/loadBalancers/create", load_balancer("initech", "one")).await;
    let small_id = small["id"].as_str().unwrap().to_owned();
    let body = json!({"tenantId": "initech", "loadBalancerId": small_id});
    env.get_until(&initech, "loadBalancers", body, Duration::from_secs(60), "ready", |lb| lb["state"] == "ready").await;
    let small_took = asked.elapsed();
    let acme_ready = ready_of(&env, "acme").await;
    assert!(
        acme_ready < 150,
        "initech's load balancer took {small_took:?}, while {acme_ready} of acme's 250 became ready: it waited behind them"
    );

    eventually(Duration::from_secs(240), "all 300 ready", || async {
        let ready = ready_of(&env, "acme").await + ready_of(&env, "globex").await + ready_of(&env, "initech").await;
        (ready == 300).then_some(())
    })
    .await;
    let all_took = started.elapsed();
    let token = FakeCloudConfig::default().digitalocean_token;
    let counts = env.cloud.digitalocean_calls(&token);
    assert!(counts.throttled <= 5, "{} calls were answered 429 of {} ({counts:?})", counts.throttled, counts.answered);
    let account = env.account().await;
    assert_eq!(account["rateLimits"], json!([{"requests": 60, "perSeconds": 2}]), "{account}");
    assert_eq!(account["rateLimitsSet"], true);
    println!(
        "300 load balancers in {all_took:?} with {} calls and {} 429s; initech's one in {small_took:?} \
         (acme had {acme_ready} ready then; the first 5 of acme's took {busy_after:?})",
        counts.answered, counts.throttled
    );
}
