//! The tenant's pools and every error of the placement checks, through
//! `POST /api/compute/pools/...` as JSON.

use better_compute::store::{Backend, HOUR_MICROS, hour_floor, now_micros};
use serde_json::{Value, json};

use crate::harness::{Client, Platform, System, tenant_principal, violated_fields};

crate::on_both_backends!(
    a_tenant_sees_its_own_pools_and_the_offered_ones,
    every_check_refuses_with_its_documented_error,
    a_reached_budget_refuses_pools_that_bill,
    tenant_principals_read_their_own_pools_and_nothing_of_the_catalog,
);

const CHECK: &str = "/api/compute/pools/checkPlacement";

fn placement(tenant: &str, pool: &str, capability: &str, location: &str) -> Value {
    json!({"tenantId": tenant, "poolId": pool, "capability": capability, "location": location})
}

async fn a_tenant_sees_its_own_pools_and_the_offered_ones(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let own = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "own", "credentials": "dop_v1_own", "regions": ["fra1"]}),
        )
        .await;
    let own_pool = client
        .ok("/api/platform/pools/create", json!({"accountId": own["id"], "name": "own", "billingMode": "none"}))
        .await;
    // A platform pool offered to nobody is visible to nobody.
    client
        .ok(
            "/api/platform/pools/create",
            json!({"accountId": platform.do_account, "name": "hidden", "billingMode": "none"}),
        )
        .await;
    client
        .ok(
            "/api/platform/offers/update",
            json!({"poolId": platform.do_pool, "tenantId": "acme", "state": "suspended"}),
        )
        .await;

    let list = client.ok("/api/compute/pools/list", json!({"tenantId": "acme"})).await;
    let pools = list["pools"].as_array().unwrap();
    let ids: Vec<&str> = pools.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [platform.gke_pool.as_str(), platform.do_pool.as_str(), own_pool["id"].as_str().unwrap()]);
    assert_eq!(pools[0]["capabilities"], json!(["managed-kubernetes", "networks"]));
    assert_eq!(pools[0]["zones"], json!(["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"]));
    assert_eq!(pools[0]["regions"], json!(["us-central1", "europe-west1"]));
    assert_eq!((pools[0]["own"].as_bool(), pools[0]["offer"]["state"].as_str()), (Some(false), Some("active")));
    assert_eq!(pools[1]["offer"]["state"], "suspended", "a suspended offer still shows its pool");
    assert_eq!(pools[2]["own"], true);
    assert!(pools[2].get("offer").is_none(), "an own pool needs no offer: {}", pools[2]);

    let globex = client.ok("/api/compute/pools/list", json!({"tenantId": "globex"})).await;
    assert_eq!(globex["pools"], json!([]), "globex is offered nothing and owns nothing");
    let mut got = client.ok("/api/compute/pools/get", json!({"tenantId": "acme", "poolId": platform.gke_pool})).await;
    let nodes = got.as_object_mut().unwrap().remove("nodes");
    assert_eq!(got, pools[0], "get is the list's item, with its nodes");
    assert_eq!(nodes.unwrap()["ready"], 0, "a pool no machine joined has no nodes");
    let error = client
        .fails("/api/compute/pools/get", json!({"tenantId": "globex", "poolId": own_pool["id"]}), 404, "NOT_FOUND")
        .await;
    assert_eq!(error["details"]["resource"], "pool");
}

