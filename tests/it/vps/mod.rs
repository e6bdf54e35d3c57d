//! The `vps` module's tenant resources end to end: networks, instances and certificates through
//! JSON and gRPC, the real server and worker (the `vps.provider-resources` reconcilers, and the
//! clusters' for `networkId`) on a real database, the real adapters against the fake cloud.

mod certificates;
mod clusters;
mod decisions;
mod grpc;
mod instances;
mod networks;
mod secrets;

use std::sync::Arc;
use std::time::{Duration, Instant};

use better_compute::fakecloud::{FakeCloud, FakeCloudConfig};
use better_compute::provider::accounts::{
    DigitalOceanAccounts, GkeAccounts, StoreDigitalOceanAccounts, StoreGkeAccounts,
};
use better_compute::reconcile::{Backoff, KubernetesClusters, ProviderResources, Worker, WorkerConfig};
use better_compute::secrets::SecretKey;
use better_compute::service::Service;
use better_compute::store::{Backend, NewAccount, NewOffer, NewPool, Store, now_micros};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::harness::{TestDb, tenant_principal};

/// A platform GKE account's pool, offered to acme and globex.
pub const GKE_POOL: &str = "pool_0000000000000000000000gke1";
/// A platform DigitalOcean account's pool, offered to acme (without `sfo3`) and to globex.
pub const DO_POOL: &str = "pool_0000000000000000000000dg01";
/// A second pool on the same DigitalOcean account, whose offer to acme is suspended.
pub const SUSPENDED_POOL: &str = "pool_0000000000000000000000dg02";
/// Acme's own DigitalOcean account's pool: another account than `DO_POOL`'s.
pub const OWN_DO_POOL: &str = "pool_0000000000000000000000dg03";
/// The platform DigitalOcean account.
pub const DO_ACCOUNT: &str = "acct_0000000000000000000000dg01";
/// The GKE account's project and zones.
pub const PROJECT: &str = "bc-platform";
pub const ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "us-central1-a"];

/// Everything a test of the module talks to.
pub struct Env {
    pub db: TestDb,
    pub store: Store,
    pub cloud: FakeCloud,
    pub endpoint: String,
    pub acme_admin: String,
    pub acme_viewer: String,
    pub globex_admin: String,
    pub key: SecretKey,
    gke: Arc<dyn GkeAccounts>,
    digitalocean: Arc<dyn DigitalOceanAccounts>,
    server_stop: Option<tokio::sync::oneshot::Sender<()>>,
    worker: Option<(tokio::sync::watch::Sender<bool>, JoinHandle<()>)>,
    http: reqwest::Client,
}

/// The `vps` reconcilers and the clusters' with fast backoffs.
fn reconcilers(env: &Env) -> Vec<Arc<dyn better_compute::reconcile::Reconciler>> {
    let fast = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(800), jitter: 0.2 };
    let vps = ProviderResources {
        backoff: fast,
        delete_backoff: fast,
        ..ProviderResources::new(env.gke.clone(), env.digitalocean.clone(), env.key.clone())
    };
    let mut all = vps.reconcilers();
    let clusters =
        KubernetesClusters { backoff: fast, delete_backoff: fast, ..KubernetesClusters::new(env.gke.clone()) };
    all.push(Arc::new(clusters));
    all
}

impl Env {
    /// The server, the catalog and the worker on a fresh database of `backend`.
    pub async fn start(backend: Backend) -> Env {
        let mut env = Self::start_without_worker(backend).await;
        env.start_worker();
        env
    }

    /// The server and the catalog; no worker yet.
    pub async fn start_without_worker(backend: Backend) -> Env {
        Self::start_with_policies(backend, &[]).await
    }

