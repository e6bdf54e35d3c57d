//! The platform catalog: CRUD of projects, accounts, pools, offers, quotas and budgets through
//! JSON; the tenant's pools and every error of the placement checks through
//! `POST /api/compute/pools/checkPlacement`; quota booking under concurrency; credentials that
//! never reach a response, an event or a log line; and `bc dev`'s demo catalog.

mod checks;
mod credentials;
mod crud;
mod dev_seed;
mod masks;
mod quotas;

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::harness::TestServer;

/// The DigitalOcean token of the tests: a string that must never come back.
pub const DO_TOKEN: &str = "dop_v1_SECRET4d1f0c9e7b2a";
/// The marker inside the GKE key's private key: it must never come back either.
pub const GKE_SECRET: &str = "SECRETPEM93be1c0d";

/// A GKE service-account key whose private key carries [`GKE_SECRET`].
pub fn gke_key() -> String {
    json!({
        "type": "service_account",
        "project_id": "bc-test",
        "client_email": "bc@bc-test.iam.gserviceaccount.com",
        "private_key": format!("-----BEGIN PRIVATE KEY-----\n{GKE_SECRET}\n-----END PRIVATE KEY-----\n"),
        "token_uri": "http://127.0.0.1:1/token",
    })
    .to_string()
}

/// Calls as the operator and keeps every answer, so a test can check them all for secrets.
pub struct Client<'a> {
    /// The server called.
    pub server: &'a TestServer,
    /// Every response body so far.
    bodies: Mutex<Vec<String>>,
}

impl<'a> Client<'a> {
    /// A client of `server`.
    pub fn new(server: &'a TestServer) -> Self {
        Self { server, bodies: Mutex::new(Vec::new()) }
    }

    /// `POST path` as the operator: the status and the body.
    pub async fn call(&self, path: &str, body: Value) -> (u16, Value) {
        let token = self.server.admin_token.clone();
        let (status, answer) = self.server.post(path, Some(&token), body).await;
        self.bodies.lock().unwrap().push(answer.to_string());
        (status, answer)
    }

    /// `POST path`, which must answer 200.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        let (status, answer) = self.call(path, body.clone()).await;
        assert_eq!(status, 200, "{path} {body}: {answer}");
        answer
    }

    /// `POST path`, which must fail with `code` and `status`: the error object.
    pub async fn fails(&self, path: &str, body: Value, status: u16, code: &str) -> Value {
        let (got, answer) = self.call(path, body.clone()).await;
        assert_eq!((got, answer["error"]["code"].as_str()), (status, Some(code)), "{path} {body}: {answer}");
        answer["error"].clone()
    }

    /// Every body answered so far, joined.
    pub fn transcript(&self) -> String {
        self.bodies.lock().unwrap().join("\n")
    }
}

/// A platform with tenants `acme`, `globex` and `initech`; a GKE and a DigitalOcean account of
/// the platform with a metered pool each, both offered to `acme` only.
pub struct Platform {
    /// The GKE account.
    pub gke_account: String,
    /// The DigitalOcean account.
    pub do_account: String,
    /// The GKE pool.
    pub gke_pool: String,
    /// The DigitalOcean pool.
    pub do_pool: String,
}

impl Platform {
    /// Makes it through the API.
    pub async fn create(client: &Client<'_>) -> Platform {
        for tenant in ["acme", "globex", "initech"] {
            client.ok("/api/platform/tenants/create", json!({"id": tenant})).await;
        }
        let gke_account = client
            .ok(
                "/api/platform/accounts/create",
                json!({"provider": "gke", "name": "platform-gke", "credentials": gke_key(),
                    "endpoint": "http://127.0.0.1:1",
                    "zones": ["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"]}),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let do_account = client
            .ok(
                "/api/platform/accounts/create",
                json!({"provider": "digitalocean", "name": "platform-do", "credentials": DO_TOKEN,
                    "regions": ["nyc3", "ams3", "sfo3"]}),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut pools = Vec::new();
        for (account, meter) in [(&gke_account, "kubernetes.cluster.hours"), (&do_account, "vps.load-balancer.hours")] {
            let pool = client
                .ok(
                    "/api/platform/pools/create",
                    json!({"accountId": account, "name": "metered", "billingMode": "metered", "prices": {meter: 10}}),
                )
                .await;
            client.ok("/api/platform/offers/create", json!({"poolId": pool["id"], "tenantId": "acme"})).await;
            pools.push(pool["id"].as_str().unwrap().to_owned());
        }
        let do_pool = pools.pop().unwrap();
        let gke_pool = pools.pop().unwrap();
        Platform { gke_account, do_account, gke_pool, do_pool }
    }
}
