//! Plans and `validateOnly` through the API, for every asynchronous kind: a rehearsed update or
//! delete answers what the real call then answers and leaves the database exactly as it was
//! (every row of every table: the resource, its events, the audit trail, the work items); it is
//! refused exactly as the real call is; a plan says what the change would do over JSON and gRPC,
//! decided like a read of the resource, and writes nothing either.

mod access;
mod previews;
mod refusals;
mod writes_nothing;

use std::collections::BTreeMap;
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::{Connection, Row};

pub use crate::harness::Env;
use crate::harness::{Catalog, System, TestDb, TestServer, eventually};

/// A platform GKE pool offered to acme and globex.
pub const GKE_POOL: &str = "pool_0000000000000000000000gke1";
/// A platform DigitalOcean pool offered to acme and globex, with a load-balancer quota.
pub const DO_POOL: &str = "pool_0000000000000000000000dg01";
/// The DigitalOcean region of the suite.
pub const REGION: &str = "nyc3";

/// The catalog: a platform GKE account and a platform DigitalOcean account on the fake cloud,
/// each with a pool offered to acme and globex; acme and globex may have 5 load balancers.
fn catalog() -> Catalog {
    let gke_account = "acct_0000000000000000000000gke1";
    let do_account = "acct_0000000000000000000000dg01";
    Catalog::new()
        .gke_account(gke_account, None, &["europe-west1-b", "europe-west1-c", "us-central1-a"])
        .digitalocean_account(do_account, None, &[REGION, "sfo3"])
        .pool(GKE_POOL, gke_account, "none", &[])
        .pool(DO_POOL, do_account, "none", &[])
        .offer(GKE_POOL, "acme")
        .offer(GKE_POOL, "globex")
        .offer(DO_POOL, "acme")
        .offer(DO_POOL, "globex")
        .quota(DO_POOL, "acme", "loadBalancers", 5)
        .quota(DO_POOL, "globex", "loadBalancers", 5)
}

/// The suite's setup: its catalog, and a worker of every reconciler (started by the test).
pub fn setup(backend: Backend) -> System {
    System::on(backend).catalog(catalog())
}

/// Every row of every table of `db`, each as the text of its columns, by table: what a
/// rehearsal must leave exactly as it found it.
pub async fn database_rows(db: &TestDb) -> BTreeMap<String, Vec<String>> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let (tables_sql, columns_sql) = match db.backend {
        Backend::Postgres => (
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'",
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        ),
        Backend::Sqlite => (
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            "SELECT name FROM pragma_table_info($1) ORDER BY cid",
        ),
    };
    let tables: Vec<String> =
        sqlx::query(tables_sql).fetch_all(&mut conn).await.unwrap().iter().map(|row| row.get(0)).collect();
    let mut rows = BTreeMap::new();
    for table in tables {
        let columns: Vec<String> = sqlx::query(columns_sql)
            .bind(&table)
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        // SQLite's `quote` shows any value as a literal (a blob as `X'..'`), NULL as `NULL`.
        let text: Vec<String> = columns
            .iter()
            .map(|c| match db.backend {
                Backend::Postgres => format!("'{c}=' || COALESCE(CAST(\"{c}\" AS TEXT), 'NULL')"),
                Backend::Sqlite => format!("'{c}=' || quote(\"{c}\")"),
            })
            .collect();
        let sql = format!("SELECT {} FROM \"{table}\"", text.join(" || ' | ' || "));
        let mut found: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        found.sort();
        rows.insert(table, found);
    }
    rows
}

/// Panics naming each table whose rows differ between `before` and `after`, with the rows
/// that went and came.
pub fn assert_unchanged(before: &BTreeMap<String, Vec<String>>, after: &BTreeMap<String, Vec<String>>, what: &str) {
    let mut differences = Vec::new();
    for (table, rows) in after {
        let old = before.get(table).cloned().unwrap_or_default();
        if &old != rows {
            let gone: Vec<&String> = old.iter().filter(|r| !rows.contains(r)).collect();
            let came: Vec<&String> = rows.iter().filter(|r| !old.contains(r)).collect();
            differences.push(format!("{table}:\n  gone {gone:#?}\n  came {came:#?}"));
        }
    }
    assert!(differences.is_empty(), "{what} wrote to the database:\n{}", differences.join("\n"));
}

