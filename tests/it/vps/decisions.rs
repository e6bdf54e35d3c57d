//! Decisions an operator's policy can shape: `providerAccountId` on a create, resolved from the
//! pool the request names before deciding; and each item of a list decided as `get` decides it,
//! with the attributes its authorization row records, so a policy on an attribute filters the
//! list as it refuses the `get`.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{DO_POOL, GKE_POOL, OWN_DO_POOL, instance, network};

crate::on_both_backends!(
    a_policy_on_the_provider_account_refuses_a_create_on_that_account_only,
    a_list_keeps_only_the_items_a_policy_lets_get_read,
    a_refused_list_names_the_tenant,
);

/// Creates on the platform's DigitalOcean account are forbidden; clusters on the GKE account too.
const NO_PLATFORM_ACCOUNTS: &str = r#"
forbid (principal, action == BetterCompute::Action::"compute:instances:create", resource)
    when { resource has providerAccountId && resource.providerAccountId == "acct_0000000000000000000000dg01" };
forbid (principal, action == BetterCompute::Action::"compute:kubernetes:create", resource)
    when { resource has providerAccountId && resource.providerAccountId == "acct_0000000000000000000000gke1" };
"#;

/// Viewers see neither instances in ams3 nor networks on the platform's DigitalOcean pool.
const HIDE_FROM_VIEWERS: &str = r#"
forbid (principal, action == BetterCompute::Action::"compute:instances:read", resource)
    when { resource has region && resource.region == "ams3" &&
           !(resource has tenant && resource.tenant.admins.contains(principal)) };
forbid (principal, action == BetterCompute::Action::"compute:networks:read", resource)
    when { resource has poolId && resource.poolId == "pool_0000000000000000000000dg01" &&
           !(resource has tenant && resource.tenant.admins.contains(principal)) };
"#;

fn policies(name: &str, text: &str) -> Vec<(String, String)> {
    vec![(name.to_owned(), text.to_owned())]
}

async fn a_policy_on_the_provider_account_refuses_a_create_on_that_account_only(backend: Backend) {
    // The policy names `providerAccountId`: the server starts with it (the schema declares it).
    let env = super::setup(backend).policies(&policies("accounts.cedar", NO_PLATFORM_ACCOUNTS)).start().await;
    let admin = env.acme_admin.clone();
    let error = env
        .expect_failure(&admin, "/api/compute/instances/create", instance("web", "nyc3", ""), 403, "ACCESS_DENIED")
        .await;
    assert_eq!(error["details"]["permission"], "compute:instances:create", "{error}");
    let mut own = instance("own", "nyc3", "");
    own["poolId"] = json!(OWN_DO_POOL);
    env.ok("/api/compute/instances/create", own).await;

    let cluster = json!({"tenantId": "acme", "poolId": GKE_POOL, "name": "web", "mode": "autopilot",
        "location": "europe-west1", "idempotencyKey": "web"});
    env.expect_failure(&admin, "/api/compute/kubernetesClusters/create", cluster, 403, "ACCESS_DENIED").await;
    // Nothing was left behind by either refusal.
    let listed = env.ok("/api/compute/instances/list", json!({"tenantId": "acme", "poolId": DO_POOL})).await;
    assert_eq!(listed["instances"], json!([]), "{listed}");
    let clusters = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    assert_eq!(clusters["clusters"], json!([]), "{clusters}");
}

fn names(answer: &Value, field: &str) -> Vec<String> {
    let items = answer[field].as_array().cloned().unwrap_or_default();
    items.iter().map(|item| item["name"].as_str().unwrap_or_default().to_owned()).collect()
}

async fn a_list_keeps_only_the_items_a_policy_lets_get_read(backend: Backend) {
    let env = super::setup(backend).policies(&policies("viewers.cedar", HIDE_FROM_VIEWERS)).start().await;
    let nyc = env.ok("/api/compute/instances/create", instance("in-nyc", "nyc3", "")).await;
    let ams = env.ok("/api/compute/instances/create", instance("in-ams", "ams3", "")).await;
    let on_do =
        env.ok("/api/compute/networks/create", network(DO_POOL, "on-do", &[("a", "nyc3", "10.1.0.0/24")])).await;
    let on_own =
        env.ok("/api/compute/networks/create", network(OWN_DO_POOL, "on-own", &[("a", "nyc3", "10.2.0.0/24")])).await;

    let viewer = env.acme_viewer.clone();
    let get = |path: &'static str, field: &'static str, id: Value| {
        let env = &env;
        let viewer = viewer.clone();
        async move { env.post_as(&viewer, path, json!({"tenantId": "acme", field: id})).await.0 }
    };
    // `get` refuses what the policy hides...
    assert_eq!(get("/api/compute/instances/get", "instanceId", ams["id"].clone()).await, 403);
    assert_eq!(get("/api/compute/instances/get", "instanceId", nyc["id"].clone()).await, 200);
    assert_eq!(get("/api/compute/networks/get", "networkId", on_do["id"].clone()).await, 403);
    assert_eq!(get("/api/compute/networks/get", "networkId", on_own["id"].clone()).await, 200);
    // ...and the list leaves out the same items.
    let (status, instances) = env.post_as(&viewer, "/api/compute/instances/list", json!({"tenantId": "acme"})).await;
    assert_eq!((status, names(&instances, "instances")), (200, vec!["in-nyc".to_owned()]), "{instances}");
    let (status, networks) = env.post_as(&viewer, "/api/compute/networks/list", json!({"tenantId": "acme"})).await;
    assert_eq!((status, names(&networks, "networks")), (200, vec!["on-own".to_owned()]), "{networks}");
    // The tenant's admin sees all of them.
    let all = env.ok("/api/compute/instances/list", json!({"tenantId": "acme"})).await;
    assert_eq!(names(&all, "instances"), ["in-nyc", "in-ams"]);
}

async fn a_refused_list_names_the_tenant(backend: Backend) {
    let env = super::setup(backend).start().await;
    let globex = env.globex_admin.clone();
    let error = env
        .expect_failure(&globex, "/api/compute/instances/list", json!({"tenantId": "acme"}), 403, "ACCESS_DENIED")
        .await;
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("on tenant acme"), "{message}");
    assert!(!message.contains("a new"), "a list is decided on the tenant, not on something new: {message}");
}