    /// The server with the operator's `policies` (file name, Cedar text) and the catalog; no
    /// worker yet.
    pub async fn start_with_policies(backend: Backend, policies: &[(String, String)]) -> Env {
        let db = TestDb::new(backend).await;
        let store = db.store().await;
        let cloud = FakeCloud::start(FakeCloudConfig {
            operation_duration: Duration::from_millis(200),
            activation_delay: Duration::from_millis(200),
            ..Default::default()
        })
        .await
        .unwrap();
        let key = SecretKey::from_base64(&SecretKey::generate_base64()).unwrap();
        let services = Service::with_policies(store.clone(), policies).unwrap().with_secret_key(key.clone());
        let admin_token = match services.bootstrap_operator(None).await.unwrap() {
            better_compute::service::BootstrapOutcome::Created(token) => token.reveal(),
            _ => panic!("a fresh database has no keys"),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            better_compute::server::serve(listener, services, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        let mut env = Env {
            db,
            store: store.clone(),
            cloud,
            endpoint,
            acme_admin: String::new(),
            acme_viewer: String::new(),
            globex_admin: String::new(),
            key: key.clone(),
            gke: StoreGkeAccounts::new(store.clone(), key.clone()),
            digitalocean: StoreDigitalOceanAccounts::new(store.clone(), key.clone()),
            server_stop: Some(stop),
            worker: None,
            http: reqwest::Client::new(),
        };
        for tenant in ["acme", "globex"] {
            let (status, body) = env.post_as(&admin_token, "/api/platform/tenants/create", json!({"id": tenant})).await;
            assert_eq!(status, 200, "{body}");
        }
        seed_catalog(&store, &key, &env.cloud).await;
        env.acme_admin = tenant_principal(&store, "acme", "admin").await;
        env.acme_viewer = tenant_principal(&store, "acme", "viewer").await;
        env.globex_admin = tenant_principal(&store, "globex", "admin").await;
        env
    }

    /// Starts the worker.
    pub fn start_worker(&mut self) {
        let config = WorkerConfig {
            tick: Duration::from_millis(50),
            lease: Duration::from_secs(2),
            converging: Some(Duration::from_millis(100)),
            settled: Some(Duration::from_secs(1)),
            shutdown_grace: Duration::from_millis(100),
            ..WorkerConfig::default()
        };
        let mut worker = Worker::new(self.store.clone(), config);
        for reconciler in reconcilers(self) {
            worker = worker.with_reconciler(reconciler);
        }
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            worker
                .run(async move {
                    let _ = stopped.wait_for(|s| *s).await;
                })
                .await
                .unwrap();
        });
        self.worker = Some((stop, task));
    }

