//! One test environment for the resource suites: a fresh database, the real server, the fake
//! cloud, a seeded [`Catalog`], tenants `acme` and `globex` with their users, and the worker
//! on demand. [`System::start`](super::System::start) makes it; a suite adds its own helpers in
//! an `impl Env`.

use std::sync::Arc;
use std::time::Duration;

use better_compute::provider::accounts::{
    DigitalOceanAccounts, GkeAccounts, StoreDigitalOceanAccounts, StoreGkeAccounts,
};
use better_compute::reconcile::{DaemonEndpoint, ProviderResources, Reconciler, WorkerConfig};
use better_compute::secrets::SecretKey;
use better_compute::service::Service;
use better_compute::store::{EventFilter, Store};
use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};

use super::{Catalog, RunningWorker, TestDb, TestServer, fast_resources, poll, reconcilers, start_worker};

/// Everything a resource test talks to. The worker and the server stop before the database
/// goes (fields drop in order).
pub struct Env {
    /// The running worker, if any.
    pub worker: Option<RunningWorker>,
    /// acme's admin, editor and viewer, and globex's admin: bearer tokens.
    pub acme_admin: String,
    pub acme_editor: String,
    pub acme_viewer: String,
    pub globex_admin: String,
    /// The accounts' GKE and DigitalOcean adapters, as the reconcilers get them.
    pub gke: Arc<dyn GkeAccounts>,
    pub digitalocean: Arc<dyn DigitalOceanAccounts>,
    /// The key the accounts' credentials are sealed with.
    pub key: SecretKey,
    /// What [`Env::start_worker`] starts.
    pub worker_config: WorkerConfig,
    kinds: Option<Vec<&'static str>>,
    /// The API server.
    pub server: TestServer,
    /// The fake cloud the accounts point at.
    pub cloud: FakeCloud,
    /// The server's store.
    pub store: Store,
    /// The database.
    pub db: TestDb,
}

impl Env {
    /// Serves `services` on `store` (of `db`), starts the fake cloud, makes tenants `acme` and
    /// `globex` with their users and seeds `catalog`; no worker yet.
    pub(super) async fn start(
        db: TestDb,
        store: Store,
        services: Service,
        cloud: FakeCloudConfig,
        catalog: Catalog,
        worker_config: WorkerConfig,
        kinds: Option<Vec<&'static str>>,
    ) -> Env {
        let cloud = FakeCloud::start(cloud).await.unwrap();
        let key = SecretKey::from_base64(&SecretKey::generate_base64()).unwrap();
        let server = TestServer::bootstrap(db.clone(), store.clone(), services.with_secret_key(key.clone())).await;
        for tenant in ["acme", "globex"] {
            server.admin_ok("/api/platform/tenants/create", json!({"id": tenant})).await;
        }
        catalog.seed(&store, &key, &cloud).await;
        Env {
            worker: None,
            acme_admin: super::tenant_principal(&store, "acme", "admin").await,
            acme_editor: super::tenant_principal(&store, "acme", "editor").await,
            acme_viewer: super::tenant_principal(&store, "acme", "viewer").await,
            globex_admin: super::tenant_principal(&store, "globex", "admin").await,
            gke: StoreGkeAccounts::new(store.clone(), key.clone()),
            digitalocean: StoreDigitalOceanAccounts::new(store.clone(), key.clone()),
            key,
            worker_config,
            kinds,
            server,
            cloud,
            store,
            db,
        }
    }

    /// The reconcilers' accounts and key with fast backoffs.
    /// Daemons (the fake cloud's DaemonSet pods) join through the setup's server.
    pub fn resources(&self) -> ProviderResources {
        let daemon_endpoint = DaemonEndpoint { url: self.server.endpoint.clone(), ca_sha256: None };
        ProviderResources {
            daemon_endpoint: Some(daemon_endpoint),
            ..fast_resources(self.gke.clone(), self.digitalocean.clone(), self.key.clone())
        }
    }

    /// Starts the worker of the setup (one at a time).
    pub fn start_worker(&mut self) {
        self.start_worker_with(self.worker_config.clone(), self.resources());
    }

    /// Starts a worker with `config` and the registry's reconcilers of the setup's kinds made
    /// from `resources`.
    pub fn start_worker_with(&mut self, config: WorkerConfig, resources: ProviderResources) {
        let reconcilers = reconcilers(resources, self.kinds.as_deref());
        self.start_worker_of(config, reconcilers);
    }

    /// Starts a worker with `config` running `reconcilers`, whatever the setup's kinds.
    pub fn start_worker_of(&mut self, config: WorkerConfig, reconcilers: Vec<Arc<dyn Reconciler>>) {
        self.worker = Some(start_worker(&self.store, config, reconcilers));
    }