async fn every_check_refuses_with_its_documented_error(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let (gke, digitalocean) = (platform.gke_pool.as_str(), platform.do_pool.as_str());

    // Everything in order: a zone, and the region of a zone.
    let ok = client.ok(CHECK, placement("acme", gke, "managed-kubernetes", "us-central1-a")).await;
    assert_eq!(ok, json!({"ok": true, "zone": "us-central1-a", "region": "us-central1"}));
    let ok = client.ok(CHECK, placement("acme", gke, "managed-kubernetes", "europe-west1")).await;
    assert_eq!((ok["zone"].as_str(), ok["region"].as_str()), (Some(""), Some("europe-west1")));

    // Not visible: another tenant's view of an unoffered pool, and a pool that does not exist.
    let error =
        client.fails(CHECK, placement("globex", gke, "managed-kubernetes", "us-central1-a"), 404, "NOT_FOUND").await;
    assert!(error["message"].as_str().unwrap().contains(gke), "{error}");
    client
        .fails(CHECK, placement("acme", "pool_0000000000000000000000000a", "load-balancers", "nyc3"), 404, "NOT_FOUND")
        .await;

    // Capability.
    let error =
        client.fails(CHECK, placement("acme", gke, "load-balancers", "us-central1-a"), 422, "UNSUPPORTED").await;
    assert_eq!(error["details"]["capabilities"], json!(["managed-kubernetes", "networks"]));
    let error =
        client.fails(CHECK, placement("acme", digitalocean, "managed-kubernetes", "nyc3"), 422, "UNSUPPORTED").await;
    assert_eq!(error["details"]["provider"], "digitalocean");

    // Location: neither a zone nor the region of one.
    for location in ["us-east1-b", "us-east1", "europe-west1-c"] {
        let error =
            client.fails(CHECK, placement("acme", gke, "managed-kubernetes", location), 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), ["location"]);
        assert_eq!(
            error["details"]["zones"],
            json!(["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"])
        );
        assert_eq!(error["details"]["regions"], json!(["us-central1", "europe-west1"]));
        assert!(error["message"].as_str().unwrap().contains(location), "{error}");
    }
    let error =
        client.fails(CHECK, placement("acme", digitalocean, "load-balancers", "lon1"), 400, "INVALID_INPUT").await;
    assert_eq!(
        (error["details"]["zones"].clone(), error["details"]["regions"].clone()),
        (json!([]), json!(["nyc3", "ams3", "sfo3"]))
    );

    // No quota row grants none; a full quota is exceeded with its limit.
    let mut lb = placement("acme", digitalocean, "load-balancers", "nyc3");
    lb["resourceKind"] = json!("loadBalancers");
    let error = client.fails(CHECK, lb.clone(), 429, "QUOTA_EXCEEDED").await;
    assert_eq!(error["details"]["limit"], 0, "{error}");
    client
        .ok(
            "/api/platform/quotas/create",
            json!({"poolId": digitalocean, "tenantId": "acme", "resourceKind": "loadBalancers", "limit": 1}),
        )
        .await;
    client.ok(CHECK, lb.clone()).await;
    server.store.quota_book(digitalocean, "acme", "loadBalancers", 1).await.unwrap();
    let error = client.fails(CHECK, lb.clone(), 429, "QUOTA_EXCEEDED").await;
    assert_eq!((error["details"]["limit"].as_i64(), error["details"]["used"].as_i64()), (Some(1), Some(1)));
    server.store.quota_refund(digitalocean, "acme", "loadBalancers", 1).await.unwrap();
    client.ok(CHECK, lb.clone()).await;

    // An excluded region (named as a region or through one of its zones), then a suspended offer.
    client
        .ok(
            "/api/platform/offers/update",
            json!({"poolId": gke, "tenantId": "acme", "excludedRegions": ["europe-west1"]}),
        )
        .await;
    for location in ["europe-west1", "europe-west1-b"] {
        let error =
            client.fails(CHECK, placement("acme", gke, "managed-kubernetes", location), 400, "INVALID_INPUT").await;
        assert_eq!(error["details"]["excludedRegions"], json!(["europe-west1"]));
        assert_eq!(error["details"]["region"], "europe-west1");
    }
    client.ok(CHECK, placement("acme", gke, "managed-kubernetes", "us-central1-b")).await;
    client.ok("/api/platform/offers/update", json!({"poolId": gke, "tenantId": "acme", "state": "suspended"})).await;
    let error =
        client.fails(CHECK, placement("acme", gke, "managed-kubernetes", "us-central1-b"), 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["offerState"], "suspended");

    // An archived pool takes nothing new.
    client.ok("/api/platform/pools/update", json!({"poolId": digitalocean, "state": "archived"})).await;
    let error = client.fails(CHECK, lb, 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["state"], "archived");

    // The request itself: the capability and location are checked against the descriptors.
    let error = client.fails(CHECK, placement("acme", gke, "gpus", "us-central1-a"), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["capability"]);
}

