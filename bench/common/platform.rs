//! The platform the benchmarks run on, made through the API as an operator would: a GKE and a
//! DigitalOcean account on the fake cloud, a metered pool on each, and tenants with an offer of
//! both pools and an admin user whose API key the programs call with.

use std::time::Duration;

use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};

/// The GKE account's zones; clusters go to the region `europe-west1`.
pub const GKE_ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "us-central1-a"];
/// The DigitalOcean account's regions.
pub const DO_REGIONS: [&str; 2] = ["nyc3", "ams3"];

/// JSON calls to the API.
#[derive(Clone)]
pub struct Api {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The HTTP client (keeps connections open).
    http: reqwest::Client,
}

impl Api {
    /// A client of `endpoint`.
    pub fn new(endpoint: &str) -> Api {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().expect("a reqwest client");
        Api { endpoint: endpoint.to_owned(), http }
    }

    /// `POST path` with `body` as `token`: the status and the JSON answer.
    pub async fn call(&self, token: &str, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let response = self
            .http
            .post(format!("{}{path}", self.endpoint))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("{path}: {e}"))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| format!("{path}: {e}"))?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    /// `POST path`, which must answer 200.
    pub async fn ok(&self, token: &str, path: &str, body: Value) -> Result<Value, String> {
        match self.call(token, path, &body).await? {
            (200, answer) => Ok(answer),
            (status, answer) => Err(format!("{path} {body} answered {status}: {answer}")),
        }
    }
}

/// The platform's pools.
#[derive(Clone, Debug)]
pub struct Platform {
    /// The GKE account.
    pub gke_account: String,
    /// The metered GKE pool.
    pub gke_pool: String,
    /// The metered DigitalOcean pool.
    pub do_pool: String,
}

/// Makes the accounts and pools on `cloud`.
pub async fn seed_platform(api: &Api, admin: &str, cloud: &FakeCloud) -> Result<Platform, String> {
    let gke = api
        .ok(
            admin,
            "/api/platform/accounts/create",
            json!({"provider": "gke", "name": "bench-gke", "endpoint": cloud.base_url(),
                "credentials": cloud.service_account_key("bc-bench", "bc-bench"), "zones": GKE_ZONES}),
        )
        .await?;
    let digitalocean = api
        .ok(
            admin,
            "/api/platform/accounts/create",
            json!({"provider": "digitalocean", "name": "bench-do", "endpoint": cloud.base_url(),
                "credentials": FakeCloudConfig::default().digitalocean_token, "regions": DO_REGIONS}),
        )
        .await?;
    let mut pools = Vec::new();
    for (account, meter) in [(&gke, "kubernetes.cluster.hours"), (&digitalocean, "vps.load-balancer.hours")] {
        let pool = api
            .ok(
                admin,
                "/api/platform/pools/create",
                json!({"accountId": account["id"], "name": "bench", "billingMode": "metered", "prices": {meter: 10}}),
            )
            .await?;
        pools.push(pool["id"].as_str().unwrap_or_default().to_owned());
    }
    Ok(Platform {
        gke_account: gke["id"].as_str().unwrap_or_default().to_owned(),
        gke_pool: pools[0].clone(),
        do_pool: pools[1].clone(),
    })
}

/// Makes tenant `id` with offers of both pools and a `loadBalancers` quota of `lb_quota` on the
/// DigitalOcean pool, and an admin user; returns the user's API key.
pub async fn seed_tenant(
    api: &Api,
    admin: &str,
    platform: &Platform,
    id: &str,
    lb_quota: i64,
) -> Result<String, String> {
    api.ok(admin, "/api/platform/tenants/create", json!({"id": id})).await?;
    for pool in [&platform.gke_pool, &platform.do_pool] {
        api.ok(admin, "/api/platform/offers/create", json!({"poolId": pool, "tenantId": id})).await?;
    }
    api.ok(
        admin,
        "/api/platform/quotas/create",
        json!({"poolId": platform.do_pool, "tenantId": id, "resourceKind": "loadBalancers", "limit": lb_quota}),
    )
    .await?;
    let user = api
        .ok(admin, "/api/platform/principals/create", json!({"tenantId": id, "kind": "user", "name": "bench"}))
        .await?;
    api.ok(
        admin,
        "/api/platform/roleBindings/create",
        json!({"tenantId": id, "principalId": user["id"], "role": "admin"}),
    )
    .await?;
    let key = api
        .ok(
            admin,
            "/api/platform/apiKeys/create",
            json!({"tenantId": id, "principalId": user["id"], "description": "bench"}),
        )
        .await?;
    key["token"].as_str().map(str::to_owned).ok_or_else(|| format!("apiKeys.create gave no token: {key}"))
}

/// A standard cluster in `europe-west1` with two node pools, as `kubernetesClusters.create`
/// takes it (`key` is both its name and its idempotency key).
pub fn cluster_request(tenant: &str, pool: &str, key: &str) -> Value {
    json!({
        "tenantId": tenant, "poolId": pool, "name": key, "mode": "standard", "location": "europe-west1",
        "idempotencyKey": key,
        "nodePools": [
            {"name": "general", "machineType": "e2-standard-4", "nodeCount": 2, "zones": ["europe-west1-b"]},
            {"name": "batch", "machineType": "e2-standard-8", "nodeCount": 1,
             "autoscaling": {"minNodes": 1, "maxNodes": 3}, "labels": {"team": "data"}},
        ],
    })
}

/// A regional load balancer in `nyc3` over the tenant's instances in the pool, one HTTP rule, as
/// `loadBalancers.create` takes it (the load balancers' API reference).
pub fn load_balancer_request(tenant: &str, pool: &str, key: &str) -> Value {
    json!({
        "tenantId": tenant, "poolId": pool, "name": key, "region": DO_REGIONS[0],
        "targets": {"pool": true},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "healthCheck": {"protocol": "http", "port": 8080, "path": "/healthz"},
        "idempotencyKey": key,
    })
}

/// Whether this build serves `service` (`bettercompute.compute.v1.LoadBalancers`): the LB
/// scenarios run only then.
pub fn serves(service: &str) -> bool {
    better_compute::proto::descriptor_pool().get_service_by_name(service).is_some()
}
