//! Load balancers end to end: the real server and worker on a real database, the real
//! DigitalOcean adapter against the fake cloud, whose inspection shows what each load balancer
//! reaches. The resources they rest on (subnets, instances with droplets, certificates) are made
//! by `fixtures` at the fake cloud and in the vps module's tables.

mod certificate_race;
mod clearing;
mod cli;
mod decisions;
mod defaults;
mod end_to_end;
mod every_violation;
mod fixtures;
mod global;
mod grpc;
mod isolation;
mod lifecycle;
mod quota;
mod refusals;
mod settings;
mod targets;
mod update_states;

use std::sync::Arc;
use std::time::{Duration, Instant};

use better_compute::fakecloud::{FakeCloud, FakeCloudConfig};
use better_compute::provider::accounts::{DigitalOceanAccounts, StoreDigitalOceanAccounts, StoreGkeAccounts};
use better_compute::reconcile::{Backoff, ProviderLoadBalancers, ProviderResources, Reconciler, Worker, WorkerConfig};
use better_compute::secrets::SecretKey;
use better_compute::service::Service;
use better_compute::store::{Backend, NewAccount, NewOffer, NewPool, NewQuota, Store, now_micros};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::harness::{TestDb, tenant_principal};

/// The platform DigitalOcean pool (metered), offered to acme and globex, each with a
/// `loadBalancers` quota of [`QUOTA`].
pub const POOL: &str = "pool_0000000000000000000000dg01";
/// Its account.
pub const ACCOUNT: &str = "acct_0000000000000000000000dg01";
/// acme's own DigitalOcean pool (billed `none`): another account, and no quota row.
pub const OWN_POOL: &str = "pool_0000000000000000000000dg02";
/// Its account.
pub const OWN_ACCOUNT: &str = "acct_0000000000000000000000dg02";
/// A GKE pool offered to acme: no load balancers.
pub const GKE_POOL: &str = "pool_0000000000000000000000gke1";
/// The load balancers each tenant may have on [`POOL`].
pub const QUOTA: i64 = 5;
/// The region of most tests, and another one of the platform account.
pub const REGION: &str = "nyc3";
pub const OTHER_REGION: &str = "sfo3";

/// Everything a load balancer test talks to.
pub struct Env {
    pub db: TestDb,
    pub store: Store,
    pub cloud: FakeCloud,
    pub endpoint: String,
    pub admin_token: String,
    pub acme_admin: String,
    pub acme_viewer: String,
    pub globex_admin: String,
    pub accounts: Arc<dyn DigitalOceanAccounts>,
    /// The key the accounts' credentials are sealed with.
    pub key: SecretKey,
    server_stop: Option<tokio::sync::oneshot::Sender<()>>,
    worker: Option<(tokio::sync::watch::Sender<bool>, JoinHandle<()>)>,
    http: reqwest::Client,
}

/// How the environment is made.
pub struct Options {
    /// How long the fake cloud's objects stay `new`/`pending`.
    pub activation: Duration,
    /// Operator policies.
    pub policies: Vec<(String, String)>,
    /// The quota of each tenant on [`POOL`].
    pub quota: i64,
}

impl Default for Options {
    fn default() -> Self {
        Self { activation: Duration::from_millis(200), policies: Vec::new(), quota: QUOTA }
    }
}

/// The reconciler with fast backoffs (the spec's intervals are configuration).
pub fn reconciler(accounts: Arc<dyn DigitalOceanAccounts>) -> ProviderLoadBalancers {
    let fast = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(800), jitter: 0.2 };
    ProviderLoadBalancers { backoff: fast, delete_backoff: fast, ..ProviderLoadBalancers::new(accounts) }
}

impl Env {
    pub async fn start(backend: Backend) -> Env {
        Self::start_with(backend, Options::default()).await
    }