async fn a_reached_budget_refuses_pools_that_bill(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let free = client
        .ok(
            "/api/platform/pools/create",
            json!({"accountId": platform.gke_account, "name": "free", "billingMode": "none"}),
        )
        .await;
    client.ok("/api/platform/offers/create", json!({"poolId": free["id"], "tenantId": "acme"})).await;
    let budget =
        client.ok("/api/platform/budgets/create", json!({"tenantId": "acme", "name": "cap", "monthlyLimit": 50})).await;

    // Four cluster hours on the metered GKE pool at 10 each: 40 of 50.
    let now = now_micros();
    let start = hour_floor(now) - 4 * HOUR_MICROS;
    let store = &server.store;
    store
        .usage_billable_record_on_pool(
            "kubernetes.cluster.hours",
            "kcl_a",
            "acme",
            Some(&platform.gke_pool),
            start,
            Some(start + 4 * HOUR_MICROS),
        )
        .await
        .unwrap();
    store.usage_meter(now).await.unwrap();
    let spend = client.ok("/api/platform/budgets/get", json!({"budgetId": budget["id"]})).await["monthSpend"].as_i64();
    // Hours before this month's start (the first hours of a month) do not count.
    let month_start = better_compute::store::month_bounds(now).0;
    let expected = (0..4).filter(|h| start + h * HOUR_MICROS >= month_start).count() as i64 * 10;
    assert_eq!(spend, Some(expected));
    let metered = placement("acme", &platform.gke_pool, "managed-kubernetes", "us-central1-a");
    if expected < 50 {
        client.ok(CHECK, metered.clone()).await;
    }

    // Reach the limit: the metered pool refuses naming the budget; the free pool does not.
    client.ok("/api/platform/budgets/update", json!({"budgetId": budget["id"], "monthlyLimit": expected})).await;
    let error = client.fails(CHECK, metered.clone(), 429, "QUOTA_EXCEEDED").await;
    assert_eq!(error["details"]["budgetId"], budget["id"]);
    assert_eq!(error["details"]["budget"], "cap");
    assert_eq!(
        (error["details"]["limit"].as_i64(), error["details"]["spend"].as_i64()),
        (Some(expected), Some(expected))
    );
    assert!(error["message"].as_str().unwrap().contains("cap"), "{error}");
    client.ok(CHECK, placement("acme", free["id"].as_str().unwrap(), "managed-kubernetes", "us-central1-a")).await;
}

async fn tenant_principals_read_their_own_pools_and_nothing_of_the_catalog(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let stranger = tenant_principal(&server.store, "globex", "admin").await;
    let roleless = tenant_principal(&server.store, "acme", "").await;

    let (status, list) = server.post("/api/compute/pools/list", Some(&viewer), json!({"tenantId": "acme"})).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["pools"].as_array().unwrap().len(), 2);
    let check = placement("acme", &platform.do_pool, "load-balancers", "nyc3");
    let (status, answer) = server.post(CHECK, Some(&viewer), check.clone()).await;
    assert_eq!((status, answer["ok"].as_bool()), (200, Some(true)), "{answer}");

    // Another tenant's principal, and one with no role, are refused before anything is read.
    for token in [&stranger, &roleless] {
        for (path, body) in [
            ("/api/compute/pools/list", json!({"tenantId": "acme"})),
            ("/api/compute/pools/get", json!({"tenantId": "acme", "poolId": platform.do_pool})),
            (CHECK, check.clone()),
        ] {
            let (status, answer) = server.post(path, Some(token), body).await;
            assert_eq!((status, answer["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{path}: {answer}");
        }
    }
    // The catalog is the operator's.
    for (path, body) in [
        ("/api/platform/accounts/list", json!({})),
        ("/api/platform/pools/get", json!({"poolId": platform.do_pool})),
        (
            "/api/platform/quotas/create",
            json!({"poolId": platform.do_pool, "tenantId": "acme", "resourceKind": "loadBalancers", "limit": 9}),
        ),
    ] {
        let (status, answer) = server.post(path, Some(&viewer), body).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{path}: {answer}");
    }
    let quotas = client.ok("/api/platform/quotas/list", json!({})).await;
    assert_eq!(quotas["quotas"], json!([]), "a refused create writes nothing");
}
