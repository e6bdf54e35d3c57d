//! Certificates: a custom one is read from its PEMs (names, expiry, fingerprint) and uploaded; a
//! Let's Encrypt one is ordered for its names; both are `ready` once the provider verified
//! them, and gone from the provider once deleted. Every refusal names its field.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{DO_POOL, Env, GKE_POOL, SUSPENDED_POOL};
use crate::harness::violated_fields;

const CREATE: &str = "/api/compute/certificates/create";
const GET: &str = "/api/compute/certificates/get";
const LIST: &str = "/api/compute/certificates/list";
const DELETE: &str = "/api/compute/certificates/delete";

/// A fresh key and a leaf for `names` valid from 2020 to `until_year` (PEMs).
pub fn issue(names: &[&str], until_year: i32) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(until_year, 1, 1);
    let leaf = params.self_signed(&key).unwrap();
    (key.serialize_pem(), leaf.pem())
}

/// A custom certificate request of acme.
pub fn custom(name: &str, key: &str, leaf: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": DO_POOL, "name": name, "type": "custom", "privateKey": key,
        "leafCertificate": leaf, "idempotencyKey": name,
    })
}

/// A Let's Encrypt certificate request of acme.
pub fn lets_encrypt(name: &str, names: &[&str]) -> Value {
    json!({"tenantId": "acme", "poolId": DO_POOL, "name": name, "type": "letsEncrypt", "dnsNames": names,
           "idempotencyKey": name})
}

/// The fake's certificates.
fn provider_certificates(env: &Env) -> Vec<Value> {
    env.inspect()["digitalocean"]["certificates"].as_array().cloned().unwrap_or_default()
}

async fn a_custom_certificate_shows_its_names_and_expiry_and_is_ready_once_verified(backend: Backend) {
    let env = super::start(backend).await;
    let (key, leaf) = issue(&["www.example.com", "example.com"], 2090);
    let created = env.ok(CREATE, custom("site", &key, &leaf)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("pcert_"), "{created}");
    assert_eq!(created["state"], "pending");
    assert_eq!(created["type"], "custom");
    assert_eq!(created["dnsNames"], json!(["www.example.com", "example.com"]));
    assert_eq!(created["notAfter"], "2090-01-01T00:00:00Z");
    assert_eq!(created["sha256Fingerprint"].as_str().unwrap().len(), 64);
    for field in ["privateKey", "leafCertificate", "certificateChain"] {
        assert!(created.get(field).is_none(), "{field} is not part of a certificate: {created}");
    }
    let ready = env.wait_state("certificates", "certificateId", &id, "ready").await;
    assert_eq!(ready["dnsNames"], created["dnsNames"]);
    let at_provider = provider_certificates(&env);
    assert_eq!(at_provider.len(), 1);
    assert_eq!((at_provider[0]["type"].as_str(), at_provider[0]["state"].as_str()), (Some("custom"), Some("verified")));
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["certificates"][0]["id"], created["id"]);

    let deleting = env.ok(DELETE, json!({"tenantId": "acme", "certificateId": id})).await;
    assert_eq!(deleting["state"], "deleting");
    env.wait_state("certificates", "certificateId", &id, "deleted").await;
    assert!(provider_certificates(&env).is_empty());
    assert_eq!(
        env.event_types(&id).await,
        ["certificate.created", "certificate.ready", "certificate.deleting", "certificate.deleted"]
    );
}

async fn a_lets_encrypt_certificate_is_ordered_for_its_names(backend: Backend) {
    let env = super::start(backend).await;
    let created = env.ok(CREATE, lets_encrypt("auto", &["shop.example.com", "*.cdn.example.com"])).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!((created["type"].as_str(), created["notAfter"].as_str()), (Some("letsEncrypt"), None));
    let ready = env.wait_state("certificates", "certificateId", id, "ready").await;
    assert!(ready["notAfter"].is_string(), "the provider's expiry is shown once it reports one: {ready}");
    let at_provider = &provider_certificates(&env)[0];
    assert_eq!(at_provider["type"], "lets_encrypt");
    assert_eq!(at_provider["dns_names"], json!(["shop.example.com", "*.cdn.example.com"]));
}

