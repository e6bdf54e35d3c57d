//! Bare metal through `POST /api/compute/metal/...`: every (state, verb) pair against the
//! provision state table of issue 19 (written out here by hand, so the code's table is checked
//! against the issue and not against itself), enrolment's checks, idempotency and quota, update
//! and delete only where allowed, two racing verbs, who may call, and the BMC password found
//! nowhere but sealed in its column.

mod dev;
mod flow;
mod secrets;
mod states;

use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::catalog::{Client, DO_TOKEN, Platform};
use crate::harness::{TestDb, TestServer, tenant_principal};

pub const ENROLL: &str = "/api/compute/metal/enroll";
/// The password every test enrols with; searched for everywhere it must not be.
pub const PASSWORD: &str = "bmc-Pa55w0rd-7f3e9c";

/// A server with acme's own pool (on acme's account), acme's admin, and the platform's pool
/// offered to acme.
pub struct Setup {
    pub db: TestDb,
    pub server: TestServer,
    pub pool: String,
    pub offered: String,
    pub admin: String,
}

pub async fn setup(backend: Backend) -> Setup {
    setup_with_policy(backend, json!({})).await
}

pub async fn setup_with_policy(backend: Backend, policy: Value) -> Setup {
    let db = TestDb::new(backend).await;
    let server = TestServer::start(&db).await;
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
            json!({"accountId": account["id"], "name": "metal", "billingMode": "none", "policy": policy}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    Setup { db, server, pool, offered: platform.do_pool, admin }
}

/// An enrolment's body for a Redfish BMC.
pub fn enrolment(pool: &str, name: &str, key: &str) -> Value {
    json!({"poolId": pool, "name": name, "idempotencyKey": key, "labels": {"rack": "r1"},
        "bmc": {"driver": "redfish", "address": "https://10.0.0.5", "username": "admin", "password": PASSWORD,
            "insecure": true}})
}

impl Setup {
    pub async fn as_admin(&self, path: &str, body: Value) -> (u16, Value) {
        self.server.post(path, Some(&self.admin), body).await
    }

    /// Enrols machine `name` and returns its view.
    pub async fn enroll(&self, name: &str) -> Value {
        let (status, machine) = self.as_admin(ENROLL, enrolment(&self.pool, name, name)).await;
        assert_eq!(status, 200, "{machine}");
        machine
    }

    /// Calls `/api/compute/metal/<method>` on machine `node` of the pool with `extra` fields.
    pub async fn call(&self, method: &str, node: &str, extra: Value) -> (u16, Value) {
        let mut body = json!({"poolId": self.pool, "nodeId": node});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        self.as_admin(&format!("/api/compute/metal/{method}"), body).await
    }

    /// Puts machine `node` in `state` through the store, as a reconciler would have.
    pub async fn put_in_state(&self, node: &str, state: &str) {
        self.execute(&format!("UPDATE metal_machines SET provision_state = '{state}' WHERE node_id = '{node}'")).await;
    }

    /// Runs `sql` on the test database.
    pub async fn execute(&self, sql: &str) {
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(&self.db.url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut conn).await.unwrap();
    }

    /// The pool's metal events, oldest first.
    pub async fn events(&self) -> Vec<better_compute::store::EventRow> {
        let filter =
            better_compute::store::EventFilter { subject: self.pool.clone(), limit: 1000, ..Default::default() };
        let events = self.server.store.event_list_after(&filter).await.unwrap();
        events.into_iter().filter(|event| event.event_type.starts_with("metal.")).collect()
    }
}