    /// Stops the worker: what the tenant writes from now on stays as the service wrote it.
    pub async fn stop_worker(&mut self) {
        if let Some(worker) = self.worker.take() {
            let _ = worker.stop().await;
        }
    }

    /// `POST <path>` as `token`: the status and the JSON body.
    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        self.server.post(path, Some(token), body).await
    }

    /// `POST` as `token`; panics unless 200.
    pub async fn ok_as(&self, token: &str, path: &str, body: Value) -> Value {
        let (status, json) = self.post_as(token, path, body).await;
        assert_eq!(status, 200, "{path}: {json}");
        json
    }

    /// `POST` as acme's admin; panics unless 200.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        self.ok_as(&self.acme_admin, path, body).await
    }

    /// `POST` as `token`; panics on 200; returns the status, the code and the details.
    pub async fn refused_as(&self, token: &str, path: &str, body: Value) -> (u16, String, Value) {
        let (status, json) = self.post_as(token, path, body.clone()).await;
        assert_ne!(status, 200, "{path} should have been refused: {body} -> {json}");
        (status, json["error"]["code"].as_str().unwrap_or_default().to_owned(), json["error"]["details"].clone())
    }

    /// As acme's admin.
    pub async fn refused(&self, path: &str, body: Value) -> (u16, String, Value) {
        self.refused_as(&self.acme_admin, path, body).await
    }

    /// `POST` as `token`, expecting a refusal with `status` and `code`; returns the error body.
    pub async fn expect_failure(&self, token: &str, path: &str, body: Value, status: u16, code: &str) -> Value {
        let (got, json) = self.post_as(token, path, body).await;
        assert_eq!((got, json["error"]["code"].as_str()), (status, Some(code)), "{path}: {json}");
        json["error"].clone()
    }

    /// The admin of `tenant` (`acme` or `globex`).
    pub fn admin_of(&self, tenant: &str) -> &str {
        if tenant == "acme" { &self.acme_admin } else { &self.globex_admin }
    }

    /// Polls `<resource>/get` with `body` as `token` until `check` holds for the resource, for
    /// up to `limit`.
    pub async fn get_until(
        &self,
        token: &str,
        resource: &str,
        body: Value,
        limit: Duration,
        what: &str,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        let path = format!("/api/compute/{resource}/get");
        poll(limit, &format!("{resource} {body} {what}"), || async {
            let got = self.ok_as(token, &path, body.clone()).await;
            if check(&got) { Ok(got) } else { Err(got.to_string()) }
        })
        .await
    }

    /// Polls `<resource>/get` as acme's admin until the resource (`id_field`: `id`) is in
    /// `state`; 20 s at most.
    pub async fn wait_state(&self, resource: &str, id_field: &str, id: &str, state: &str) -> Value {
        let body = json!({"tenantId": "acme", id_field: id});
        let what = format!("in state {state}");
        let limit = Duration::from_secs(20);
        self.get_until(&self.acme_admin, resource, body, limit, &what, |got| got["state"] == state).await
    }

    /// Runs `statement` on the server's database, as a test that moves time does.
    pub async fn execute(&self, statement: String) {
        sqlx::any::install_default_drivers();
        let mut db = <sqlx::AnyConnection as sqlx::Connection>::connect(&self.server.db.url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(&mut db).await.unwrap();
    }

    /// Makes node `node` of `pool` silent for 45 s in the store's eyes: its last heartbeat moves
    /// 45 s back, past an `unhealthyAfter` of 30 s, until the liveness sweep has marked it
    /// `notReady` once more (a new `compute.node.notReady` event). The node's daemon must have
    /// stopped; a heartbeat still on its way when it stopped puts the node back, so each look
    /// moves it again, and only until that mark: what follows it (a remediation that brings the
    /// node back) is left alone.
    pub async fn silence_node(&self, pool: &str, node: &str) {
        let marks = || async {
            let filter = EventFilter {
                subject: pool.to_owned(),
                type_prefix: "compute.node.notReady".into(),
                limit: 10_000,
                ..Default::default()
            };
            let events = self.store.event_list_after(&filter).await.unwrap();
            events.iter().filter(|e| e.data["nodeId"] == node).count()
        };
        let before = marks().await;
        poll(Duration::from_secs(60), &format!("node {node} marked notReady"), || async {
            if marks().await > before {
                return Ok(());
            }
            self.execute(format!(
                "UPDATE nodes SET last_heartbeat_at = last_heartbeat_at - 45000000 WHERE id = '{node}'"
            ))
            .await;
            Err("not marked yet".to_owned())
        })
        .await;
    }
}