async fn create_refuses_bad_pems_keys_and_pools_naming_the_field(backend: Backend) {
    let env = super::setup(backend).start().await;
    let token = env.acme_admin.clone();
    let (key, leaf) = issue(&["a.example.com"], 2090);
    let fields = |error: &Value| violated_fields(&error["details"]);
    let error = env.expect_failure(&token, CREATE, custom("c", &key, "not a certificate"), 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["leafCertificate"]);
    let (old_key, expired) = issue(&["a.example.com"], 2021);
    let error = env.expect_failure(&token, CREATE, custom("c", &old_key, &expired), 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["leafCertificate"]);
    assert!(error["message"].as_str().unwrap().contains("expired"), "{error}");
    let (other_key, _) = issue(&["b.example.com"], 2090);
    let error = env.expect_failure(&token, CREATE, custom("c", &other_key, &leaf), 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["privateKey"]);
    assert!(error["message"].as_str().unwrap().contains("does not match"), "{error}");
    let error = env.expect_failure(&token, CREATE, custom("c", "", &leaf), 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["privateKey"]);
    let mut chained = custom("c", &key, &leaf);
    chained["certificateChain"] = json!("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    let error = env.expect_failure(&token, CREATE, chained, 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["certificateChain"]);
    let mut named = custom("c", &key, &leaf);
    named["dnsNames"] = json!(["a.example.com"]);
    assert_eq!(fields(&env.expect_failure(&token, CREATE, named, 400, "INVALID_INPUT").await), ["dnsNames"]);
    // Let's Encrypt takes names, not PEMs.
    assert_eq!(
        fields(&env.expect_failure(&token, CREATE, lets_encrypt("c", &[]), 400, "INVALID_INPUT").await),
        ["dnsNames"]
    );
    let mut with_key = lets_encrypt("c", &["a.example.com"]);
    with_key["privateKey"] = json!(key);
    assert_eq!(fields(&env.expect_failure(&token, CREATE, with_key, 400, "INVALID_INPUT").await), ["privateKey"]);
    let error = env.expect_failure(&token, CREATE, lets_encrypt("c", &["Not A Name"]), 400, "INVALID_INPUT").await;
    assert_eq!(fields(&error), ["dnsNames[0]"]);
    let mut typed = lets_encrypt("c", &["a.example.com"]);
    typed["type"] = json!("selfSigned");
    assert_eq!(fields(&env.expect_failure(&token, CREATE, typed, 400, "INVALID_INPUT").await), ["type"]);
    // The pool: GKE has no certificates, a suspended offer takes nothing new.
    let mut on_gke = lets_encrypt("c", &["a.example.com"]);
    on_gke["poolId"] = json!(GKE_POOL);
    env.expect_failure(&token, CREATE, on_gke, 422, "UNSUPPORTED").await;
    let mut suspended = lets_encrypt("c", &["a.example.com"]);
    suspended["poolId"] = json!(SUSPENDED_POOL);
    env.expect_failure(&token, CREATE, suspended, 409, "INVALID_STATE").await;
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await["certificates"], json!([]));

    // Another tenant's certificate is not found; a viewer reads but does not delete.
    let made = env.ok(CREATE, custom("mine", &key, &leaf)).await;
    let id = made["id"].as_str().unwrap();
    let globex = env.globex_admin.clone();
    for path in [GET, DELETE] {
        env.expect_failure(&globex, path, json!({"tenantId": "globex", "certificateId": id}), 404, "NOT_FOUND").await;
        env.expect_failure(&globex, path, json!({"tenantId": "acme", "certificateId": id}), 403, "ACCESS_DENIED").await;
    }
    let viewer = env.acme_viewer.clone();
    assert_eq!(env.post_as(&viewer, GET, json!({"tenantId": "acme", "certificateId": id})).await.0, 200);
    env.expect_failure(&viewer, DELETE, json!({"tenantId": "acme", "certificateId": id}), 403, "ACCESS_DENIED").await;
    // A retry is the same certificate; the same key with another leaf a conflict.
    assert_eq!(env.ok(CREATE, custom("mine", &key, &leaf)).await["id"], made["id"]);
    let (key2, leaf2) = issue(&["c.example.com"], 2090);
    env.expect_failure(&token, CREATE, custom("mine", &key2, &leaf2), 409, "CONFLICT").await;
}

crate::on_both_backends!(
    a_custom_certificate_shows_its_names_and_expiry_and_is_ready_once_verified,
    a_lets_encrypt_certificate_is_ordered_for_its_names,
    create_refuses_bad_pems_keys_and_pools_naming_the_field,
);