/// `value` without the times an answer takes from the clock at the call (`updatedAt`,
/// `deleteRequestedAt`, `deletedAt`), and without `requestId`: what a rehearsal and the real
/// call made a moment later must answer alike.
pub fn timeless(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| {
                    !matches!(key.as_str(), "updatedAt" | "deleteRequestedAt" | "deletedAt" | "requestId")
                })
                .map(|(key, value)| (key.clone(), timeless(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
        other => other.clone(),
    }
}

/// `body` with `validateOnly` set.
pub fn rehearsed(body: &Value) -> Value {
    let mut body = body.clone();
    body["validateOnly"] = json!(true);
    body
}

/// What a call of a test leaves behind, for comparing a rehearsal with nothing happening.
pub struct Footprint {
    /// Every row of every table.
    pub rows: BTreeMap<String, Vec<String>>,
    /// acme's events, as the events API lists them.
    pub events: Value,
    /// The audit trail, as the operator lists it.
    pub audit: Value,
}

/// acme's admin (or another principal) calling a server.
pub struct Caller<'a> {
    /// The server called.
    pub server: &'a TestServer,
    /// The caller's bearer token.
    pub token: String,
}

impl Caller<'_> {
    /// `POST path` with `body`: the status and the answer.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.server.post(path, Some(&self.token), body).await
    }

    /// What the database, acme's events and the audit trail hold now, once the audit trail has
    /// the outcome of every call made so far.
    pub async fn footprint(&self) -> Footprint {
        let events = self.server.admin_ok(EVENTS, json!({"tenantId": "acme", "limit": 1000})).await;
        let audit = self.settled_audit().await;
        Footprint { rows: database_rows(&self.server.db).await, events, audit }
    }

    /// The audit trail once every call in it has its outcome: a call's outcome is written just
    /// after its answer is sent, so the answer of the call before may come first.
    async fn settled_audit(&self) -> Value {
        eventually(Duration::from_secs(10), "every audited call has its outcome", || async {
            let audit = self.server.admin_ok("/api/platform/audit/list", json!({"limit": 500})).await;
            let unsettled = audit["auditEvents"].as_array().unwrap().iter().any(|row| row["outcome"] == "");
            (!unsettled).then_some(audit)
        })
        .await
    }

    /// Panics unless nothing changed since `before`: no row, no event, no audit row.
    pub async fn assert_untouched(&self, before: &Footprint, what: &str) {
        let after = self.footprint().await;
        assert_eq!(after.events, before.events, "{what}: acme's events changed");
        assert_eq!(after.audit, before.audit, "{what}: the audit trail changed");
        assert_unchanged(&before.rows, &after.rows, what);
    }

    /// Calls `path` with `body` rehearsed (`validateOnly`), checks that it changed nothing,
    /// then makes the real call and checks that both answered alike; returns the real answer.
    /// Nothing else may write meanwhile (the worker is stopped).
    pub async fn rehearse_then_call(&self, path: &str, body: Value) -> Value {
        let before = self.footprint().await;
        let rehearsal = self.post(path, rehearsed(&body)).await;
        self.assert_untouched(&before, &format!("{path} with validateOnly")).await;
        let real = self.post(path, body.clone()).await;
        assert_eq!(real.0, 200, "{path} {body}: {}", real.1);
        assert_eq!(rehearsal.0, real.0, "{path} {body}: rehearsed {} / real {}", rehearsal.1, real.1);
        assert_eq!(timeless(&rehearsal.1), timeless(&real.1), "{path} {body}: the rehearsal answered otherwise");
        let after = self.footprint().await;
        assert_ne!(after.rows, before.rows, "{path} {body}: the real call wrote nothing, so the test shows nothing");
        real.1
    }

    /// Calls `path` with `body` rehearsed, checks that it changed nothing and was refused, then
    /// makes the real call and checks that it is refused alike (status, code, message and
    /// details); returns the real error.
    pub async fn refused_alike(&self, path: &str, body: Value) -> Value {
        let before = self.footprint().await;
        let rehearsal = self.post(path, rehearsed(&body)).await;
        self.assert_untouched(&before, &format!("{path} refused with validateOnly")).await;
        let real = self.post(path, body.clone()).await;
        assert_ne!(real.0, 200, "{path} {body} should be refused: {}", real.1);
        assert_eq!(rehearsal.0, real.0, "{path} {body}: rehearsed {} / real {}", rehearsal.1, real.1);
        assert_eq!(
            timeless(&rehearsal.1["error"]),
            timeless(&real.1["error"]),
            "{path} {body}: the rehearsal was refused otherwise"
        );
        real.1["error"].clone()
    }

    /// The plan of `change` on `kind` (`volumes`); it must answer, and write nothing.
    pub async fn plan(&self, kind: &str, change: Value) -> Value {
        let before = self.footprint().await;
        let (status, plan) = self.post(&plan_path(kind), change.clone()).await;
        assert_eq!(status, 200, "{kind} plan of {change}: {plan}");
        self.assert_untouched(&before, &format!("the {kind} plan of {change}")).await;
        plan
    }
}

