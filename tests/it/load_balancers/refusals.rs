//! Every refusal the load balancers page names, through the JSON paths, with its code; a refused
//! create books nothing. And the secondary decision on named instances, taken with the caller's
//! own credential.

use serde_json::{Value, json};

use super::{CREATE, DELETE, GET, GKE_POOL, OTHER_REGION, OWN_POOL, POOL, QUOTA, REGION, UPDATE, as_tenant, regional};
use crate::harness::violated_fields;
use better_compute::store::Backend;

crate::on_both_backends!(
    quota_no_room_and_no_quota_row_are_quota_exceeded,
    another_tenants_resources_are_access_denied_or_not_found,
    named_instances_must_share_the_region_account_and_subnet,
    subnets_and_certificates_must_be_on_the_pools_account_and_region,
    the_tables_constraints_and_the_forwarding_rules,
    update_refuses_what_never_changes_and_instances_off_its_network,
    a_regional_load_balancer_a_global_one_targets_is_in_use,
    named_instances_are_decided_with_the_callers_own_credential,
);

async fn quota_no_room_and_no_quota_row_are_quota_exceeded(backend: Backend) {
    let env = super::start(backend).await;
    for i in 0..QUOTA {
        env.ok(CREATE, regional(&format!("lb{i}"), json!({"pool": true}))).await;
    }
    let (status, code, details) = env.refused(CREATE, regional("one-more", json!({"pool": true}))).await;
    assert_eq!((status, code.as_str()), (429, "QUOTA_EXCEEDED"));
    assert_eq!((details["limit"].as_i64(), details["used"].as_i64()), (Some(QUOTA), Some(QUOTA)));
    assert_eq!(env.quota_used("acme").await, QUOTA);
    // acme's own pool has no loadBalancers quota row: none is granted.
    let mut own = regional("own", json!({"pool": true}));
    own["poolId"] = json!(OWN_POOL);
    let (status, code, details) = env.refused(CREATE, own).await;
    assert_eq!((status, code.as_str(), details["limit"].as_i64()), (429, "QUOTA_EXCEEDED", Some(0)));
    // The pool checks come first: a pool without load balancers, a pool not visible.
    let mut gke = regional("gke", json!({"pool": true}));
    gke["poolId"] = json!(GKE_POOL);
    gke["region"] = json!("us-central1");
    assert_eq!(env.refused(CREATE, gke).await.0, 422);
    let (status, code, _) = env
        .refused_as(&env.globex_admin.clone(), CREATE, {
            let mut b = as_tenant(regional("x", json!({"pool": true})), "globex");
            b["poolId"] = json!(OWN_POOL);
            b
        })
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "acme's own pool is not visible to globex");
    let (status, code, details) = env
        .refused(CREATE, {
            let mut b = regional("far", json!({"pool": true}));
            b["region"] = json!("lon1");
            b
        })
        .await;
    assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec!["region".to_owned()]));
    assert_eq!(details["regions"], json!([REGION, OTHER_REGION]));
}