    /// Stops the worker: what the tenant writes from now on stays as the service wrote it.
    pub async fn stop_worker(&mut self) {
        if let Some((stop, task)) = self.worker.take() {
            let _ = stop.send(true);
            let _ = task.await;
        }
    }

    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.endpoint))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// `POST` as acme's admin; panics unless 200.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        let (status, json) = self.post_as(&self.acme_admin, path, body).await;
        assert_eq!(status, 200, "{path}: {json}");
        json
    }

    /// `POST` as `token`, expecting a refusal with `status` and `code`; returns the error body.
    pub async fn refused(&self, token: &str, path: &str, body: Value, status: u16, code: &str) -> Value {
        let (got, json) = self.post_as(token, path, body).await;
        assert_eq!((got, json["error"]["code"].as_str()), (status, Some(code)), "{path}: {json}");
        json["error"].clone()
    }

    /// Polls `<resource>/get` as acme's admin until the resource is in `state`.
    pub async fn wait_state(&self, resource: &str, id_field: &str, id: &str, state: &str) -> Value {
        let started = Instant::now();
        loop {
            let got = self.ok(&format!("/api/compute/{resource}/get"), json!({"tenantId": "acme", id_field: id})).await;
            if got["state"] == state {
                return got;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{resource} {id} not {state} after 20 s: {got}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The types of acme's events about `subject`, oldest first.
    pub async fn event_types(&self, subject: &str) -> Vec<String> {
        let events = self.ok("/api/compute/events/list", json!({"tenantId": "acme", "subject": subject})).await;
        events["events"]
            .as_array()
            .map(|events| events.iter().map(|e| e["type"].as_str().unwrap_or_default().to_owned()).collect())
            .unwrap_or_default()
    }

    /// What exists in the fake cloud.
    pub fn inspect(&self) -> Value {
        self.cloud.inspect()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(stop) = self.server_stop.take() {
            let _ = stop.send(());
        }
        if let Some((stop, task)) = self.worker.take() {
            let _ = stop.send(true);
            task.abort();
        }
    }
}

/// The catalog: a platform GKE account and a platform DigitalOcean account, each with a pool
/// offered to acme and globex; a second DigitalOcean pool whose offer to acme is suspended; and
/// acme's own DigitalOcean account with a pool.
async fn seed_catalog(store: &Store, key: &SecretKey, cloud: &FakeCloud) {
    let now = now_micros();
    let regions = ["nyc3", "ams3", "sfo3"].map(String::from).to_vec();
    let accounts = [
        ("acct_0000000000000000000000gke1", None, "gke", ZONES.map(String::from).to_vec()),
        (DO_ACCOUNT, None, "digitalocean", regions.clone()),
        ("acct_0000000000000000000000dg03", Some("acme"), "digitalocean", regions),
    ];
    for (account, tenant, provider, locations) in accounts {
        let credentials = match provider {
            "gke" => cloud.service_account_key(PROJECT, "better-compute"),
            _ => FakeCloudConfig::default().digitalocean_token,
        };
        store
            .account_create(&NewAccount {
                id: account.into(),
                tenant_id: tenant.map(str::to_owned),
                provider: provider.into(),
                name: format!("{provider}-{account}"),
                description: String::new(),
                endpoint: cloud.base_url().to_owned(),
                locations,
                sealed_credentials: key.seal(&credentials, account).unwrap(),
                now,
            })
            .await
            .unwrap();
    }
    let pools = [
        (GKE_POOL, "acct_0000000000000000000000gke1"),
        (DO_POOL, DO_ACCOUNT),
        (SUSPENDED_POOL, DO_ACCOUNT),
        (OWN_DO_POOL, "acct_0000000000000000000000dg03"),
    ];
    for (pool, account) in pools {
        store
            .pool_create(&NewPool {
                id: pool.into(),
                account_id: account.into(),
                name: format!("pool-{pool}"),
                description: String::new(),
                billing_mode: "none".into(),
                policy: json!({}),
                prices: Default::default(),
                now,
            })
            .await
            .unwrap();
    }
    let offers = [
        (GKE_POOL, "acme", "active", vec![]),
        (GKE_POOL, "globex", "active", vec![]),
        (DO_POOL, "acme", "active", vec!["sfo3".to_owned()]),
        (DO_POOL, "globex", "active", vec![]),
        (SUSPENDED_POOL, "acme", "suspended", vec![]),
    ];
    for (pool, tenant, state, excluded_regions) in offers {
        let offer =
            NewOffer { pool_id: pool.into(), tenant_id: tenant.into(), state: state.into(), excluded_regions, now };
        store.offer_create(&offer).await.unwrap();
    }
}

/// A DigitalOcean network request of acme with one subnet per `(name, region, range)`.
pub fn do_network(name: &str, subnets: &[(&str, &str, &str)]) -> Value {
    network(DO_POOL, name, subnets)
}

/// A network request of acme on `pool`.
pub fn network(pool: &str, name: &str, subnets: &[(&str, &str, &str)]) -> Value {
    let subnets: Vec<Value> =
        subnets.iter().map(|(name, region, range)| json!({"name": name, "region": region, "ipRange": range})).collect();
    json!({"tenantId": "acme", "poolId": pool, "name": name, "subnets": subnets, "idempotencyKey": name})
}

/// An instance request of acme on the DigitalOcean pool.
pub fn instance(name: &str, region: &str, subnet: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": DO_POOL, "name": name, "region": region, "size": "s-1vcpu-1gb",
        "image": "ubuntu-24-04-x64", "subnetId": subnet, "idempotencyKey": name,
    })
}

/// Makes a network and waits until it is ready.
pub async fn ready_network(env: &Env, body: Value) -> Value {
    let created = env.ok("/api/compute/networks/create", body).await;
    env.wait_state("networks", "networkId", created["id"].as_str().unwrap(), "ready").await
}
