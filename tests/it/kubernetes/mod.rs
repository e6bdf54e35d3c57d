//! Kubernetes clusters and node pools end to end: the real server and worker on a real
//! database, the real GKE adapter against the fake cloud, kubectl against the fake cluster.

mod access;
mod clusters;
mod credentials;
mod dev;
mod errors;
mod faults;
mod hosting;
mod idempotency;
mod intervals;
mod lifecycle;
mod masks;
mod node_pool_keys;
mod nodepools;
mod versions;
mod violations;

use std::sync::Arc;
use std::time::{Duration, Instant};

use better_compute::fakecloud::{FakeCloud, FakeCloudConfig};
use better_compute::provider::accounts::{GkeAccounts, StoreGkeAccounts};
use better_compute::reconcile::{Backoff, KubernetesClusters, Worker, WorkerConfig};
use better_compute::secrets::SecretKey;
use better_compute::service::{KubernetesModule, Service};
use better_compute::store::{Backend, NewAccount, NewOffer, NewPool, Store, now_micros};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::harness::{TestDb, tenant_principal};

/// The platform pool offered to `acme` and `globex`, on the fake GKE account.
pub const POOL: &str = "pool_0000000000000000000000gke1";
/// A DigitalOcean pool: no managed Kubernetes.
pub const DO_POOL: &str = "pool_0000000000000000000000dg01";
/// A second pool on the GKE account, billed `none`, offered to acme without `us-central1` and
/// to globex suspended.
pub const FREE_POOL: &str = "pool_0000000000000000000000free";
/// The fake account's project and zones.
pub const PROJECT: &str = "bc-platform";
pub const ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "us-central1-a"];

/// Everything a Kubernetes test talks to.
pub struct Env {
    pub db: TestDb,
    pub store: Store,
    pub cloud: FakeCloud,
    pub endpoint: String,
    pub admin_token: String,
    pub acme_admin: String,
    pub acme_editor: String,
    pub acme_viewer: String,
    pub globex_admin: String,
    pub accounts: Arc<dyn GkeAccounts>,
    server_stop: Option<tokio::sync::oneshot::Sender<()>>,
    worker: Option<(tokio::sync::watch::Sender<bool>, JoinHandle<()>)>,
    http: reqwest::Client,
}

/// How the environment is made.
pub struct Options {
    pub max_clusters: i64,
    pub operation: Duration,
    pub policies: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Self { max_clusters: 10, operation: Duration::from_millis(200), policies: Vec::new() }
    }
}

/// The reconciler with fast backoffs (the spec's intervals are configuration).
pub fn reconciler(accounts: Arc<dyn GkeAccounts>) -> KubernetesClusters {
    let fast = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(800), jitter: 0.2 };
    KubernetesClusters { backoff: fast, delete_backoff: fast, ..KubernetesClusters::new(accounts) }
}

/// A worker with short intervals.
pub fn worker(store: &Store, accounts: Arc<dyn GkeAccounts>, lease: Duration) -> Worker {
    let config = WorkerConfig {
        tick: Duration::from_millis(50),
        lease,
        converging: Some(Duration::from_millis(100)),
        settled: Some(Duration::from_secs(2)),
        shutdown_grace: Duration::from_millis(100),
        ..WorkerConfig::default()
    };
    Worker::new(store.clone(), config).with_reconciler(Arc::new(reconciler(accounts)))
}

impl Env {
    pub async fn start(backend: Backend) -> Env {
        Self::start_with(backend, Options::default()).await
    }

