//! What a load balancer reaches over time: an instance counts once it has a machine (added by
//! the settled pass, or at once when the machine is recorded) and until it is being deleted;
//! the provider is asked only once the certificates the load balancer names are ready, and a
//! certificate it names is not deleted under it; a provider's refusal is `error` with its words.

use std::time::Duration;

use serde_json::json;
use sqlx::Connection;

use super::fixtures::droplets;
use super::{CREATE, DELETE, Env, GET, POOL, REGION, UPDATE, regional};
use better_compute::reconcile::{ProviderLoadBalancers, Reconciler, Timings};
use better_compute::store::Backend;
use fakecloud::Failure;

use crate::harness::passes_recorded;

const CERTIFICATE_DELETE: &str = "/api/compute/certificates/delete";

crate::on_both_backends!(
    an_instance_that_gains_a_machine_is_added_by_the_settled_pass,
    a_machine_recorded_for_an_instance_is_added_at_once,
    the_provider_is_asked_once_the_certificates_it_names_are_ready,
    a_provider_refusal_is_an_error_with_its_words,
    a_certificate_is_deleted_only_once_no_load_balancer_names_it,
);

/// Records a machine for an instance behind the instance module's back (no wake-up): only a
/// periodic pass can find it.
async fn record_machine_quietly(env: &Env, instance: &str, droplet: u64) {
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    sqlx::query("UPDATE instances SET machine_id = $2 WHERE id = $1")
        .bind(instance)
        .bind(droplet.to_string())
        .execute(&mut conn)
        .await
        .unwrap();
}

async fn an_instance_that_gains_a_machine_is_added_by_the_settled_pass(backend: Backend) {
    let mut env = super::start(backend).await;
    // The spec's settled interval is five minutes; the test's is one second.
    let spec_intervals =
        ProviderLoadBalancers { accounts: env.digitalocean.clone(), timings: Timings::SPEC }.schedule();
    assert_eq!(spec_intervals.settled, Duration::from_secs(300));
    env.start_worker_settling(Duration::from_secs(1));
    let ready = env.instance("acme", POOL, REGION, None).await;
    let late = env.instance_row("acme", POOL, REGION, None).await;
    let id = env.ok(CREATE, regional("web", json!({"pool": true}))).await["id"].as_str().unwrap().to_owned();
    let lb = env.wait_load_balancer_state("acme", &id, "ready").await;
    assert_eq!(lb["reachedIds"], json!([ready.id]), "no machine yet: not reached");
    let droplet = env.droplet_for(&late).await;
    record_machine_quietly(&env, &late, droplet).await;
    let fake = env.wait_fake("acme", &id, "the settled pass adds it", |fake| Env::fake_droplets(fake).len() == 2).await;
    let mut wanted = vec![ready.droplet, droplet];
    wanted.sort();
    assert_eq!(Env::fake_droplets(&fake), wanted);
    let updated = env.wait_event("acme", &id, "updated").await;
    assert_eq!(updated["data"]["changed"], json!(["targets"]));
}

async fn a_machine_recorded_for_an_instance_is_added_at_once(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let first = env.instance("acme", POOL, REGION, None).await;
    let id = env.ok(CREATE, regional("web", json!({"pool": true}))).await["id"].as_str().unwrap().to_owned();
    env.wait_load_balancer_state("acme", &id, "ready").await;
    // The settled pass is ten minutes away: only the wake-up of the machine's record can add it.
    let second = env.instance("acme", POOL, REGION, None).await;
    env.wait_fake("acme", &id, "added at once", |fake| Env::fake_droplets(fake) == droplets(&[&first, &second])).await;
}

