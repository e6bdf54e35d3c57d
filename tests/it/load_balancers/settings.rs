//! A load balancer's settings at the provider: sticky sessions, source ranges (translated to the
//! provider's `cidr:` firewall rules), the health check and the redirect; each update replaces
//! the parts given, and the provider gets the full representation every time (DigitalOcean's
//! PUT resets what it is not sent).

use serde_json::json;

use super::{CREATE, GET, POOL, REGION, UPDATE, regional};
use better_compute::store::Backend;

crate::on_both_backends!(settings_reach_the_provider_and_updates_replace_only_the_parts_given);

async fn settings_reach_the_provider_and_updates_replace_only_the_parts_given(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    env.instance("acme", POOL, REGION, None).await;
    let mut body = regional("tuned", json!({"pool": true}));
    body["forwarding"] = json!([
        {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
        {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "https", "targetPort": 8443, "tlsPassthrough": true},
    ]);
    body["healthCheck"] = json!({"protocol": "tcp", "port": 8080, "intervalSeconds": 30, "timeoutSeconds": 10,
        "healthyThreshold": 2, "unhealthyThreshold": 10});
    body["stickySessions"] = json!({"cookieName": "BC_LB", "ttlSeconds": 600});
    body["sourceRanges"] = json!({"allow": ["198.51.100.0/24", "203.0.113.7/32"], "deny": ["198.51.100.128/25"]});
    body["redirectHttpToHttps"] = json!(true);
    let id = env.ok(CREATE, body).await["id"].as_str().unwrap().to_owned();
    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    assert_eq!(ready["stickySessions"], json!({"cookieName": "BC_LB", "ttlSeconds": 600}));
    assert_eq!(ready["sourceRanges"]["deny"], json!(["198.51.100.128/25"]));
    let name = ready["providerName"].as_str().unwrap().to_owned();
    let fake = env.fake_load_balancer(&name).unwrap();
    assert_eq!(fake["stickySessions"], json!({"type": "cookies", "cookie_name": "BC_LB", "cookie_ttl_seconds": 600}));
    assert_eq!(
        fake["firewall"],
        json!({"allow": ["cidr:198.51.100.0/24", "cidr:203.0.113.7/32"], "deny": ["cidr:198.51.100.128/25"]})
    );
    assert_eq!(
        fake["healthCheck"],
        json!({"protocol": "tcp", "port": 8080, "path": "/", "check_interval_seconds": 30,
            "response_timeout_seconds": 10, "healthy_threshold": 2, "unhealthy_threshold": 10})
    );
    assert_eq!(fake["redirectHttpToHttps"], true);
    assert_eq!(fake["forwardingRules"][1]["tls_passthrough"], true);

    // Sticky sessions off: everything else stays, at the provider too.
    let off = json!({"tenantId": "acme", "loadBalancerId": id, "clearStickySessions": true});
    let updating = env.ok(UPDATE, off).await;
    assert_eq!(updating["stickySessions"], serde_json::Value::Null);
    let fake = env.wait_fake("acme", &id, "sticky sessions off", |f| f["stickySessions"]["type"] == "none").await;
    assert_eq!(fake["firewall"]["allow"].as_array().unwrap().len(), 2, "a PUT sends the firewall again");
    assert_eq!(fake["healthCheck"]["protocol"], "tcp", "and the health check");
    assert_eq!(fake["redirectHttpToHttps"], true, "and the redirect");
    env.wait_load_balancer_state("acme", &id, "ready").await;

    // Anyone may reach it again; no more redirect; a new health check.
    let change = json!({"tenantId": "acme", "loadBalancerId": id, "sourceRanges": {}, "redirectHttpToHttps": false,
        "healthCheck": {"protocol": "http", "port": 8080, "path": "/ready"}});
    env.ok(UPDATE, change).await;
    let fake =
        env.wait_fake("acme", &id, "firewall cleared", |f| f["firewall"] == json!({"allow": [], "deny": []})).await;
    assert_eq!(fake["redirectHttpToHttps"], false);
    assert_eq!(fake["healthCheck"]["path"], "/ready");
    assert_eq!(fake["healthCheck"]["check_interval_seconds"], 10, "fields not given take the provider's default");
    env.wait_load_balancer_state("acme", &id, "ready").await;
    let got = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(got["sourceRanges"], json!({"allow": [], "deny": []}));
    assert_eq!(got["version"], 3);
    assert_eq!(env.tag_requests(), 0);
}
