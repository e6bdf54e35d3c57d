//! The state an update answers: once the provider has made the load balancer
//! it is `updating` until the provider has applied the change, whether it was `ready`, still
//! `pending` while the provider activates it, or failed before it was ever ready; the reconciler
//! keeps it `updating` (never `pending` again) until it is `ready`. One the provider never made
//! stays `pending`: there is nothing to update, the change is part of its making.

use std::cell::RefCell;
use std::time::Duration;

use serde_json::{Value, json};

use super::{CREATE, Env, GET, POOL, REGION, UPDATE, regional};
use better_compute::store::Backend;
use fakecloud::Failure;

use crate::harness::{passes_recorded, poll};

crate::on_both_backends!(
    an_update_of_a_load_balancer_the_provider_made_is_updating_until_applied,
    an_update_of_a_load_balancer_the_provider_never_made_stays_pending,
);

/// How long the fake cloud keeps a load balancer `new`: time enough to change it before.
const ACTIVATION: Duration = Duration::from_secs(4);

/// Polls the store until the reconciler recorded the provider's id of load balancer `id`.
async fn wait_provider_id(env: &Env, id: &str) -> String {
    poll(Duration::from_secs(20), "the provider's id recorded", || async {
        let lb = env.store.load_balancer_fetch(id).await.unwrap().unwrap();
        if lb.provider_id.is_empty() { Err(format!("{lb:?}")) } else { Ok(lb.provider_id) }
    })
    .await
}

/// Polls `get` until the load balancer is `ready`, returning every state seen on the way.
async fn states_until_ready(env: &Env, id: &str) -> Vec<String> {
    let seen: RefCell<Vec<String>> = RefCell::default();
    poll(Duration::from_secs(20), "ready", || async {
        let lb = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
        let state = lb["state"].as_str().unwrap().to_owned();
        let mut seen = seen.borrow_mut();
        if seen.last() != Some(&state) {
            seen.push(state.clone());
        }
        if state == "ready" { Ok(()) } else { Err(format!("{lb}")) }
    })
    .await;
    seen.take()
}

fn change(id: &str, deny: &str) -> Value {
    json!({"tenantId": "acme", "loadBalancerId": id, "sourceRanges": {"deny": [deny]}})
}

async fn an_update_of_a_load_balancer_the_provider_made_is_updating_until_applied(backend: Backend) {
    let mut env = super::setup(backend).fake_operations(ACTIVATION).start().await;
    env.start_worker();
    env.instance("acme", POOL, REGION, None).await;
    let created = env.ok(CREATE, regional("early", json!({"pool": true}))).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let provider_id = wait_provider_id(&env, &id).await;
    let made = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(made["state"], "pending", "made at the provider, not yet active: {made}");

    // The provider refuses the first change: it fails before it was ever ready.
    env.cloud.fail_next(
        "loadBalancer",
        "update",
        &provider_id,
        Failure::Refuse { status: 422, message: "the load balancer is still being provisioned".into() },
    );
    let updating = env.ok(UPDATE, change(&id, "192.0.2.0/24")).await;
    assert_eq!((updating["state"].as_str(), updating["version"].as_i64()), (Some("updating"), Some(2)));
    let failed = env.wait_load_balancer_state("acme", &id, "error").await;
    assert!(failed["message"].as_str().unwrap().contains("still being provisioned"), "{failed}");

    // A change after that failure is `updating` too, and stays so until the provider applied it.
    let updating = env.ok(UPDATE, change(&id, "198.51.100.0/24")).await;
    assert_eq!((updating["state"].as_str(), updating["message"].as_str()), (Some("updating"), Some("")));
    let seen = states_until_ready(&env, &id).await;
    assert!(seen.iter().all(|state| state == "updating" || state == "ready"), "states seen: {seen:?}");
    let fake = env.fake_load_balancer(updating["providerName"].as_str().unwrap()).unwrap();
    assert_eq!(fake["firewall"]["deny"], json!(["cidr:198.51.100.0/24"]));
    let events: Vec<String> =
        env.events("acme", &id).await.iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        events,
        ["providerLoadBalancer.created", "providerLoadBalancer.error", "providerLoadBalancer.ready"],
        "ready is published once, when it first is"
    );

    // Once ready, an update is `updating` until applied, then `ready` again.
    let updating = env.ok(UPDATE, change(&id, "203.0.113.0/24")).await;
    assert_eq!(updating["state"], "updating");
    let seen = states_until_ready(&env, &id).await;
    assert!(seen.iter().all(|state| state == "updating" || state == "ready"), "states seen: {seen:?}");
}

async fn an_update_of_a_load_balancer_the_provider_never_made_stays_pending(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    // It names a certificate that is not ready: the provider is not asked yet.
    let certificate = env.certificate("acme", POOL, false).await;
    let mut body = regional("waiting", json!({"pool": true}));
    body["forwarding"] = json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http",
        "targetPort": 8080, "certificateId": certificate}]);
    let id = env.ok(CREATE, body).await["id"].as_str().unwrap().to_owned();
    // The reconciler looks at it a few times.
    passes_recorded(&env.db.url, &id, 3).await;
    let updated = env.ok(UPDATE, change(&id, "192.0.2.0/24")).await;
    assert_eq!((updated["state"].as_str(), updated["version"].as_i64()), (Some("pending"), Some(2)));
    passes_recorded(&env.db.url, &id, 2).await;
    let waiting = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(waiting["state"], "pending", "{waiting}");
    assert!(env.fake_load_balancer(waiting["providerName"].as_str().unwrap()).is_none());
    // Once the certificate is ready it is made with the change, and ready.
    env.certificate_ready(&certificate).await;
    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    let fake = env.fake_load_balancer(ready["providerName"].as_str().unwrap()).unwrap();
    assert_eq!(fake["firewall"]["deny"], json!(["cidr:192.0.2.0/24"]));
}