async fn the_provider_is_asked_once_the_certificates_it_names_are_ready(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let web = env.instance("acme", POOL, REGION, None).await;
    let certificate = env.certificate("acme", POOL, false).await;
    let mut body = regional("tls", json!({"instanceIds": [web.id]}));
    body["forwarding"] = json!([
        {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
        {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 8080, "certificateId": certificate},
    ]);
    body["redirectHttpToHttps"] = json!(true);
    let id = env.ok(CREATE, body).await["id"].as_str().unwrap().to_owned();
    let name = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await["providerName"]
        .as_str()
        .unwrap()
        .to_owned();
    // The reconciler looks at it a few times while the certificate is pending.
    passes_recorded(&env.db.url, &id, 3).await;
    assert!(env.fake_load_balancer(&name).is_none(), "the provider is not asked while the certificate is pending");
    let waiting = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!((waiting["state"].as_str(), waiting["message"].as_str()), (Some("pending"), Some("")));

    env.certificate_ready(&certificate).await;
    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    assert!(!ready["address"].as_str().unwrap().is_empty());
    let provider_certificate = env.store.certificate_fetch(&certificate).await.unwrap().unwrap().provider_id;
    let fake = env.fake_load_balancer(&name).unwrap();
    assert_eq!(fake["forwardingRules"][1]["certificate_id"], provider_certificate.as_str());
    assert_eq!(fake["redirectHttpToHttps"], true);
    assert_eq!(Env::fake_droplets(&fake), droplets(&[&web]));
}

async fn a_provider_refusal_is_an_error_with_its_words(backend: Backend) {
    let mut env = super::start(backend).await;
    let id = env.ok(CREATE, regional("refused", json!({"pool": true}))).await["id"].as_str().unwrap().to_owned();
    let name = format!("bc-lb-{}", &id[4..28]);
    env.cloud.fail_next(
        "loadBalancer",
        "create",
        &name,
        Failure::Refuse { status: 422, message: "the region is out of load balancers".into() },
    );
    env.start_worker();
    let failed = env.wait_load_balancer_state("acme", &id, "error").await;
    assert!(failed["message"].as_str().unwrap().contains("the region is out of load balancers"), "{failed}");
    let events = env.events("acme", &id).await;
    let error = events.iter().find(|e| e["type"] == "providerLoadBalancer.error").expect("an error event");
    assert!(error["data"]["message"].as_str().unwrap().contains("out of load balancers"));
    assert!(env.fake_load_balancer(&name).is_none());
    // It stays in error until something changes: a change retries at once.
    let change = json!({"tenantId": "acme", "loadBalancerId": id, "sourceRanges": {"deny": ["192.0.2.0/24"]}});
    assert_eq!(env.ok(UPDATE, change).await["state"], "pending", "never made at the provider: pending again");
    env.wait_load_balancer_state("acme", &id, "ready").await;

    // A refused delete is an error too, retried on its backoff.
    let provider_id = env.fake_load_balancer(&name).unwrap()["id"].as_str().unwrap().to_owned();
    env.cloud.fail_next(
        "loadBalancer",
        "delete",
        &provider_id,
        Failure::Refuse { status: 403, message: "the load balancer is locked".into() },
    );
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    let deleted = env.wait_load_balancer_state("acme", &id, "deleted").await;
    assert!(deleted["deletedAt"].is_string());
    let events = env.events("acme", &id).await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "providerLoadBalancer.error"
                && e["data"]["message"].as_str().unwrap().contains("locked")),
        "{events:?}"
    );
    assert!(env.fake_load_balancer(&name).is_none());
}

async fn a_certificate_is_deleted_only_once_no_load_balancer_names_it(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let certificate = env.certificate("acme", POOL, true).await;
    let https = |certificate: &str| {
        json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 8080,
            "certificateId": certificate}])
    };
    let mut body = regional("tls", json!({"pool": true}));
    body["forwarding"] = https(&certificate);
    let id = env.ok(CREATE, body.clone()).await["id"].as_str().unwrap().to_owned();
    env.wait_load_balancer_state("acme", &id, "ready").await;

    // Named by a load balancer: refused, naming it, and nothing changes.
    let delete = |certificate: &str| json!({"tenantId": "acme", "certificateId": certificate});
    let (status, code, details) = env.refused(CERTIFICATE_DELETE, delete(&certificate)).await;
    assert_eq!((status, code.as_str()), (409, "INVALID_STATE"));
    assert_eq!(details["reason"], "inUse");
    assert_eq!(details["loadBalancers"], json!([id]));
    let kept = env.store.certificate_fetch(&certificate).await.unwrap().unwrap();
    assert_eq!((kept.state.as_str(), kept.delete_requested_at), ("ready", None), "nothing changed");
    assert_eq!(env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await["state"], "ready");

    // Once the load balancer names another, it goes; and what is being deleted is named by
    // nothing new.
    let other = env.certificate("acme", POOL, true).await;
    let rename = json!({"tenantId": "acme", "loadBalancerId": id, "forwarding": https(&other)});
    env.ok(UPDATE, rename).await;
    let provider_certificate = env.store.certificate_fetch(&other).await.unwrap().unwrap().provider_id;
    env.wait_fake("acme", &id, "the new certificate", |f| {
        f["forwardingRules"][0]["certificate_id"] == provider_certificate.as_str()
    })
    .await;
    assert_eq!(env.ok(CERTIFICATE_DELETE, delete(&certificate)).await["state"], "deleting");
    let mut again = body.clone();
    again["name"] = json!("again");
    again["idempotencyKey"] = json!("again");
    let (status, code, details) = env.refused(CREATE, again).await;
    assert_eq!((status, code.as_str()), (409, "INVALID_STATE"), "a certificate being deleted is named by nothing new");
    assert_eq!(details["certificateId"], certificate.as_str());
    let back = json!({"tenantId": "acme", "loadBalancerId": id, "forwarding": https(&certificate)});
    assert_eq!(env.refused(UPDATE, back).await.1, "INVALID_STATE", "nor by a change");

    // A load balancer being deleted still uses it at the provider: refused until it is gone.
    env.stop_worker().await;
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    let (_, code, details) = env.refused(CERTIFICATE_DELETE, delete(&other)).await;
    assert_eq!((code.as_str(), details["loadBalancers"].clone()), ("INVALID_STATE", json!([id])));
    env.start_worker();
    env.wait_load_balancer_state("acme", &id, "deleted").await;
    assert_eq!(env.ok(CERTIFICATE_DELETE, delete(&other)).await["state"], "deleting");
}
