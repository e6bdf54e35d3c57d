//! A load balancer's life through the JSON paths: create returns it `pending` and books one
//! `loadBalancers`, the reconciler makes it at the provider and it is `ready` with its addresses,
//! list and get show it, update replaces parts in place (`updating` until applied), delete
//! returns it `deleting` and the reconciler deletes it at the provider, refunds the quota and
//! publishes `deleted`; billing runs from `ready` until deleted; the idempotency key.

use serde_json::{Value, json};
use sqlx::Connection;

use super::fixtures::droplets;
use super::{CREATE, DELETE, Env, GET, LIST, OWN_POOL, POOL, REGION, UPDATE, regional};
use better_compute::store::Backend;

crate::on_both_backends!(
    a_load_balancer_is_made_updated_and_deleted_with_its_events_quota_and_billing,
    the_idempotency_key_makes_a_retry_return_the_same_load_balancer,
    list_returns_the_tenants_load_balancers_in_order_by_pool_and_project,
);

fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect()
}

async fn billable(env: &Env, id: &str) -> Option<(String, Option<i64>)> {
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let row: Option<(Option<String>, Option<i64>)> =
        sqlx::query_as("SELECT pool_id, billing_end FROM usage_billables WHERE resource_id = $1 AND meter = $2")
            .bind(id)
            .bind("vps.load-balancer.hours")
            .fetch_optional(&mut conn)
            .await
            .unwrap();
    row.map(|(pool, end)| (pool.unwrap_or_default(), end))
}

