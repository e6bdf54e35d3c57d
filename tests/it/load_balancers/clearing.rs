//! An update replaces each part it names with the value given: through the
//! JSON paths the body's keys are the `update_mask`, so `"domains": []` clears the domains, alone
//! or beside another part, `"stickySessions": null` turns sticky sessions off and a part given is
//! replaced whole; over gRPC the caller's mask says it, and without one an empty list names
//! nothing. What never changes is refused whenever it is named, even empty; a setting with a
//! default (`sourceRanges`, `redirectHttpToHttps`) named without a value is refused, not reset.

use better_compute::proto::compute::{LoadBalancerDomain, LoadBalancerStickySessions, UpdateLoadBalancerRequest};
use better_compute::store::Backend;
use prost_types::FieldMask;
use serde_json::{Value, json};

use super::grpc::client;
use super::{CREATE, GET, POOL, REGION, UPDATE, regional};
use crate::harness::{grpc_error, violated_fields};

crate::on_both_backends!(
    json_keys_name_the_parts_an_update_replaces_and_empty_ones_clear,
    a_grpc_mask_names_the_parts_and_without_one_an_empty_list_names_nothing,
);

/// A global load balancer of acme over `origin`, serving two domains.
fn global(origin: &Value, key: &str) -> Value {
    json!({"tenantId": "acme", "poolId": POOL, "name": key, "scope": "global",
        "targets": {"loadBalancerIds": [origin["id"]]},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "domains": [{"name": "shop.example.com"}, {"name": "www.example.com"}],
        "idempotencyKey": key})
}

/// An update of `lb` with `change`'s keys.
fn update(lb: &Value, change: Value) -> Value {
    let mut body = json!({"tenantId": "acme", "loadBalancerId": lb["id"]});
    for (key, value) in change.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

async fn json_keys_name_the_parts_an_update_replaces_and_empty_ones_clear(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    env.instance("acme", POOL, REGION, None).await;
    let mut body = regional("origin", json!({"pool": true}));
    body["stickySessions"] = json!({"cookieName": "BC_LB", "ttlSeconds": 600});
    body["sourceRanges"] = json!({"allow": ["198.51.100.0/24", "203.0.113.7/32"], "deny": ["198.51.100.128/25"]});
    let origin = env.ok(CREATE, body).await;
    let origin_id = origin["id"].as_str().unwrap().to_owned();
    env.wait_load_balancer_state("acme", &origin_id, "ready").await;
    let edge = env.ok(CREATE, global(&origin, "edge")).await;
    let edge_id = edge["id"].as_str().unwrap().to_owned();
    env.wait_load_balancer_state("acme", &edge_id, "ready").await;
    env.wait_fake("acme", &edge_id, "two domains", |fake| fake["domains"].as_array().is_some_and(|d| d.len() == 2))
        .await;

    // `[]` alone clears the domains, at the provider too.
    let cleared = env.ok(UPDATE, update(&edge, json!({"domains": []}))).await;
    assert_eq!((cleared["domains"].clone(), cleared["version"].as_i64()), (json!([]), Some(2)), "{cleared}");
    env.wait_fake("acme", &edge_id, "no domains", |fake| fake["domains"] == json!([])).await;
    env.wait_load_balancer_state("acme", &edge_id, "ready").await;

    // Domains again, then `[]` beside another part clears them as well.
    let again = env.ok(UPDATE, update(&edge, json!({"domains": [{"name": "shop.example.com"}]}))).await;
    assert_eq!(again["domains"], json!([{"name": "shop.example.com", "certificateId": ""}]));
    env.wait_fake("acme", &edge_id, "one domain", |fake| fake["domains"].as_array().is_some_and(|d| d.len() == 1))
        .await;
    env.wait_load_balancer_state("acme", &edge_id, "ready").await;
    let beside = env.ok(UPDATE, update(&edge, json!({"domains": [], "redirectHttpToHttps": false}))).await;
    assert_eq!(beside["domains"], json!([]), "an empty list beside another part clears too: {beside}");
    env.wait_fake("acme", &edge_id, "no domains again", |fake| fake["domains"] == json!([])).await;
    env.wait_load_balancer_state("acme", &edge_id, "ready").await;

    // `"stickySessions": null` turns sticky sessions off and leaves the rest as it was.
    let off = env.ok(UPDATE, update(&origin, json!({"stickySessions": null}))).await;
    assert_eq!(off["stickySessions"], Value::Null, "{off}");
    assert_eq!(off["sourceRanges"]["allow"].as_array().map(Vec::len), Some(2), "parts not named are kept");
    env.wait_fake("acme", &origin_id, "sticky sessions off", |fake| fake["stickySessions"]["type"] == "none").await;
    env.wait_load_balancer_state("acme", &origin_id, "ready").await;

    // A part given is replaced whole: the deny list not given is emptied.
    let replaced = env.ok(UPDATE, update(&origin, json!({"sourceRanges": {"allow": ["192.0.2.0/24"]}}))).await;
    assert_eq!(replaced["sourceRanges"], json!({"allow": ["192.0.2.0/24"], "deny": []}));
    env.wait_fake("acme", &origin_id, "one allowed range", |fake| {
        fake["firewall"] == json!({"allow": ["cidr:192.0.2.0/24"], "deny": []})
    })
    .await;
    env.wait_load_balancer_state("acme", &origin_id, "ready").await;
    // Named without a value they are refused, not reset to their default (any address), and
    // the provider keeps the range; `{}` says it: anyone may reach it again.
    let (status, code, details) = env.refused(UPDATE, update(&origin, json!({"sourceRanges": null}))).await;
    assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec!["sourceRanges".into()]));
    let kept = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": origin_id})).await;
    assert_eq!(kept["sourceRanges"]["allow"], json!(["192.0.2.0/24"]), "{kept}");
    let anyone = env.ok(UPDATE, update(&origin, json!({"sourceRanges": {}}))).await;
    assert_eq!(anyone["sourceRanges"], json!({"allow": [], "deny": []}));
    env.wait_fake("acme", &origin_id, "no ranges", |fake| fake["firewall"] == json!({"allow": [], "deny": []})).await;
    env.wait_load_balancer_state("acme", &origin_id, "ready").await;

    // What never changes is refused when named at all, even empty; forwarding cannot be
    // emptied; an update that names nothing is refused. None of them changes anything.
    let version = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": origin_id})).await["version"].clone();
    for field in ["scope", "region", "poolId", "subnetId"] {
        let (status, code, details) = env.refused(UPDATE, update(&origin, json!({field: ""}))).await;
        assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec![field.to_owned()]));
        let description = details["fields"][0]["description"].as_str().unwrap();
        assert!(description.contains("never changes"), "{field}: {description}");
    }
    let (status, code, details) = env.refused(UPDATE, update(&origin, json!({"forwarding": []}))).await;
    assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec!["forwarding".into()]));
    let (_, code, details) = env.refused(UPDATE, update(&origin, json!({}))).await;
    assert_eq!(code, "INVALID_INPUT");
    assert!(details["accepted"].as_array().unwrap().contains(&json!("domains")), "{details}");
    let got = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": origin_id})).await;
    assert_eq!(got["version"], version, "a refused update changes nothing");
}