async fn another_tenants_resources_are_access_denied_or_not_found(backend: Backend) {
    let env = super::start(backend).await;
    let theirs = env.instance("globex", POOL, REGION, None).await;
    let (status, code, details) = env.refused(CREATE, regional("steal", json!({"instanceIds": [theirs.id]}))).await;
    assert_eq!((status, code.as_str()), (403, "ACCESS_DENIED"), "another tenant's instance");
    assert_eq!(details["permission"], "compute:instances:update");
    assert_eq!(env.quota_used("acme").await, 0, "a refused create books nothing");
    let their_subnet = env.subnet("globex", POOL, REGION, "10.20.0.0/24").await;
    let mut on_theirs = regional("subnet", json!({"pool": true}));
    on_theirs["subnetId"] = json!(their_subnet);
    let (status, code, details) = env.refused(CREATE, on_theirs).await;
    assert_eq!((status, code.as_str(), details["resource"].as_str()), (404, "NOT_FOUND", Some("subnet")));
    let their_certificate = env.certificate("globex", POOL, false).await;
    let mut tls = regional("tls", json!({"pool": true}));
    tls["forwarding"] = json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http",
        "targetPort": 8080, "certificateId": their_certificate}]);
    let (status, code, details) = env.refused(CREATE, tls).await;
    assert_eq!((status, code.as_str(), details["resource"].as_str()), (404, "NOT_FOUND", Some("certificate")));
    let their_lb = env
        .ok_as(&env.globex_admin.clone(), CREATE, as_tenant(regional("theirs", json!({"pool": true})), "globex"))
        .await;
    let global = json!({"tenantId": "acme", "poolId": POOL, "name": "edge", "scope": "global",
        "targets": {"loadBalancerIds": [their_lb["id"]]},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 80}],
        "domains": [{"name": "example.com"}], "idempotencyKey": "edge"});
    let (status, code, details) = env.refused(CREATE, global).await;
    assert_eq!((status, code.as_str(), details["resource"].as_str()), (404, "NOT_FOUND", Some("loadBalancer")));
    let their_ref = json!({"tenantId": "acme", "loadBalancerId": their_lb["id"]});
    for path in [GET, DELETE] {
        assert_eq!(env.refused(path, their_ref.clone()).await.1, "NOT_FOUND", "{path}");
    }
    let mut update = their_ref.clone();
    update["redirectHttpToHttps"] = json!(false);
    assert_eq!(env.refused(UPDATE, update).await.1, "NOT_FOUND");
    // Named under its own tenant by acme's admin: the decision refuses.
    let (status, code, _) = env.refused(GET, json!({"tenantId": "globex", "loadBalancerId": their_lb["id"]})).await;
    assert_eq!((status, code.as_str()), (403, "ACCESS_DENIED"));
    assert_eq!(env.quota_used("acme").await, 0);
}

async fn named_instances_must_share_the_region_account_and_subnet(backend: Backend) {
    let env = super::start(backend).await;
    let here = env.instance("acme", POOL, REGION, None).await;
    let elsewhere = env.instance("acme", POOL, OTHER_REGION, None).await;
    let own_account = env.instance("acme", OWN_POOL, REGION, None).await;
    let subnet_a = env.subnet("acme", POOL, REGION, "10.1.0.0/24").await;
    let subnet_b = env.subnet("acme", POOL, REGION, "10.2.0.0/24").await;
    let on_a = env.instance("acme", POOL, REGION, Some(&subnet_a)).await;
    let on_b = env.instance("acme", POOL, REGION, Some(&subnet_b)).await;
    let refused = |ids: Vec<&str>, subnet: Option<&str>| {
        let mut body = regional("named", json!({"instanceIds": ids}));
        if let Some(subnet) = subnet {
            body["subnetId"] = json!(subnet);
        }
        let env = &env;
        async move { env.refused(CREATE, body).await }
    };
    let (status, code, details) = refused(vec![&here.id, &elsewhere.id], None).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "another region");
    assert_eq!(violated_fields(&details), ["targets.instanceIds[1]"]);
    let (_, code, details) = refused(vec![&own_account.id], None).await;
    assert_eq!(
        (code.as_str(), violated_fields(&details)),
        ("INVALID_INPUT", vec!["targets.instanceIds[0]".to_owned()]),
        "another account"
    );
    let (_, code, details) = refused(vec![&on_a.id, &on_b.id], None).await;
    assert_eq!(
        (code.as_str(), violated_fields(&details)),
        ("INVALID_INPUT", vec!["targets.instanceIds".to_owned()]),
        "two subnets"
    );
    let (_, code, _) = refused(vec![&on_a.id, &here.id], None).await;
    assert_eq!(code, "INVALID_INPUT", "a subnet and no tenant network are two networks");
    let (_, code, details) = refused(vec![&on_a.id, &on_b.id], Some(&subnet_a)).await;
    assert_eq!(
        (code.as_str(), violated_fields(&details)),
        ("INVALID_INPUT", vec!["targets.instanceIds[1]".to_owned()]),
        "not on subnetId"
    );
    let (_, code, _) = refused(vec![&here.id], Some(&subnet_a)).await;
    assert_eq!(code, "INVALID_INPUT", "an instance on no network is not on subnetId");
    // An unknown id answers as another tenant's instance does, so that the answer tells
    // nothing of what other tenants have.
    let (status, code, _) = refused(vec!["inst_0000000000000000000000000a"], None).await;
    assert_eq!((status, code.as_str()), (403, "ACCESS_DENIED"));
    assert_eq!(env.quota_used("acme").await, 0);

    // Without a subnetId it lives on the subnet its named instances share.
    let on_a2 = env.instance("acme", POOL, REGION, Some(&subnet_a)).await;
    let shared = env.ok(CREATE, regional("shared", json!({"instanceIds": [on_a.id, on_a2.id]}))).await;
    assert_eq!(shared["subnetId"], subnet_a.as_str());
    let plain = env.ok(CREATE, regional("plain", json!({"instanceIds": [here.id]}))).await;
    assert_eq!(plain["subnetId"], "", "instances on no tenant network: the account's default network");
}

