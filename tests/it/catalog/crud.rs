//! Create, get, list, update and delete of every catalog resource through JSON, with the
//! errors that name what was wrong.

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::{Client, DO_TOKEN, Platform, System, gke_key, violated_fields};

crate::on_both_backends!(
    projects_are_created_read_listed_updated_and_deleted,
    accounts_are_created_read_listed_updated_and_deleted,
    accounts_refuse_locations_and_credentials_of_the_wrong_provider,
    pools_are_created_read_listed_updated_and_deleted,
    offers_are_created_read_listed_updated_and_deleted,
    quotas_are_created_read_listed_updated_and_deleted,
    budgets_are_created_read_listed_updated_and_deleted,
    catalog_changes_publish_events_in_their_transaction,
);

async fn projects_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    client.ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let created = client
        .ok("/api/platform/projects/create", json!({"tenantId": "acme", "name": "web", "description": "d"}))
        .await;
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("prj_") && id.len() == 30, "{created}");
    assert_eq!((created["state"].as_str(), created["version"].as_i64()), (Some("active"), Some(1)));
    assert_eq!(client.ok("/api/platform/projects/get", json!({"projectId": id})).await, created);

    let error = client
        .fails("/api/platform/projects/create", json!({"tenantId": "acme", "name": "web"}), 409, "CONFLICT")
        .await;
    assert!(error["message"].as_str().unwrap().contains("web"), "{error}");
    client.fails("/api/platform/projects/create", json!({"tenantId": "nobody", "name": "web"}), 404, "NOT_FOUND").await;
    let error = client
        .fails("/api/platform/projects/create", json!({"tenantId": "acme", "name": "Web!"}), 400, "INVALID_INPUT")
        .await;
    assert_eq!(violated_fields(&error["details"]), ["name"]);

    let updated = client.ok("/api/platform/projects/update", json!({"projectId": id, "name": "shop"})).await;
    assert_eq!((updated["name"].as_str(), updated["version"].as_i64()), (Some("shop"), Some(2)));
    client.fails("/api/platform/projects/update", json!({"projectId": id}), 400, "INVALID_INPUT").await;

    let deleted = client.ok("/api/platform/projects/delete", json!({"projectId": id})).await;
    assert_eq!(deleted["state"], "deleted");
    assert_eq!(client.ok("/api/platform/projects/delete", json!({"projectId": id})).await, deleted);
    client.fails("/api/platform/projects/update", json!({"projectId": id, "name": "x"}), 409, "INVALID_STATE").await;
    // A deleted project's name is free again.
    client.ok("/api/platform/projects/create", json!({"tenantId": "acme", "name": "shop"})).await;
    let list = client.ok("/api/platform/projects/list", json!({"tenantId": "acme"})).await;
    assert_eq!(list["projects"].as_array().unwrap().len(), 1);
    let list = client.ok("/api/platform/projects/list", json!({"includeDeleted": true})).await;
    assert_eq!(list["projects"].as_array().unwrap().len(), 2);
    client
        .fails("/api/platform/projects/get", json!({"projectId": "prj_0000000000000000000000000a"}), 404, "NOT_FOUND")
        .await;
}