async fn a_load_balancer_is_made_updated_and_deleted_with_its_events_quota_and_billing(backend: Backend) {
    let mut env = super::start(backend).await;
    let web1 = env.instance("acme", POOL, REGION, None).await;
    let web2 = env.instance("acme", POOL, REGION, None).await;
    let mut request = regional("web", json!({"pool": true}));
    request["description"] = json!("the front door");
    request["healthCheck"] = json!({"protocol": "http", "port": 8080, "path": "/healthz", "intervalSeconds": 15});
    let created = env.ok(CREATE, request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("plb_") && id.len() == 4 + 26, "{id}");
    assert_eq!(
        (created["state"].as_str(), created["scope"].as_str(), created["version"].as_i64()),
        (Some("pending"), Some("regional"), Some(1))
    );
    assert_eq!(created["targets"], json!({"pool": true, "instanceIds": [], "loadBalancerIds": []}));
    assert_eq!(created["address"], "", "no address before the provider assigned one");
    assert_eq!(env.quota_used("acme").await, 1, "create booked one loadBalancers");
    assert_eq!(billable(&env, &id).await, None, "nothing is billed before it is ready");
    env.start_worker();

    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    assert!(ready["address"].as_str().unwrap().starts_with("203.0.113."), "{ready}");
    assert!(ready["addressV6"].as_str().unwrap().starts_with("2001:db8::"), "{ready}");
    let mut reached: Vec<String> =
        ready["reachedIds"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_owned()).collect();
    reached.sort();
    let mut expected = vec![web1.id.clone(), web2.id.clone()];
    expected.sort();
    assert_eq!(reached, expected);
    let name = ready["providerName"].as_str().unwrap().to_owned();
    assert_eq!(name, format!("bc-lb-{}", &id[4..28]));
    let fake = env.fake_load_balancer(&name).expect("made at the provider");
    assert_eq!(Env::fake_droplets(&fake), droplets(&[&web1, &web2]));
    assert_eq!((fake["type"].as_str(), fake["region"].as_str()), (Some("REGIONAL"), Some(REGION)));
    assert_eq!(fake["healthCheck"]["path"], "/healthz");
    assert_eq!(fake["healthCheck"]["check_interval_seconds"], 15);
    assert_eq!(fake["healthCheck"]["response_timeout_seconds"], 5, "unset fields keep the provider's default");
    let events = env.events("acme", &id).await;
    assert_eq!(types(&events), ["providerLoadBalancer.created", "providerLoadBalancer.ready"]);
    assert_eq!(events[1]["data"]["address"], ready["address"]);
    assert_eq!(events[1]["data"]["addressV6"], ready["addressV6"]);
    assert_eq!(billable(&env, &id).await, Some((POOL.to_owned(), None)), "billed on the pool from ready");

    let got = env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(got, ready);
    assert_eq!(got["healthCheck"]["intervalSeconds"], 15);
    assert_eq!(got["description"], "the front door");

    // Update replaces the forwarding rules in place: updating, then ready, with what changed.
    let forwarding = json!([
        {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
        {"entryProtocol": "tcp", "entryPort": 2222, "targetProtocol": "tcp", "targetPort": 22},
    ]);
    let updating = env.ok(UPDATE, json!({"tenantId": "acme", "loadBalancerId": id, "forwarding": forwarding})).await;
    assert_eq!((updating["state"].as_str(), updating["version"].as_i64()), (Some("updating"), Some(2)));
    assert_eq!(updating["forwarding"][1]["entryPort"], 2222);
    assert_eq!(updating["forwarding"].as_array().unwrap().len(), 2);
    assert_eq!(updating["healthCheck"]["path"], "/healthz", "parts not given are kept");
    env.wait_load_balancer_state("acme", &id, "ready").await;
    let fake = env.fake_load_balancer(&name).unwrap();
    assert_eq!(fake["forwardingRules"].as_array().unwrap().len(), 2);
    assert_eq!(fake["forwardingRules"][1]["entry_port"], 2222);
    let events = env.events("acme", &id).await;
    let updated = events.iter().find(|e| e["type"] == "providerLoadBalancer.updated").expect("an updated event");
    assert_eq!(updated["data"]["changed"], json!(["forwarding"]));
    assert_eq!(updated["data"]["state"], "ready");
    assert_eq!(Env::fake_droplets(&fake), droplets(&[&web1, &web2]), "a PUT resends the droplets");

    // Delete: deleting at once, then gone at the provider, the quota refunded, billing ended.
    let deleting = env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(deleting["state"], "deleting");
    let deleted = env.wait_load_balancer_state("acme", &id, "deleted").await;
    assert!(deleted["deletedAt"].is_string(), "{deleted}");
    assert!(env.fake_load_balancer(&name).is_none(), "deleted at the provider");
    assert_eq!(env.quota_used("acme").await, 0, "the reconciler refunded the quota");
    let (_, end) = billable(&env, &id).await.unwrap();
    assert!(end.is_some(), "billing ends when it is deleted");
    let events = env.events("acme", &id).await;
    assert_eq!(types(&events).last().map(String::as_str), Some("providerLoadBalancer.deleted"));
    let listed = env.ok(LIST, json!({"tenantId": "acme"})).await;
    assert_eq!(listed["loadBalancers"], json!([]), "deleted ones are left out");
    let listed = env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await;
    assert_eq!(listed["loadBalancers"][0]["id"], id.as_str(), "unless asked for");
    let again = env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(again["state"], "deleted", "deleting a deleted one returns it as it is");
    let (_, code, _) =
        env.refused(UPDATE, json!({"tenantId": "acme", "loadBalancerId": id, "redirectHttpToHttps": false})).await;
    assert_eq!(code, "INVALID_STATE");
}

async fn the_idempotency_key_makes_a_retry_return_the_same_load_balancer(backend: Backend) {
    let env = super::start(backend).await;
    let request = regional("same", json!({"pool": true}));
    let first = env.ok(CREATE, request.clone()).await;
    let second = env.ok(CREATE, request.clone()).await;
    assert_eq!(first["id"], second["id"]);
    assert_eq!(env.quota_used("acme").await, 1, "a retry books nothing more");
    let mut changed = request.clone();
    changed["description"] = json!("another request");
    let (status, code, details) = env.refused(CREATE, changed).await;
    assert_eq!((status, code.as_str()), (409, "CONFLICT"));
    assert_eq!(details["loadBalancerId"], first["id"]);
    // Another caller with the same key makes another one.
    let other = crate::harness::tenant_principal(&env.store, "acme", "editor").await;
    let theirs = env.ok_as(&other, CREATE, request).await;
    assert_ne!(theirs["id"], first["id"]);
}

async fn list_returns_the_tenants_load_balancers_in_order_by_pool_and_project(backend: Backend) {
    let env = super::start(backend).await;
    let project = env
        .ok_as(
            &env.server.admin_token.clone(),
            "/api/platform/projects/create",
            json!({"tenantId": "acme", "name": "shop"}),
        )
        .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let a = env.ok(CREATE, regional("a", json!({"pool": true}))).await;
    let mut in_project = regional("b", json!({"pool": true}));
    in_project["projectId"] = json!(project);
    let b = env.ok(CREATE, in_project).await;
    assert_eq!(b["projectId"], project.as_str());
    env.ok_as(&env.globex_admin.clone(), CREATE, super::as_tenant(regional("g", json!({"pool": true})), "globex"))
        .await;
    let ids = |list: &Value| -> Vec<String> {
        list["loadBalancers"].as_array().unwrap().iter().map(|lb| lb["id"].as_str().unwrap().to_owned()).collect()
    };
    let all = env.ok(LIST, json!({"tenantId": "acme"})).await;
    assert_eq!(ids(&all), [a["id"].as_str().unwrap(), b["id"].as_str().unwrap()], "oldest first, acme's only");
    let by_project = env.ok(LIST, json!({"tenantId": "acme", "projectId": project})).await;
    assert_eq!(ids(&by_project), [b["id"].as_str().unwrap()]);
    let by_pool = env.ok(LIST, json!({"tenantId": "acme", "poolId": OWN_POOL})).await;
    assert!(ids(&by_pool).is_empty());
    let viewer = env.ok_as(&env.acme_viewer.clone(), LIST, json!({"tenantId": "acme", "poolId": POOL})).await;
    assert_eq!(ids(&viewer).len(), 2, "a viewer reads them");
    env.ok_as(&env.acme_viewer.clone(), GET, json!({"tenantId": "acme", "loadBalancerId": a["id"]})).await;
    let (status, code, details) =
        env.refused_as(&env.acme_viewer.clone(), CREATE, regional("viewer", json!({"pool": true}))).await;
    assert_eq!(
        (status, code.as_str(), details["permission"].as_str()),
        (403, "ACCESS_DENIED", Some("compute:load-balancers:manage"))
    );
    let (status, _, _) =
        env.refused_as(&env.acme_viewer.clone(), DELETE, json!({"tenantId": "acme", "loadBalancerId": a["id"]})).await;
    assert_eq!(status, 403, "everything but reading takes manage");
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": a["id"]})).await;
    // No worker here: it stays deleting, still listed until deleted.
    assert_eq!(ids(&env.ok(LIST, json!({"tenantId": "acme"})).await).len(), 2);
    let (status, code, _) =
        env.refused(GET, json!({"tenantId": "acme", "loadBalancerId": "plb_0000000000000000000000000a"})).await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
}