async fn subnets_and_certificates_must_be_on_the_pools_account_and_region(backend: Backend) {
    let env = super::start(backend).await;
    let far = env.subnet("acme", POOL, OTHER_REGION, "10.3.0.0/24").await;
    let own = env.subnet("acme", OWN_POOL, REGION, "10.4.0.0/24").await;
    for subnet in [&far, &own] {
        let mut body = regional("subnet", json!({"pool": true}));
        body["subnetId"] = json!(subnet);
        let (status, code, details) = env.refused(CREATE, body).await;
        assert_eq!(
            (status, code.as_str(), violated_fields(&details)),
            (400, "INVALID_INPUT", vec!["subnetId".to_owned()])
        );
    }
    let certificate = env.certificate("acme", OWN_POOL, false).await;
    let mut tls = regional("tls", json!({"pool": true}));
    tls["forwarding"] = json!([
        {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 80},
        {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 80, "certificateId": certificate},
    ]);
    let (_, code, details) = env.refused(CREATE, tls).await;
    assert_eq!(
        (code.as_str(), violated_fields(&details)),
        ("INVALID_INPUT", vec!["forwarding[1].certificateId".to_owned()])
    );
    let (status, code, _) = env
        .refused(CREATE, {
            let mut b = regional("ghost", json!({"pool": true}));
            b["subnetId"] = json!("snet_0000000000000000000000000a");
            b
        })
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
}