    pub async fn start_with(backend: Backend, options: Options) -> Env {
        let db = TestDb::new(backend).await;
        let store = db.store().await;
        let cloud = FakeCloud::start(FakeCloudConfig {
            operation_duration: options.operation,
            activation_delay: options.operation,
            ..Default::default()
        })
        .await
        .unwrap();
        let key = SecretKey::from_base64(&SecretKey::generate_base64()).unwrap();
        let accounts: Arc<dyn GkeAccounts> = StoreGkeAccounts::new(store.clone(), key.clone());
        let module = KubernetesModule { max_clusters_per_tenant: options.max_clusters, ..KubernetesModule::default() };
        let services = Service::with_policies(store.clone(), &options.policies)
            .unwrap()
            .with_secret_key(key.clone())
            .with_kubernetes(module);
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
            admin_token,
            acme_admin: String::new(),
            acme_editor: String::new(),
            acme_viewer: String::new(),
            globex_admin: String::new(),
            accounts,
            server_stop: Some(stop),
            worker: None,
            http: reqwest::Client::new(),
        };
        for tenant in ["acme", "globex"] {
            let (status, body) =
                env.post_as(&env.admin_token.clone(), "/api/platform/tenants/create", json!({"id": tenant})).await;
            assert_eq!(status, 200, "{body}");
        }
        seed_catalog(&store, &key, &env.cloud).await;
        env.acme_admin = tenant_principal(&store, "acme", "admin").await;
        env.acme_editor = tenant_principal(&store, "acme", "editor").await;
        env.acme_viewer = tenant_principal(&store, "acme", "viewer").await;
        env.globex_admin = tenant_principal(&store, "globex", "admin").await;
        env
    }

    /// Starts the worker (one at a time).
    pub fn start_worker(&mut self) {
        self.start_worker_with(reconciler(self.accounts.clone()));
    }

    /// Stops the worker: what the tenant writes from now on stays as the service wrote it.
    pub async fn stop_worker(&mut self) {
        if let Some((stop, task)) = self.worker.take() {
            let _ = stop.send(true);
            let _ = task.await;
        }
    }

    /// Starts the worker with this reconciler.
    pub fn start_worker_with(&mut self, reconciler: KubernetesClusters) {
        let config = WorkerConfig {
            tick: Duration::from_millis(50),
            lease: Duration::from_secs(2),
            converging: Some(Duration::from_millis(100)),
            settled: Some(Duration::from_secs(2)),
            shutdown_grace: Duration::from_millis(100),
            ..WorkerConfig::default()
        };
        let worker = Worker::new(self.store.clone(), config).with_reconciler(Arc::new(reconciler));
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

    /// Polls `get` until the cluster is in `state`; returns it and how long it took.
    pub async fn wait_state(&self, cluster_id: &str, state: &str, limit: Duration) -> (Value, Duration) {
        let started = Instant::now();
        loop {
            let cluster = self
                .ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": cluster_id}))
                .await;
            if cluster["state"] == state {
                return (cluster, started.elapsed());
            }
            assert!(started.elapsed() < limit, "cluster not {state} after {limit:?}: {cluster}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The fake cloud's GKE clusters.
    pub fn fake_clusters(&self) -> Vec<Value> {
        self.cloud.inspect()["gke"]["clusters"].as_array().cloned().unwrap_or_default()
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

/// The catalog of the tests: a platform GKE account on the fake cloud with a metered pool
/// offered to `acme` and `globex`, and `acme`'s own DigitalOcean account and pool.
async fn seed_catalog(store: &Store, key: &SecretKey, cloud: &FakeCloud) {
    let now = now_micros();
    let accounts = [
        ("acct_0000000000000000000000gke1", None, "gke", ZONES.map(String::from).to_vec(), POOL, "metered"),
        ("acct_0000000000000000000000dg01", Some("acme"), "digitalocean", vec!["nyc3".to_owned()], DO_POOL, "none"),
    ];
    for (account, tenant, provider, locations, pool, billing) in accounts {
        let credentials = match provider {
            "gke" => cloud.service_account_key(PROJECT, "better-compute"),
            _ => FakeCloudConfig::default().digitalocean_token,
        };
        store
            .account_create(&NewAccount {
                id: account.into(),
                tenant_id: tenant.map(str::to_owned),
                provider: provider.into(),
                name: format!("{provider}-account"),
                description: String::new(),
                endpoint: cloud.base_url().to_owned(),
                locations,
                sealed_credentials: key.seal(&credentials, account).unwrap(),
                now,
            })
            .await
            .unwrap();
        store
            .pool_create(&NewPool {
                id: pool.into(),
                account_id: account.into(),
                name: format!("{provider}-pool"),
                description: String::new(),
                billing_mode: billing.into(),
                policy: json!({}),
                prices: Default::default(),
                now,
            })
            .await
            .unwrap();
    }
    store
        .pool_create(&NewPool {
            id: FREE_POOL.into(),
            account_id: "acct_0000000000000000000000gke1".into(),
            name: "gke-free".into(),
            description: String::new(),
            billing_mode: "none".into(),
            policy: json!({}),
            prices: Default::default(),
            now,
        })
        .await
        .unwrap();
    let offers = [
        (POOL, "acme", "active", vec![]),
        (POOL, "globex", "active", vec![]),
        (FREE_POOL, "acme", "active", vec!["us-central1".to_owned()]),
        (FREE_POOL, "globex", "suspended", vec![]),
    ];
    for (pool, tenant, state, excluded_regions) in offers {
        let offer =
            NewOffer { pool_id: pool.into(), tenant_id: tenant.into(), state: state.into(), excluded_regions, now };
        store.offer_create(&offer).await.unwrap();
    }
}

/// A standard cluster request with two pools.
pub fn standard(name: &str, key: &str) -> Value {
    json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "mode": "standard", "location": "europe-west1",
        "idempotencyKey": key,
        "nodePools": [
            {"name": "general", "machineType": "e2-standard-4", "nodeCount": 2, "zones": ["europe-west1-b"]},
            {"name": "batch", "machineType": "e2-standard-8", "nodeCount": 1, "spot": true,
             "autoscaling": {"minNodes": 1, "maxNodes": 3},
             "taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
             "labels": {"team": "data"}},
        ],
    })
}