/// Where the events are listed.
const EVENTS: &str = "/api/compute/events/list";

/// The plan method of `kind` (`volumes`, `kubernetesClusters`).
pub fn plan_path(kind: &str) -> String {
    format!("/api/compute/{kind}/plan")
}

impl Env {
    /// acme's admin calling.
    pub fn acme(&self) -> Caller<'_> {
        Caller { server: &self.server, token: self.acme_admin.clone() }
    }

    /// Makes acme's resource of `kind` (`volumes`) with `body` and waits until it is ready;
    /// returns its view.
    pub async fn ready(&self, kind: &str, id_field: &str, body: Value) -> Value {
        let created = self.ok(&format!("/api/compute/{kind}/create"), body).await;
        self.wait_state(kind, id_field, created["id"].as_str().unwrap(), "ready").await
    }

    /// acme's resource of `kind` named by `reference`, as `get` answers it.
    pub async fn get(&self, kind: &str, reference: &Value) -> Value {
        self.ok(&format!("/api/compute/{kind}/get"), reference.clone()).await
    }
}

/// A standard cluster request of acme with pools `general` (2 nodes) and `batch` (spot).
pub fn cluster(name: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": GKE_POOL, "name": name, "mode": "standard", "location": "europe-west1",
        "idempotencyKey": name,
        "nodePools": [
            {"name": "general", "machineType": "e2-standard-4", "nodeCount": 2, "zones": ["europe-west1-b"]},
            {"name": "batch", "machineType": "e2-standard-8", "nodeCount": 1, "spot": true},
        ],
    })
}

/// A volume request of acme.
pub fn volume(name: &str, size: i64) -> Value {
    json!({"tenantId": "acme", "poolId": DO_POOL, "name": name, "region": REGION, "sizeGigabytes": size,
           "filesystemType": "ext4", "idempotencyKey": name})
}

/// An instance request of acme.
pub fn instance(name: &str) -> Value {
    json!({"tenantId": "acme", "poolId": DO_POOL, "name": name, "region": REGION, "size": "s-1vcpu-1gb",
           "image": "ubuntu-24-04-x64", "idempotencyKey": name})
}

/// A network request of acme with one subnet.
pub fn network(name: &str, range: &str) -> Value {
    json!({"tenantId": "acme", "poolId": DO_POOL, "name": name, "idempotencyKey": name,
           "subnets": [{"name": "main", "region": REGION, "ipRange": range}]})
}

/// A regional load balancer request of acme over the pool's instances, HTTP 80 to 8080.
pub fn load_balancer(name: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": DO_POOL, "name": name, "region": REGION, "targets": {"pool": true},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "idempotencyKey": name,
    })
}

/// A custom certificate request of acme for `names`, self-signed, valid until 2090.
pub fn certificate(name: &str, names: &[&str]) -> Value {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2090, 1, 1);
    let leaf = params.self_signed(&key).unwrap();
    json!({"tenantId": "acme", "poolId": DO_POOL, "name": name, "type": "custom", "privateKey": key.serialize_pem(),
           "leafCertificate": leaf.pem(), "idempotencyKey": name})
}