async fn the_tables_constraints_and_the_forwarding_rules(backend: Backend) {
    let env = super::start(backend).await;
    let rule = |entry: &str, port: i64, target: &str, extra: Value| {
        let mut rule = json!({"entryProtocol": entry, "entryPort": port, "targetProtocol": target, "targetPort": 8080});
        for (k, v) in extra.as_object().unwrap() {
            rule[k] = v.clone();
        }
        rule
    };
    let with = |change: Value| {
        let mut body = regional("c", json!({"pool": true}));
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    let bad = with(json!({
        "name": "Bad_Name", "scope": "planet", "region": "NYC", "description": "x".repeat(257),
        "forwarding": [rule("ftp", 0, "http", json!({})), rule("http", 80, "http", json!({"targetPort": 70000}))],
        "healthCheck": {"protocol": "udp", "port": 80, "intervalSeconds": 2, "timeoutSeconds": 301,
            "healthyThreshold": 1, "unhealthyThreshold": 11, "path": "/".repeat(256)},
        "stickySessions": {"cookieName": "bad cookie", "ttlSeconds": 604801},
        "sourceRanges": {"allow": ["10.0.0.1/8"], "deny": ["not-a-cidr"]},
        "domains": [{"name": "x".repeat(254)}],
        "subnetId": "net_0000000000000000000000000a",
        "targets": {"instanceIds": ["i-123"], "loadBalancerIds": ["lb"]},
        "idempotencyKey": "bad key",
    }));
    let (status, code, details) = env.refused(CREATE, bad).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"));
    assert_eq!(
        violated_fields(&details),
        [
            "description",
            "domains[0].name",
            "forwarding[0].entryPort",
            "forwarding[0].entryProtocol",
            "forwarding[1].targetPort",
            "healthCheck.healthyThreshold",
            "healthCheck.intervalSeconds",
            "healthCheck.path",
            "healthCheck.protocol",
            "healthCheck.timeoutSeconds",
            "healthCheck.unhealthyThreshold",
            "idempotencyKey",
            "name",
            "region",
            "scope",
            "sourceRanges.allow[0]",
            "sourceRanges.deny[0]",
            "stickySessions.cookieName",
            "stickySessions.ttlSeconds",
            "subnetId",
            "targets.instanceIds[0]",
            "targets.loadBalancerIds[0]",
        ]
    );
    let missing = json!({"tenantId": "acme", "poolId": POOL, "name": "m", "idempotencyKey": "m"});
    let (_, _, details) = env.refused(CREATE, missing).await;
    assert_eq!(violated_fields(&details), ["forwarding", "region", "targets"], "every violated field at once");
    let sixteen: Vec<Value> = (1..=16).map(|p| rule("tcp", p, "tcp", json!({}))).collect();
    let (_, _, details) = env.refused(CREATE, with(json!({"forwarding": sixteen}))).await;
    assert_eq!(violated_fields(&details), ["forwarding"], "1 to 15 rules");
    let twenty_one: Vec<Value> = (0..21).map(|i| json!({"name": format!("d{i}.example.com")})).collect();
    let (_, _, details) = env.refused(CREATE, with(json!({"domains": twenty_one}))).await;
    assert_eq!(violated_fields(&details), ["domains"], "0 to 20 domains");
    let hundred_one: Vec<String> = (0..101).map(|i| format!("inst_{i:026}")).collect();
    let (_, _, details) = env.refused(CREATE, with(json!({"targets": {"instanceIds": hundred_one}}))).await;
    assert_eq!(violated_fields(&details), ["targets.instanceIds"], "1 to 100 instances");

    // What the service checks: TLS ends with a certificate (or passes through on https only),
    // protocols pair, each entry once, targets and domains by scope.
    let certificate = env.certificate("acme", POOL, false).await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({"forwarding": [rule("https", 443, "http", json!({}))]}), "forwarding[0].certificateId"),
        (json!({"forwarding": [rule("http2", 443, "http", json!({}))]}), "forwarding[0].certificateId"),
        (
            json!({"forwarding": [rule("http2", 443, "https", json!({"tlsPassthrough": true}))]}),
            "forwarding[0].tlsPassthrough",
        ),
        (
            json!({"forwarding": [rule("https", 443, "https", json!({"tlsPassthrough": true, "certificateId": certificate}))]}),
            "forwarding[0].tlsPassthrough",
        ),
        (
            json!({"forwarding": [rule("http", 80, "http", json!({"certificateId": certificate}))]}),
            "forwarding[0].certificateId",
        ),
        (json!({"forwarding": [rule("udp", 53, "tcp", json!({}))]}), "forwarding[0].targetProtocol"),
        (
            json!({"forwarding": [rule("http", 80, "http", json!({})), rule("http", 80, "http", json!({}))]}),
            "forwarding[1].entryPort",
        ),
        (json!({"redirectHttpToHttps": true}), "redirectHttpToHttps"),
        (json!({"domains": [{"name": "example.com"}]}), "domains"),
        (json!({"targets": {}}), "targets"),
        (json!({"targets": {"pool": false}}), "targets"),
        (json!({"targets": {"pool": true, "instanceIds": ["inst_0000000000000000000000000a"]}}), "targets"),
        (json!({"targets": {"loadBalancerIds": ["plb_0000000000000000000000000a"]}}), "targets.loadBalancerIds"),
        (json!({"region": ""}), "region"),
        (json!({"scope": "global", "targets": {"pool": true}}), "region"),
    ];
    for (change, field) in cases {
        let (status, code, details) = env.refused(CREATE, with(change.clone())).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "{change}");
        assert!(violated_fields(&details).contains(&field.to_owned()), "{change}: {details}");
    }
    // Each of these is fine: https passed through, https and http2 with a certificate, udp to udp.
    let fine = with(json!({"forwarding": [
        rule("https", 443, "https", json!({"tlsPassthrough": true})),
        rule("http2", 8443, "http", json!({"certificateId": certificate})),
        rule("udp", 53, "udp", json!({})),
    ], "redirectHttpToHttps": true}));
    env.ok(CREATE, fine).await;
    assert_eq!(env.quota_used("acme").await, 1);
}

