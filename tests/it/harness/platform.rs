//! The platform as the API suites make it through the operator's calls: a [`Client`] that keeps
//! every answer (to search them for secrets), the [`Platform`] of tenants, accounts and pools,
//! and the credentials the tests give accounts ([`DO_TOKEN`], [`gke_key`]).

use std::sync::Mutex;

use serde_json::{Value, json};
use sqlx::Connection;

use super::TestServer;

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

/// Where a machine is enrolled.
pub const ENROLL: &str = "/api/compute/metal/enroll";
/// The BMC password the tests enrol with; searched for everywhere it must not be.
pub const PASSWORD: &str = "bmc-Pa55w0rd-7f3e9c";

/// A server with the [`Platform`], tenant acme's own pool (on acme's own DigitalOcean account)
/// and acme's admin: what the suites of nodes and machines stand on.
/// [`System::own_pool`](super::System::own_pool) starts it; a suite adds its own helpers in an
/// `impl OwnPool`.
pub struct OwnPool {
    pub server: TestServer,
    /// acme's own pool.
    pub pool: String,
    /// The platform's DigitalOcean pool, offered to acme.
    pub offered: String,
    /// acme's admin: a bearer token.
    pub admin: String,
}

impl OwnPool {
    /// Makes the platform on `server`, and acme's pool `name` with `policy`.
    pub(super) async fn start(server: TestServer, name: &str, policy: Value) -> OwnPool {
        let client = Client::new(&server);
        let platform = Platform::create(&client).await;
        let account = client
            .ok(
                "/api/platform/accounts/create",
                json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                    "regions": ["nyc3"]}),
            )
            .await;
        let pool = client
            .ok(
                "/api/platform/pools/create",
                json!({"accountId": account["id"], "name": name, "billingMode": "none", "policy": policy}),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let admin = super::tenant_principal(&server.store, "acme", "admin").await;
        OwnPool { server, pool, offered: platform.do_pool, admin }
    }

    /// `POST path` as acme's admin: the status and the body.
    pub async fn as_admin(&self, path: &str, body: Value) -> (u16, Value) {
        self.server.post(path, Some(&self.admin), body).await
    }

    /// Runs `sql` on the test database (to put a row where a test starts from).
    pub async fn execute(&self, sql: &str) {
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(&self.server.db.url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut conn).await.unwrap();
    }
}
