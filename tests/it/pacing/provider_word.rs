//! The provider's word wins over the account's own pace: a DigitalOcean stricter than the
//! account knows (8 calls in 4 s, where the account keeps the published 250 a minute) answers
//! `ratelimit-remaining: 0` and 429 with `Retry-After`; each holds every call on the account
//! until then, so the load balancers converge, and only calls already under way when the
//! window filled are answered 429, not every pass that comes along.

use std::time::Duration;

use better_compute::store::Backend;
use fakecloud::{FakeCloudConfig, RateWindow};

use super::{load_balancer, setup};

crate::on_both_backends!(a_stricter_provider_holds_every_call_until_its_window_frees);

async fn a_stricter_provider_holds_every_call_until_its_window_frees(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.cloud.set_digitalocean_rate_limits(&[RateWindow { requests: 8, window: Duration::from_secs(4) }]);
    let mut ids = Vec::new();
    for n in 0..6 {
        let created = env.ok("/api/compute/loadBalancers/create", load_balancer("acme", &format!("lb-{n}"))).await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    env.start_worker();
    for id in &ids {
        let body = serde_json::json!({"tenantId": "acme", "loadBalancerId": id});
        env.get_until(&env.acme_admin, "loadBalancers", body, Duration::from_secs(90), "ready", |lb| {
            lb["state"] == "ready"
        })
        .await;
    }
    let counts = env.cloud.digitalocean_calls(&FakeCloudConfig::default().digitalocean_token);
    // Without the provider's word each pass would find the window full in turn; with it, a 429
    // comes only to a call that was under way when the window filled.
    assert!(counts.throttled * 2 <= counts.answered, "{counts:?}");
    assert!(counts.answered >= 6, "{counts:?}");
    println!("6 load balancers through an 8-in-4-s DigitalOcean: {counts:?}");
}