async fn update_refuses_what_never_changes_and_instances_off_its_network(backend: Backend) {
    let env = super::start(backend).await;
    let subnet = env.subnet("acme", POOL, REGION, "10.5.0.0/24").await;
    let on_subnet = env.instance("acme", POOL, REGION, Some(&subnet)).await;
    let plain = env.instance("acme", POOL, REGION, None).await;
    let mut body = regional("net", json!({"pool": true}));
    body["subnetId"] = json!(subnet);
    let on_net = env.ok(CREATE, body).await;
    let off_net = env.ok(CREATE, regional("default", json!({"pool": true}))).await;
    let update = |lb: &Value, change: Value| {
        let mut body = json!({"tenantId": "acme", "loadBalancerId": lb["id"]});
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    for (field, value) in
        [("scope", "global"), ("region", OTHER_REGION), ("poolId", OWN_POOL), ("subnetId", subnet.as_str())]
    {
        let (status, code, details) = env.refused(UPDATE, update(&on_net, json!({field: value}))).await;
        assert_eq!((status, code.as_str(), violated_fields(&details)), (400, "INVALID_INPUT", vec![field.to_owned()]));
    }
    let (_, code, details) = env.refused(UPDATE, update(&on_net, json!({}))).await;
    assert_eq!(code, "INVALID_INPUT");
    assert!(details["accepted"].as_array().unwrap().contains(&json!("targets")));
    let (_, code, details) =
        env.refused(UPDATE, update(&on_net, json!({"targets": {"instanceIds": [plain.id]}}))).await;
    assert_eq!(
        (code.as_str(), violated_fields(&details)),
        ("INVALID_INPUT", vec!["targets.instanceIds[0]".to_owned()]),
        "not on its subnet"
    );
    let (_, code, _) = env.refused(UPDATE, update(&off_net, json!({"targets": {"instanceIds": [on_subnet.id]}}))).await;
    assert_eq!(code, "INVALID_INPUT", "without a subnet it reaches only instances on no tenant network");
    let (_, code, _) = env.refused(UPDATE, update(&off_net, json!({"domains": [{"name": "example.com"}]}))).await;
    assert_eq!(code, "INVALID_INPUT");
    let changed = env.ok(UPDATE, update(&on_net, json!({"targets": {"instanceIds": [on_subnet.id]}}))).await;
    assert_eq!(
        (changed["targets"]["instanceIds"][0].as_str(), changed["version"].as_i64()),
        (Some(on_subnet.id.as_str()), Some(2))
    );
    assert_eq!(changed["state"], "pending", "never made at the provider: it stays pending");
    let changed = env.ok(UPDATE, update(&off_net, json!({"targets": {"instanceIds": [plain.id]}}))).await;
    assert_eq!(changed["targets"]["pool"], Value::Null);
}

async fn a_regional_load_balancer_a_global_one_targets_is_in_use(backend: Backend) {
    let env = super::start(backend).await;
    let regional_lb = env.ok(CREATE, regional("origin", json!({"pool": true}))).await;
    let other_account = {
        let mut body = regional("own", json!({"pool": true}));
        body["poolId"] = json!(OWN_POOL);
        body
    };
    // acme's own pool has no quota: make room for one there.
    env.store
        .quota_create(&better_compute::store::NewQuota {
            pool_id: OWN_POOL.into(),
            tenant_id: "acme".into(),
            resource_kind: "loadBalancers".into(),
            limit: 1,
            now: better_compute::store::now_micros(),
        })
        .await
        .unwrap();
    let other_account = env.ok(CREATE, other_account).await;
    let global = |targets: Vec<&Value>, key: &str| {
        json!({"tenantId": "acme", "poolId": POOL, "name": key, "scope": "global",
            "targets": {"loadBalancerIds": targets.iter().map(|t| t["id"].clone()).collect::<Vec<_>>()},
            "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 80}],
            "domains": [{"name": "shop.example.com"}], "idempotencyKey": key})
    };
    let (status, code, details) = env.refused(CREATE, global(vec![&other_account], "g0")).await;
    assert_eq!(
        (status, code.as_str(), violated_fields(&details)),
        (400, "INVALID_INPUT", vec!["targets.loadBalancerIds[0]".to_owned()]),
        "another account"
    );
    let edge = env.ok(CREATE, global(vec![&regional_lb], "g1")).await;
    assert_eq!((edge["scope"].as_str(), edge["region"].as_str()), (Some("global"), Some("")));
    let (status, code, details) = env.refused(CREATE, global(vec![&edge], "g2")).await;
    assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "a global one targets regional ones: {details}");
    let (status, code, details) =
        env.refused(DELETE, json!({"tenantId": "acme", "loadBalancerId": regional_lb["id"]})).await;
    assert_eq!((status, code.as_str(), details["reason"].as_str()), (409, "INVALID_STATE", Some("inUse")));
    assert_eq!(details["targetedBy"], json!([edge["id"]]));
    let still = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": regional_lb["id"]})).await;
    assert_eq!(still["state"], "pending", "a refused delete changes nothing");
}