async fn accounts_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let gke = client.ok("/api/platform/accounts/get", json!({"accountId": platform.gke_account})).await;
    assert_eq!(gke["provider"], "gke");
    assert_eq!(gke["tenantId"], "", "a platform account has no tenant");
    assert_eq!(gke["credentialsSet"], true);
    assert!(gke.get("credentials").is_none(), "{gke}");
    assert_eq!(gke["capabilities"], json!(["managed-kubernetes", "networks"]));
    assert_eq!(gke["zones"], json!(["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"]));
    assert_eq!(gke["regions"], json!(["us-central1", "europe-west1"]));
    assert_eq!(gke["endpoint"], "http://127.0.0.1:1");
    let digitalocean = client.ok("/api/platform/accounts/get", json!({"accountId": platform.do_account})).await;
    assert_eq!(
        digitalocean["capabilities"],
        json!(["load-balancers", "instances", "networks", "certificates", "volumes"])
    );
    assert_eq!(
        (digitalocean["zones"].clone(), digitalocean["regions"].clone()),
        (json!([]), json!(["nyc3", "ams3", "sfo3"]))
    );

    let own = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": "dop_v1_acme",
                "regions": ["fra1"]}),
        )
        .await;
    assert_eq!(own["tenantId"], "acme");
    let names = |list: serde_json::Value| -> Vec<String> {
        list["accounts"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(
        names(client.ok("/api/platform/accounts/list", json!({})).await),
        ["platform-gke", "platform-do", "acme-do"]
    );
    assert_eq!(names(client.ok("/api/platform/accounts/list", json!({"tenantId": "acme"})).await), ["acme-do"]);
    assert_eq!(
        names(client.ok("/api/platform/accounts/list", json!({"platformOnly": true})).await),
        ["platform-gke", "platform-do"]
    );

    let updated = client
        .ok(
            "/api/platform/accounts/update",
            json!({"accountId": own["id"], "credentials": "dop_v1_rotated", "regions": ["fra1", "lon1"], "description": "x"}),
        )
        .await;
    assert_eq!((updated["regions"].clone(), updated["version"].as_i64()), (json!(["fra1", "lon1"]), Some(2)));
    client.fails("/api/platform/accounts/update", json!({"accountId": own["id"]}), 400, "INVALID_INPUT").await;

    let error = client
        .fails("/api/platform/accounts/delete", json!({"accountId": platform.gke_account}), 409, "INVALID_STATE")
        .await;
    assert!(error["message"].as_str().unwrap().contains("pool"), "an account with pools stays: {error}");
    let deleted = client.ok("/api/platform/accounts/delete", json!({"accountId": own["id"]})).await;
    assert_eq!(deleted["state"], "deleted");
    assert!(deleted["deletedAt"].is_string());
    client
        .fails(
            "/api/platform/pools/create",
            json!({"accountId": own["id"], "name": "late", "billingMode": "none"}),
            409,
            "INVALID_STATE",
        )
        .await;
    client
        .fails("/api/platform/accounts/get", json!({"accountId": "acct_0000000000000000000000000a"}), 404, "NOT_FOUND")
        .await;
}

async fn accounts_refuse_locations_and_credentials_of_the_wrong_provider(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let cases = [
        (
            json!({"provider": "gke", "name": "a", "credentials": gke_key(), "regions": ["nyc3"]}),
            vec!["regions", "zones"],
        ),
        (json!({"provider": "digitalocean", "name": "a", "credentials": DO_TOKEN}), vec!["regions"]),
        (
            json!({"provider": "digitalocean", "name": "a", "credentials": DO_TOKEN, "regions": ["nyc3"], "zones": ["us-central1-a"]}),
            vec!["zones"],
        ),
        (
            json!({"provider": "gke", "name": "a", "credentials": DO_TOKEN, "zones": ["us-central1-a"]}),
            vec!["credentials"],
        ),
        (
            json!({"provider": "digitalocean", "name": "a", "credentials": "two words", "regions": ["nyc3"]}),
            vec!["credentials"],
        ),
        (json!({"provider": "aws", "name": "a", "credentials": DO_TOKEN}), vec!["provider"]),
        (json!({"provider": "gke", "name": "a", "credentials": gke_key(), "zones": ["us-central1"]}), vec!["zones[0]"]),
        (
            json!({"provider": "gke", "name": "a", "credentials": gke_key(), "zones": ["us-central1-a"], "endpoint": "ftp://x"}),
            vec!["endpoint"],
        ),
    ];
    // Endpoints the pattern alone lets through: a bracket no URL parser reads alike, user info
    // (a secret every read would show), a query the worker's paths would land after.
    let endpoints =
        ["http://[", "https://[::1", "http://a]b/", "https://user:pass@api.example", "https://api.example?x=1"];
    let cases = cases.into_iter().chain(endpoints.map(|endpoint| {
        (json!({"provider": "digitalocean", "name": "a", "credentials": DO_TOKEN, "regions": ["nyc3"], "endpoint": endpoint}),
            vec!["endpoint"])
    }));
    for (body, fields) in cases {
        let error = client.fails("/api/platform/accounts/create", body.clone(), 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), fields, "{body}: {error}");
    }
    let list = client.ok("/api/platform/accounts/list", json!({"includeDeleted": true})).await;
    assert_eq!(list["accounts"], json!([]), "a refused create writes nothing");
    assert!(!client.transcript().contains(DO_TOKEN), "a refusal does not quote the credentials");
    assert!(!client.transcript().contains("user:pass"), "a refusal does not quote an endpoint's user info");
}