async fn a_grpc_mask_names_the_parts_and_without_one_an_empty_list_names_nothing(backend: Backend) {
    let env = super::start(backend).await;
    let mut body = regional("origin", json!({"pool": true}));
    body["stickySessions"] = json!({"cookieName": "BC_LB", "ttlSeconds": 600});
    let origin = env.ok(CREATE, body).await;
    let edge = env.ok(CREATE, global(&origin, "edge")).await;
    let mut acme = client(&env, &env.acme_admin.clone()).await;
    let change = |lb: &Value, paths: &[&str]| UpdateLoadBalancerRequest {
        tenant_id: "acme".into(),
        load_balancer_id: lb["id"].as_str().unwrap().into(),
        update_mask: (!paths.is_empty())
            .then(|| FieldMask { paths: paths.iter().map(|path| (*path).to_owned()).collect() }),
        ..Default::default()
    };

    // Without a mask, an empty list names nothing: alone it is refused ...
    let status = acme.update(change(&edge, &[])).await.unwrap_err();
    let error = grpc_error(&status);
    assert_eq!((status.code(), error.code.as_str()), (tonic::Code::InvalidArgument, "INVALID_INPUT"));
    assert!(error.details["accepted"].as_array().unwrap().contains(&json!("domains")), "{error:?}");
    // ... and beside a part given it leaves the domains as they are.
    let kept = acme
        .update(UpdateLoadBalancerRequest { redirect_http_to_https: Some(false), ..change(&edge, &[]) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(kept.domains.len(), 2, "no mask: the empty list is not named");

    // A mask naming the domains with none given clears them; by JSON name as well.
    let cleared = acme.update(change(&edge, &["domains"])).await.unwrap().into_inner();
    assert!(cleared.domains.is_empty(), "{cleared:?}");
    let domain = LoadBalancerDomain { name: "shop.example.com".into(), ..Default::default() };
    let set = acme
        .update(UpdateLoadBalancerRequest { domains: vec![domain], ..change(&edge, &["domains"]) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(set.domains.len(), 1);
    let stop = UpdateLoadBalancerRequest {
        redirect_http_to_https: Some(false),
        ..change(&edge, &["domains", "redirectHttpToHttps"])
    };
    let cleared = acme.update(stop).await.unwrap().into_inner();
    assert!(cleared.domains.is_empty() && !cleared.redirect_http_to_https, "{cleared:?}");
    // The redirect named without a value is refused, not reset to its default.
    let status = acme.update(change(&edge, &["redirectHttpToHttps"])).await.unwrap_err();
    let error = grpc_error(&status);
    assert_eq!((status.code(), error.code.as_str()), (tonic::Code::InvalidArgument, "INVALID_INPUT"));
    assert_eq!(error.details["fields"][0]["field"], "redirectHttpToHttps", "{error:?}");

    // A mask naming sticky sessions without a value turns them off; the deprecated flag still
    // does, for one release.
    let off = acme.update(change(&origin, &["sticky_sessions"])).await.unwrap().into_inner();
    assert_eq!(off.sticky_sessions, None);
    let sticky = LoadBalancerStickySessions { cookie_name: "BC_LB".into(), ttl_seconds: 60 };
    let on = acme
        .update(UpdateLoadBalancerRequest { sticky_sessions: Some(sticky), ..change(&origin, &[]) })
        .await
        .unwrap()
        .into_inner();
    assert!(on.sticky_sessions.is_some());
    let off = acme
        .update(UpdateLoadBalancerRequest { clear_sticky_sessions: true, ..change(&origin, &[]) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(off.sticky_sessions, None, "clearStickySessions is deprecated but still works");

    // What never changes is refused when the mask names it, even empty.
    for (path, field) in [("region", "region"), ("scope", "scope"), ("pool_id", "poolId"), ("subnet_id", "subnetId")] {
        let status = acme.update(change(&origin, &[path])).await.unwrap_err();
        let error = grpc_error(&status);
        let fields: Vec<&str> =
            error.details["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
        assert_eq!((error.code.as_str(), fields), ("INVALID_INPUT", vec![field]), "{path}");
    }
}