const AUDIT: &str = "/api/platform/audit/list";

/// Operators' policy of this test: service accounts may not update instances.
const NO_INSTANCE_UPDATES: &str = r#"
@id("service-accounts-leave-instances-alone")
forbid (principal, action == BetterCompute::Action::"compute:instances:update", resource)
when { principal.kind == "service-account" };
"#;

async fn named_instances_are_decided_with_the_callers_own_credential(backend: Backend) {
    let env = super::setup(backend).policies(&[("ops.cedar".into(), NO_INSTANCE_UPDATES.into())]).start().await;
    let web = env.instance("acme", POOL, REGION, None).await;
    let robot = env
        .ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "service-account", "name": "ci"}))
        .await;
    let robot_id = robot["id"].as_str().unwrap();
    env.ok("/api/platform/roleBindings/create", json!({"tenantId": "acme", "principalId": robot_id, "role": "editor"}))
        .await;
    let key = env.ok("/api/platform/apiKeys/create", json!({"tenantId": "acme", "principalId": robot_id})).await;
    let robot_token = key["token"].as_str().unwrap().to_owned();
    // The robot manages load balancers, but may not update the instance it names.
    env.ok_as(&robot_token, CREATE, regional("by-pool", json!({"pool": true}))).await;
    let (status, code, details) =
        env.refused_as(&robot_token, CREATE, regional("named", json!({"instanceIds": [web.id]}))).await;
    assert_eq!(
        (status, code.as_str(), details["permission"].as_str()),
        (403, "ACCESS_DENIED", Some("compute:instances:update"))
    );
    let audit = env.ok_as(&env.server.admin_token.clone(), AUDIT, json!({"resourceId": web.id})).await;
    let decided = audit["auditEvents"].as_array().cloned().unwrap_or_default();
    assert!(
        decided.iter().any(|d| d["permission"] == "compute:instances:update"
            && d["resourceId"] == web.id.as_str()
            && d["principalId"] == robot_id
            && d["decision"] == "deny"),
        "the secondary decision is audited as the robot's: {audit}"
    );
    // A person of the tenant may: the same request goes through.
    env.ok(CREATE, regional("named", json!({"instanceIds": [web.id]}))).await;
}
