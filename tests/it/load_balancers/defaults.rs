//! The health check the answers show is the one in force: a setting left out
//! shows the provider's default (DigitalOcean's: `http` on port 80, path `/`, every 10 seconds,
//! failing after 5, 3 passes in, 5 failures out), never 0, in the answers of create, get, list
//! and update alike, and the provider is sent the same. A load balancer made without a health
//! check shows the provider's default one, and `"healthCheck": null` goes back to it.

use serde_json::{Value, json};

use super::{CREATE, GET, LIST, POOL, REGION, UPDATE, regional};
use better_compute::store::Backend;

crate::on_both_backends!(the_health_check_shown_is_the_one_in_force_with_the_providers_defaults);

/// DigitalOcean's health check, as the answers show it.
fn provider_default() -> Value {
    json!({"protocol": "http", "port": 80, "path": "/", "intervalSeconds": 10, "timeoutSeconds": 5,
        "healthyThreshold": 3, "unhealthyThreshold": 5})
}

/// The health check of the load balancer `id` in a `list` answer.
fn listed_check(list: &Value, id: &str) -> Value {
    let lbs = list["loadBalancers"].as_array().unwrap();
    lbs.iter().find(|lb| lb["id"] == id).map(|lb| lb["healthCheck"].clone()).unwrap()
}

async fn the_health_check_shown_is_the_one_in_force_with_the_providers_defaults(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    env.instance("acme", POOL, REGION, None).await;

    // Made without a health check: the provider's default one.
    let plain = env.ok(CREATE, regional("plain", json!({"pool": true}))).await;
    assert_eq!(plain["healthCheck"], provider_default(), "create's answer");
    let plain_id = plain["id"].as_str().unwrap().to_owned();

    // Made with some settings left out: the defaults for those.
    let mut body = regional("partial", json!({"pool": true}));
    body["healthCheck"] = json!({"protocol": "http", "port": 8080, "intervalSeconds": 15});
    let partial = env.ok(CREATE, body).await;
    let partial_id = partial["id"].as_str().unwrap().to_owned();
    let in_force = json!({"protocol": "http", "port": 8080, "path": "/", "intervalSeconds": 15, "timeoutSeconds": 5,
        "healthyThreshold": 3, "unhealthyThreshold": 5});
    assert_eq!(partial["healthCheck"], in_force, "create's answer");
    let ready = env.wait_load_balancer_state("acme", &partial_id, "ready").await;
    assert_eq!(ready["healthCheck"], in_force, "get's answer");
    let listed = env.ok(LIST, json!({"tenantId": "acme"})).await;
    assert_eq!(listed_check(&listed, &partial_id), in_force, "list's answer");
    assert_eq!(listed_check(&listed, &plain_id), provider_default());
    // The provider has the same values.
    let fake = env.fake_load_balancer(ready["providerName"].as_str().unwrap()).unwrap();
    assert_eq!(
        fake["healthCheck"],
        json!({"protocol": "http", "port": 8080, "path": "/", "check_interval_seconds": 15,
            "response_timeout_seconds": 5, "healthy_threshold": 3, "unhealthy_threshold": 5})
    );
    let plain_ready = env.wait_load_balancer_state("acme", &plain_id, "ready").await;
    let fake = env.fake_load_balancer(plain_ready["providerName"].as_str().unwrap()).unwrap();
    assert_eq!(
        fake["healthCheck"],
        json!({"protocol": "http", "port": 80, "path": "/", "check_interval_seconds": 10,
            "response_timeout_seconds": 5, "healthy_threshold": 3, "unhealthy_threshold": 5})
    );

    // Update's answer: a tcp check opens a connection and has no path.
    let tcp = json!({"tenantId": "acme", "loadBalancerId": partial_id,
        "healthCheck": {"protocol": "tcp", "port": 22, "unhealthyThreshold": 2}});
    let updating = env.ok(UPDATE, tcp).await;
    assert_eq!(
        updating["healthCheck"],
        json!({"protocol": "tcp", "port": 22, "path": "", "intervalSeconds": 10, "timeoutSeconds": 5,
            "healthyThreshold": 3, "unhealthyThreshold": 2})
    );
    env.wait_fake("acme", &partial_id, "a tcp check", |fake| fake["healthCheck"]["protocol"] == "tcp").await;
    env.wait_load_balancer_state("acme", &partial_id, "ready").await;

    // Named without a value, the health check goes back to the provider's default, there too.
    let reset = env.ok(UPDATE, json!({"tenantId": "acme", "loadBalancerId": partial_id, "healthCheck": null})).await;
    assert_eq!(reset["healthCheck"], provider_default(), "update's answer");
    let fake = env
        .wait_fake("acme", &partial_id, "the default check", |fake| {
            fake["healthCheck"]["protocol"] == "http" && fake["healthCheck"]["port"] == 80
        })
        .await;
    assert_eq!(fake["healthCheck"]["unhealthy_threshold"], 5, "{fake}");
    let got = env.wait_load_balancer_state("acme", &partial_id, "ready").await;
    assert_eq!(got["healthCheck"], provider_default());
    let got = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": plain_id})).await;
    assert_eq!(got["healthCheck"], provider_default());
}