    pub async fn start_with(backend: Backend, options: Options) -> Env {
        let db = TestDb::new(backend).await;
        let store = db.store().await;
        let cloud = FakeCloud::start(FakeCloudConfig {
            operation_duration: options.activation,
            activation_delay: options.activation,
            ..Default::default()
        })
        .await
        .unwrap();
        let key = SecretKey::from_base64(&SecretKey::generate_base64()).unwrap();
        let accounts: Arc<dyn DigitalOceanAccounts> = StoreDigitalOceanAccounts::new(store.clone(), key.clone());
        let services = Service::with_policies(store.clone(), &options.policies).unwrap().with_secret_key(key.clone());
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
            acme_viewer: String::new(),
            globex_admin: String::new(),
            accounts,
            key: key.clone(),
            server_stop: Some(stop),
            worker: None,
            http: reqwest::Client::new(),
        };
        for tenant in ["acme", "globex"] {
            let (status, body) =
                env.post_as(&env.admin_token.clone(), "/api/platform/tenants/create", json!({"id": tenant})).await;
            assert_eq!(status, 200, "{body}");
        }
        seed_catalog(&store, &key, &env.cloud, options.quota).await;
        env.acme_admin = tenant_principal(&store, "acme", "admin").await;
        env.acme_viewer = tenant_principal(&store, "acme", "viewer").await;
        env.globex_admin = tenant_principal(&store, "globex", "admin").await;
        env
    }

    /// Starts the worker with settled passes every `settled` (one worker at a time).
    pub fn start_worker_settling(&mut self, settled: Duration) {
        self.run_worker(settled, vec![Arc::new(reconciler(self.accounts.clone()))]);
    }

    /// Starts the worker with every kind of the `vps.provider-resources` reconciler (networks,
    /// instances, certificates and load balancers), as `bc-worker` runs it.
    pub fn start_vps_worker(&mut self) {
        let fast = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(800), jitter: 0.2 };
        let gke = StoreGkeAccounts::new(self.store.clone(), self.key.clone());
        let vps = ProviderResources {
            backoff: fast,
            delete_backoff: fast,
            ..ProviderResources::new(gke, self.accounts.clone(), self.key.clone())
        };
        self.run_worker(Duration::from_secs(600), vps.reconcilers());
    }

    fn run_worker(&mut self, settled: Duration, reconcilers: Vec<Arc<dyn Reconciler>>) {
        let config = WorkerConfig {
            tick: Duration::from_millis(50),
            lease: Duration::from_secs(2),
            converging: Some(Duration::from_millis(100)),
            settled: Some(settled),
            shutdown_grace: Duration::from_millis(100),
            metering_interval: Duration::from_secs(3600),
            ..WorkerConfig::default()
        };
        let mut worker = Worker::new(self.store.clone(), config);
        for reconciler in reconcilers {
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

    /// Starts the worker with settled passes far apart: only wake-ups and converging passes run.
    pub fn start_worker(&mut self) {
        self.start_worker_settling(Duration::from_secs(600));
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

    /// `POST` as `token`; panics unless 200.
    pub async fn ok_as(&self, token: &str, path: &str, body: Value) -> Value {
        let (status, json) = self.post_as(token, path, body).await;
        assert_eq!(status, 200, "{path}: {json}");
        json
    }

    /// `POST` as acme's admin; panics unless 200.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        self.ok_as(&self.acme_admin.clone(), path, body).await
    }

    /// `POST` as `token`; panics on 200; returns the status, the code and the details.
    pub async fn refused_as(&self, token: &str, path: &str, body: Value) -> (u16, String, Value) {
        let (status, json) = self.post_as(token, path, body.clone()).await;
        assert_ne!(status, 200, "{path} should have been refused: {body} -> {json}");
        (status, json["error"]["code"].as_str().unwrap_or_default().to_owned(), json["error"]["details"].clone())
    }

    /// As acme's admin.
    pub async fn refused(&self, path: &str, body: Value) -> (u16, String, Value) {
        self.refused_as(&self.acme_admin.clone(), path, body).await
    }

    /// Polls `get` (as the tenant's admin) until the load balancer is in `state`.
    pub async fn wait_state(&self, tenant: &str, id: &str, state: &str) -> Value {
        self.wait_until(tenant, id, state, |lb| lb["state"] == state).await
    }

    /// Polls the load balancer until `check` holds for its view.
    pub async fn wait_until(&self, tenant: &str, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let token = if tenant == "acme" { self.acme_admin.clone() } else { self.globex_admin.clone() };
        let started = Instant::now();
        loop {
            let lb = self.ok_as(&token, GET, json!({"tenantId": tenant, "loadBalancerId": id})).await;
            if check(&lb) {
                return lb;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "load balancer not {what} after 20 s: {lb}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Polls until `check` holds for the load balancer's provider object (by the id it recorded).
    pub async fn wait_fake(&self, tenant: &str, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let token = if tenant == "acme" { self.acme_admin.clone() } else { self.globex_admin.clone() };
        let started = Instant::now();
        loop {
            let lb = self.ok_as(&token, GET, json!({"tenantId": tenant, "loadBalancerId": id})).await;
            let name = lb["providerName"].as_str().unwrap().to_owned();
            if let Some(fake) = self.fake_load_balancer(&name)
                && check(&fake)
            {
                return fake;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{what}: not so after 20 s: {lb} / {:?}",
                self.fake_load_balancer(&name)
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The fake cloud's load balancers.
    pub fn fake_load_balancers(&self) -> Vec<Value> {
        self.cloud.inspect()["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default()
    }

    /// The fake cloud's load balancer named `name`.
    pub fn fake_load_balancer(&self, name: &str) -> Option<Value> {
        self.fake_load_balancers().into_iter().find(|lb| lb["name"] == name)
    }

    /// How many load-balancer requests ever carried a `tag` at the fake cloud.
    pub fn tag_requests(&self) -> u64 {
        self.cloud.inspect()["digitalocean"]["loadBalancerRequestsWithTag"].as_u64().unwrap()
    }

    /// The tenant's events about `subject`, oldest first.
    pub async fn events(&self, tenant: &str, subject: &str) -> Vec<Value> {
        let token = if tenant == "acme" { self.acme_admin.clone() } else { self.globex_admin.clone() };
        let listed = self.ok_as(&token, "/api/compute/events/list", json!({"tenantId": tenant, "limit": 1000})).await;
        listed["events"].as_array().unwrap().iter().filter(|e| e["subject"] == subject).cloned().collect()
    }

    /// Polls the subject's events until one of type `providerLoadBalancer.<kind>` is there
    /// (the provider sees a change a moment before the reconciler records its event) and
    /// returns the latest such.
    pub async fn wait_event(&self, tenant: &str, subject: &str, kind: &str) -> Value {
        let wanted = format!("providerLoadBalancer.{kind}");
        let started = Instant::now();
        loop {
            let events = self.events(tenant, subject).await;
            if let Some(event) = events.iter().rev().find(|e| e["type"] == wanted.as_str()) {
                return event.clone();
            }
            assert!(started.elapsed() < Duration::from_secs(20), "no {wanted} event after 20 s: {events:?}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// A quota's booked count.
    pub async fn quota_used(&self, tenant: &str) -> i64 {
        self.store.quota_fetch(POOL, tenant, "loadBalancers").await.unwrap().used
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

pub const CREATE: &str = "/api/compute/loadBalancers/create";
pub const GET: &str = "/api/compute/loadBalancers/get";
pub const LIST: &str = "/api/compute/loadBalancers/list";
pub const UPDATE: &str = "/api/compute/loadBalancers/update";
pub const DELETE: &str = "/api/compute/loadBalancers/delete";

/// A regional load balancer of acme on [`POOL`] in [`REGION`] over `targets`, HTTP 80 to 8080.
pub fn regional(name: &str, targets: Value) -> Value {
    json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "region": REGION, "targets": targets,
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "idempotencyKey": name,
    })
}

/// `body` with `tenantId` set to `tenant`.
pub fn as_tenant(mut body: Value, tenant: &str) -> Value {
    body["tenantId"] = json!(tenant);
    body
}

/// The catalog of the tests: a platform DigitalOcean account on the fake cloud (nyc3, sfo3) with
/// a metered pool offered to acme and globex and their quotas; acme's own DigitalOcean account
/// and pool (nyc3, no quota); a GKE account and pool offered to acme.
async fn seed_catalog(store: &Store, key: &SecretKey, cloud: &FakeCloud, quota: i64) {
    let now = now_micros();
    let token = FakeCloudConfig::default().digitalocean_token;
    let accounts = [
        (ACCOUNT, None, "digitalocean", vec![REGION, OTHER_REGION], POOL, "metered", token.clone()),
        (OWN_ACCOUNT, Some("acme"), "digitalocean", vec![REGION], OWN_POOL, "none", token),
        (
            "acct_0000000000000000000000gke1",
            None,
            "gke",
            vec!["us-central1-a"],
            GKE_POOL,
            "metered",
            cloud.service_account_key("bc-platform", "better-compute"),
        ),
    ];
    for (account, tenant, provider, locations, pool, billing, credentials) in accounts {
        store
            .account_create(&NewAccount {
                id: account.into(),
                tenant_id: tenant.map(str::to_owned),
                provider: provider.into(),
                name: format!("{provider}-{}", &account[account.len() - 4..]),
                description: String::new(),
                endpoint: cloud.base_url().to_owned(),
                locations: locations.into_iter().map(str::to_owned).collect(),
                sealed_credentials: key.seal(&credentials, account).unwrap(),
                now,
            })
            .await
            .unwrap();
        store
            .pool_create(&NewPool {
                id: pool.into(),
                account_id: account.into(),
                name: format!("{provider}-pool-{}", &pool[pool.len() - 4..]),
                description: String::new(),
                billing_mode: billing.into(),
                policy: json!({}),
                prices: [("vps.load-balancer.hours".to_owned(), 2)].into(),
                now,
            })
            .await
            .unwrap();
    }
    for (pool, tenant) in [(POOL, "acme"), (POOL, "globex"), (GKE_POOL, "acme")] {
        let offer = NewOffer {
            pool_id: pool.into(),
            tenant_id: tenant.into(),
            state: "active".into(),
            excluded_regions: vec![],
            now,
        };
        store.offer_create(&offer).await.unwrap();
    }
    for tenant in ["acme", "globex"] {
        let new = NewQuota {
            pool_id: POOL.into(),
            tenant_id: tenant.into(),
            resource_kind: "loadBalancers".into(),
            limit: quota,
            now,
        };
        store.quota_create(&new).await.unwrap();
    }
}