async fn pools_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let pool = client.ok("/api/platform/pools/get", json!({"poolId": platform.gke_pool})).await;
    assert!(pool["id"].as_str().unwrap().starts_with("pool_"));
    assert_eq!((pool["provider"].as_str(), pool["billingMode"].as_str()), (Some("gke"), Some("metered")));
    assert_eq!(pool["prices"], json!({"kubernetes.cluster.hours": 10}));
    assert_eq!(
        (pool["state"].as_str(), pool["accountId"].as_str()),
        (Some("active"), Some(platform.gke_account.as_str()))
    );

    // Struct numbers are doubles in the JSON mapping, so the document keeps a fractional one.
    let policy = json!({"nodeLabels": {"tier": "gold"}, "cpuRatio": 1.5, "spot": false});
    let updated = client
        .ok(
            "/api/platform/pools/update",
            json!({"poolId": platform.gke_pool, "state": "archived", "policy": policy, "prices": {"kubernetes.cluster.hours": 12}}),
        )
        .await;
    assert_eq!((updated["state"].as_str(), updated["version"].as_i64()), (Some("archived"), Some(2)));
    assert_eq!(updated["policy"], policy, "the policy document round-trips");
    assert_eq!(updated["prices"], json!({"kubernetes.cluster.hours": 12}));
    let error = client
        .fails(
            "/api/platform/pools/update",
            json!({"poolId": platform.gke_pool, "billingMode": "free"}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert!(error["message"].as_str().unwrap().contains("none, metered, platform-fee"), "{error}");
    let error = client
        .fails(
            "/api/platform/pools/create",
            json!({"accountId": platform.do_account, "name": "p", "billingMode": "none", "prices": {"x": -1}}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert!(error["message"].as_str().unwrap().contains("prices"), "{error}");

    let list = client.ok("/api/platform/pools/list", json!({"accountId": platform.do_account})).await;
    assert_eq!(list["pools"].as_array().unwrap().len(), 1);
    assert_eq!(list["pools"][0]["id"], platform.do_pool.as_str());

    let deleted = client.ok("/api/platform/pools/delete", json!({"poolId": platform.gke_pool})).await;
    assert_eq!(deleted["state"], "deleted");
    assert_eq!(client.ok("/api/platform/pools/list", json!({})).await["pools"].as_array().unwrap().len(), 1);
    client
        .fails("/api/platform/pools/get", json!({"poolId": "pool_0000000000000000000000000a"}), 404, "NOT_FOUND")
        .await;
}

async fn offers_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let offer = client
        .ok(
            "/api/platform/offers/create",
            json!({"poolId": platform.gke_pool, "tenantId": "globex", "excludedRegions": ["europe-west1"]}),
        )
        .await;
    assert_eq!((offer["state"].as_str(), offer["excludedRegions"].clone()), (Some("active"), json!(["europe-west1"])));
    client
        .fails(
            "/api/platform/offers/create",
            json!({"poolId": platform.gke_pool, "tenantId": "globex"}),
            409,
            "CONFLICT",
        )
        .await;
    let error = client
        .fails(
            "/api/platform/offers/create",
            json!({"poolId": platform.do_pool, "tenantId": "globex", "excludedRegions": ["nyc3", "lon1"]}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["excludedRegions[1]"]);
    assert_eq!(error["details"]["regions"], json!(["nyc3", "ams3", "sfo3"]));

    let own = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "globex", "provider": "digitalocean", "name": "own", "credentials": "dop_v1_g", "regions": ["nyc3"]}),
        )
        .await;
    let own_pool = client
        .ok("/api/platform/pools/create", json!({"accountId": own["id"], "name": "own", "billingMode": "none"}))
        .await;
    let error = client
        .fails(
            "/api/platform/offers/create",
            json!({"poolId": own_pool["id"], "tenantId": "acme"}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["poolId"], "a tenant's pool is not offered to others");

    let key = json!({"poolId": platform.gke_pool, "tenantId": "globex"});
    assert_eq!(client.ok("/api/platform/offers/get", key.clone()).await, offer);
    let suspended = client
        .ok(
            "/api/platform/offers/update",
            json!({"poolId": platform.gke_pool, "tenantId": "globex", "state": "suspended"}),
        )
        .await;
    assert_eq!((suspended["state"].as_str(), suspended["version"].as_i64()), (Some("suspended"), Some(2)));
    assert_eq!(suspended["excludedRegions"], json!(["europe-west1"]), "what is not named stays");
    let cleared = client
        .ok(
            "/api/platform/offers/update",
            json!({"poolId": platform.gke_pool, "tenantId": "globex", "clearExcludedRegions": true}),
        )
        .await;
    assert_eq!(cleared["excludedRegions"], json!([]));
    client.fails("/api/platform/offers/update", key.clone(), 400, "INVALID_INPUT").await;

    let list = client.ok("/api/platform/offers/list", json!({"tenantId": "acme"})).await;
    assert_eq!(list["offers"].as_array().unwrap().len(), 2);
    let list = client.ok("/api/platform/offers/list", json!({"poolId": platform.gke_pool})).await;
    assert_eq!(list["offers"].as_array().unwrap().len(), 2);
    client.ok("/api/platform/offers/delete", key.clone()).await;
    client.fails("/api/platform/offers/get", key.clone(), 404, "NOT_FOUND").await;
    client.fails("/api/platform/offers/delete", key, 404, "NOT_FOUND").await;
}

async fn quotas_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let key = json!({"poolId": platform.do_pool, "tenantId": "acme", "resourceKind": "loadBalancers"});
    let mut body = key.clone();
    body["limit"] = json!(5);
    let quota = client.ok("/api/platform/quotas/create", body.clone()).await;
    assert_eq!((quota["limit"].as_i64(), quota["used"].as_i64()), (Some(5), Some(0)));
    client.fails("/api/platform/quotas/create", body, 409, "CONFLICT").await;
    assert_eq!(client.ok("/api/platform/quotas/get", key.clone()).await, quota);
    let error = client
        .fails(
            "/api/platform/quotas/create",
            json!({"poolId": platform.do_pool, "tenantId": "acme", "resourceKind": "load balancers", "limit": 1}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["resourceKind"]);

    let mut change = key.clone();
    change["limit"] = json!(7);
    let updated = client.ok("/api/platform/quotas/update", change).await;
    assert_eq!((updated["limit"].as_i64(), updated["version"].as_i64()), (Some(7), Some(2)));

    server.store.quota_book(&platform.do_pool, "acme", "loadBalancers", 1).await.unwrap();
    assert_eq!(client.ok("/api/platform/quotas/get", key.clone()).await["used"], 1);
    let error = client.fails("/api/platform/quotas/delete", key.clone(), 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["used"], 1, "a quota with bookings stays: {error}");
    let error =
        client.fails("/api/platform/pools/delete", json!({"poolId": platform.do_pool}), 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["used"], 1, "a pool with bookings stays: {error}");
    server.store.quota_refund(&platform.do_pool, "acme", "loadBalancers", 1).await.unwrap();

    let list = client.ok("/api/platform/quotas/list", json!({"tenantId": "acme"})).await;
    assert_eq!(list["quotas"].as_array().unwrap().len(), 1);
    client.ok("/api/platform/quotas/delete", key.clone()).await;
    client.fails("/api/platform/quotas/get", key, 404, "NOT_FOUND").await;
}

async fn budgets_are_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    client.ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let budget = client
        .ok("/api/platform/budgets/create", json!({"tenantId": "acme", "name": "monthly", "monthlyLimit": 1000}))
        .await;
    assert!(budget["id"].as_str().unwrap().starts_with("bud_"));
    assert_eq!((budget["monthlyLimit"].as_i64(), budget["monthSpend"].as_i64()), (Some(1000), Some(0)));
    let id = budget["id"].clone();
    assert_eq!(client.ok("/api/platform/budgets/get", json!({"budgetId": id})).await, budget);
    let updated = client.ok("/api/platform/budgets/update", json!({"budgetId": id, "monthlyLimit": 50})).await;
    assert_eq!((updated["monthlyLimit"].as_i64(), updated["name"].as_str()), (Some(50), Some("monthly")));
    client.fails("/api/platform/budgets/update", json!({"budgetId": id}), 400, "INVALID_INPUT").await;
    client
        .fails(
            "/api/platform/budgets/create",
            json!({"tenantId": "acme", "name": "m", "monthlyLimit": -1}),
            400,
            "INVALID_INPUT",
        )
        .await;
    client
        .fails(
            "/api/platform/budgets/create",
            json!({"tenantId": "nobody", "name": "m", "monthlyLimit": 1}),
            404,
            "NOT_FOUND",
        )
        .await;
    let list = client.ok("/api/platform/budgets/list", json!({"tenantId": "acme"})).await;
    assert_eq!(list["budgets"].as_array().unwrap().len(), 1);
    client.ok("/api/platform/budgets/delete", json!({"budgetId": id})).await;
    client.fails("/api/platform/budgets/get", json!({"budgetId": id}), 404, "NOT_FOUND").await;
}

async fn catalog_changes_publish_events_in_their_transaction(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    client
        .fails("/api/platform/accounts/delete", json!({"accountId": platform.gke_account}), 409, "INVALID_STATE")
        .await;
    let events = server
        .store
        .event_list_after(&better_compute::store::EventFilter { limit: 1000, ..Default::default() })
        .await
        .unwrap();
    let of = |kind: &str| events.iter().filter(|e| e.event_type == kind).collect::<Vec<_>>();
    let accounts = of("platform.account.created");
    assert_eq!(accounts.len(), 2);
    assert_eq!(accounts[0].tenant_id, "platform", "a platform account's events are the platform's");
    assert_eq!(accounts[0].subject, platform.gke_account);
    assert_eq!(of("platform.pool.created").len(), 2);
    assert_eq!(of("platform.offer.created").iter().map(|e| e.tenant_id.as_str()).collect::<Vec<_>>(), ["acme", "acme"]);
    assert!(of("platform.account.deleted").is_empty(), "a refused delete publishes nothing");
}
