//! Every violated field at once: a create or update the schema stage finds
//! wrong still runs the service's own checks (the forwarding rules, the targets, the region of
//! the account, the certificates' account, what never changes), and the answer names all of them
//! in `details.fields`. A lookup that fails on a request whose fields are wrong answers with
//! those fields. Nothing is written while there are violations.
//!
//! And `targets.pool` (item 10a): the page types it `any`; it takes JSON `true` or `false` only.

use serde_json::{Value, json};

use super::{CREATE, GET, LIST, OWN_POOL, POOL, REGION, UPDATE, regional};
use crate::harness::violated_fields;
use better_compute::store::Backend;

crate::on_both_backends!(
    a_create_names_the_schemas_and_the_services_violations_together_and_writes_nothing,
    an_update_names_the_schemas_and_the_services_violations_together_and_changes_nothing,
    targets_pool_takes_true_or_false_only,
);

fn https_without_certificate() -> Value {
    json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 8080}])
}

async fn a_create_names_the_schemas_and_the_services_violations_together_and_writes_nothing(backend: Backend) {
    let env = super::start(backend).await;

    // A name the schema refuses, and an https rule with neither certificate nor passthrough.
    let mut body = regional("Bad_Name", json!({"pool": true}));
    body["forwarding"] = https_without_certificate();
    let (status, code, details) = env.refused(CREATE, body.clone()).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"));
    assert_eq!(violated_fields(&details), ["forwarding[0].certificateId", "name"], "{details}");

    // More of both: the pool's account has no such region, the redirect has no https rule to
    // go to, and the schema refuses a health check setting.
    let mut body = regional("Bad_Name", json!({"pool": true}));
    body["region"] = json!("lon1");
    body["redirectHttpToHttps"] = json!(true);
    body["healthCheck"] = json!({"protocol": "http", "port": 8080, "intervalSeconds": 1});
    let (status, _, details) = env.refused(CREATE, body).await;
    assert_eq!(status, 400);
    assert_eq!(
        violated_fields(&details),
        ["healthCheck.intervalSeconds", "name", "redirectHttpToHttps", "region"],
        "{details}"
    );
    assert_eq!(details["regions"], json!([REGION, "sfo3"]), "the account's regions, as without the other fields");

    // A certificate on another account than the pool's (a lookup), beside a schema violation.
    let elsewhere = env.certificate("acme", OWN_POOL, false).await;
    let mut body = regional("tls", json!({"pool": true}));
    body["forwarding"] = json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http",
        "targetPort": 8080, "certificateId": elsewhere}]);
    body["description"] = json!("x".repeat(257));
    let (_, _, details) = env.refused(CREATE, body).await;
    assert_eq!(violated_fields(&details), ["description", "forwarding[0].certificateId"], "{details}");

    // A lookup that fails (another tenant's subnet, NOT_FOUND) on a request whose fields are
    // wrong: the fields are the answer.
    let theirs = env.subnet("globex", POOL, REGION, "10.30.0.0/24").await;
    let mut body = regional("Bad_Name", json!({"pool": true}));
    body["subnetId"] = json!(theirs);
    let (status, code, details) = env.refused(CREATE, body).await;
    assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec!["name".to_owned()]));

    // Nothing was written: no load balancer, no quota booked.
    assert_eq!(env.quota_used("acme").await, 0);
    let listed = env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await;
    assert_eq!(listed["loadBalancers"], json!([]));
    // The same request with its fields right goes through.
    let mut body = regional("fine", json!({"pool": true}));
    body["forwarding"] = json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "https",
        "targetPort": 8443, "tlsPassthrough": true}]);
    env.ok(CREATE, body).await;
    assert_eq!(env.quota_used("acme").await, 1);
}

async fn an_update_names_the_schemas_and_the_services_violations_together_and_changes_nothing(backend: Backend) {
    let env = super::start(backend).await;
    let lb = env.ok(CREATE, regional("web", json!({"pool": true}))).await;
    let id = lb["id"].as_str().unwrap().to_owned();

    // The schema refuses the health check's interval; the service a udp entry to a tcp target,
    // the redirect with no https rule to go to, and a region (which never changes).
    let body = json!({"tenantId": "acme", "loadBalancerId": id, "region": "sfo3", "redirectHttpToHttps": true,
        "healthCheck": {"protocol": "http", "port": 8080, "intervalSeconds": 1},
        "forwarding": [{"entryProtocol": "udp", "entryPort": 53, "targetProtocol": "tcp", "targetPort": 53}]});
    let (status, code, details) = env.refused(UPDATE, body).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"));
    assert_eq!(
        violated_fields(&details),
        ["forwarding[0].targetProtocol", "healthCheck.intervalSeconds", "redirectHttpToHttps", "region"],
        "{details}"
    );
    let got = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!((got["version"].as_i64(), got["redirectHttpToHttps"].as_bool()), (Some(1), Some(false)));

    // An unknown load balancer (NOT_FOUND) updated with a field the schema refuses: the field is
    // the answer.
    let body = json!({"tenantId": "acme", "loadBalancerId": "plb_0000000000000000000000000a",
        "healthCheck": {"protocol": "http", "port": 8080, "intervalSeconds": 1}});
    let (status, _, details) = env.refused(UPDATE, body).await;
    assert_eq!((status, violated_fields(&details)), (400, vec!["healthCheck.intervalSeconds".to_owned()]));
}

async fn targets_pool_takes_true_or_false_only(backend: Backend) {
    let env = super::start(backend).await;
    for value in [json!("yes"), json!("true"), json!(1), json!({}), json!([true])] {
        let (status, code, details) = env.refused(CREATE, regional("pool", json!({"pool": value}))).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "{value}");
        let fields = details["fields"].as_array().unwrap();
        let pool = fields.iter().find(|f| f["field"] == "targets.pool").expect("targets.pool is named");
        let description = pool["description"].as_str().unwrap();
        assert!(description.contains("true or false"), "{value}: {description}");
    }
    // `false` (or `null`) is as good as leaving it out: then the targets name nothing.
    for value in [json!(false), Value::Null] {
        let (_, code, details) = env.refused(CREATE, regional("pool", json!({"pool": value}))).await;
        assert_eq!((code.as_str(), violated_fields(&details)), ("INVALID_INPUT", vec!["targets".to_owned()]));
        let description = details["fields"][0]["description"].as_str().unwrap();
        assert!(description.contains("pool: true"), "{value}: {description}");
    }
    let made = env.ok(CREATE, regional("pool", json!({"pool": true}))).await;
    assert_eq!(made["targets"]["pool"], true);
    assert_eq!(env.quota_used("acme").await, 1);
}
