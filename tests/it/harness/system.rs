//! [`System`]: the one builder every test starts what it needs with. Say the backend, then what
//! differs from the defaults (catalog, policies, Kubernetes settings, fake cloud timings, the
//! worker's configuration and kinds, the server's flags, TLS), then end with what to start: a
//! bare database, the server in this process, the whole resource environment, `bc-server` as
//! its own process, or `bcctl dev`. Each ending returns the handle of that
//! system, which starts its workers and further servers itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use better_compute::reconcile::WorkerConfig;
use better_compute::service::{KubernetesModule, Service};
use better_compute::store::{Backend, Store};
use fakecloud::FakeCloudConfig;
use serde_json::Value;

use super::processes::{DevOptions, start_dev};
use super::{Catalog, Env, OwnPool, Running, ServerProcess, TestDb, TestServer, fast_config, test_secret_key};

/// What a test starts, described before it is started.
pub struct System {
    backend: Backend,
    catalog: Catalog,
    /// Operator policies: file name and Cedar text.
    policies: Vec<(String, String)>,
    /// The server's Kubernetes settings.
    kubernetes: KubernetesModule,
    /// How long the fake cloud's operations run and its objects stay `new`/`pending`.
    fake_operations: Duration,
    /// The configuration of the workers the environment starts.
    worker_config: WorkerConfig,
    /// The kinds they reconcile; `None`: every kind of the registry.
    kinds: Option<Vec<&'static str>>,
    /// Over TLS (`bc-server` and `bcctl dev` only).
    tls: bool,
    /// `bcctl dev` as on a machine with no Node and no source tree.
    bare: bool,
    /// `bcctl dev`'s `RUST_LOG` and the file its output goes to.
    logging: Option<(String, PathBuf)>,
}

impl System {
    /// A system on `backend`: no catalog, the default server settings, 200 ms fake operations
    /// and a [`fast_config`] worker of every kind.
    pub fn on(backend: Backend) -> System {
        System {
            backend,
            catalog: Catalog::new(),
            policies: Vec::new(),
            kubernetes: KubernetesModule::default(),
            fake_operations: Duration::from_millis(200),
            worker_config: fast_config(),
            kinds: None,
            tls: false,
            bare: false,
            logging: None,
        }
    }

    /// The platform catalog the environment is seeded with.
    pub fn catalog(mut self, catalog: Catalog) -> System {
        self.catalog = catalog;
        self
    }

    /// The operator's `policies` (file name, Cedar text).
    pub fn policies(mut self, policies: &[(String, String)]) -> System {
        self.policies = policies.to_vec();
        self
    }

    /// How many clusters a tenant may have.
    pub fn max_clusters_per_tenant(mut self, max: i64) -> System {
        self.kubernetes.max_clusters_per_tenant = max;
        self
    }

    /// How long the fake cloud's operations and activations take.
    pub fn fake_operations(mut self, duration: Duration) -> System {
        self.fake_operations = duration;
        self
    }

    /// The workers' configuration.
    pub fn worker_config(mut self, config: WorkerConfig) -> System {
        self.worker_config = config;
        self
    }

    /// Only these kinds are reconciled: the suite makes the rows of the others by hand.
    pub fn reconciling(mut self, kinds: &[&'static str]) -> System {
        self.kinds = Some(kinds.to_vec());
        self
    }

    /// `bc-server` or `bcctl dev` over TLS, with a CA of the test's own.
    pub fn tls(mut self) -> System {
        self.tls = true;
        self
    }

    /// `bcctl dev` with an empty environment, no program on its `PATH` and its data directory as
    /// its working directory: a machine with no Node and no source tree.
    pub fn bare(mut self) -> System {
        self.bare = true;
        self
    }

    /// `bcctl dev` logging at `rust_log` to `log`.
    pub fn logging(mut self, rust_log: &str, log: &Path) -> System {
        self.logging = Some((rust_log.to_owned(), log.to_owned()));
        self
    }

    /// A fresh database, not migrated: for tests of the store and the worker themselves.
    pub async fn database(self) -> TestDb {
        TestDb::new(self.backend).await
    }

    /// The real server in this process on a fresh database, bootstrapped with an operator key
    /// and nothing else: for tests of the API that make what they need through it.
    pub async fn server(self) -> TestServer {
        let db = TestDb::new(self.backend).await;
        let store = db.store().await;
        let services = services(&store, &self.policies, self.kubernetes).with_secret_key(test_secret_key());
        TestServer::bootstrap(db, store, services).await
    }

    /// [`System::server`] with the operator's [`Platform`](super::Platform), tenant acme's own
    /// pool `name` with `policy`, and acme's admin.
    pub async fn own_pool(self, name: &str, policy: Value) -> OwnPool {
        OwnPool::start(self.server().await, name, policy).await
    }

    /// The resource environment: the server, the fake cloud, the seeded catalog, tenants `acme`
    /// and `globex` with their users; the worker starts on [`Env::start_worker`].
    pub async fn start(self) -> Env {
        let cloud = self.fake_cloud_config();
        let db = TestDb::new(self.backend).await;
        let store = db.store().await;
        let services = services(&store, &self.policies, self.kubernetes);
        Env::start(db, store, services, cloud, self.catalog, self.worker_config, self.kinds).await
    }

    /// `bc-server` as its own process with `args` besides the database, the listening address
    /// and the key (Postgres only: other processes, the workers', share its database).
    pub async fn process(self, args: &[&str]) -> ServerProcess {
        assert_eq!(self.backend, Backend::Postgres, "bc-server runs as a process on Postgres");
        ServerProcess::start(args, self.tls).await
    }

    /// `bcctl dev` in `data_dir` on a free port, once its `dev.json` names a ready endpoint: the
    /// process and that file. `bcctl dev` keeps its own SQLite file there.
    pub fn dev(self, data_dir: &Path) -> (Running, Value) {
        assert_eq!(self.backend, Backend::Sqlite, "bcctl dev runs on its own SQLite file");
        start_dev(data_dir, DevOptions { tls: self.tls, bare: self.bare, logging: self.logging })
    }

    fn fake_cloud_config(&self) -> FakeCloudConfig {
        FakeCloudConfig {
            operation_duration: self.fake_operations,
            activation_delay: self.fake_operations,
            ..Default::default()
        }
    }
}

/// The server's services on `store` with the operator's `policies` and `kubernetes` settings.
fn services(store: &Store, policies: &[(String, String)], kubernetes: KubernetesModule) -> Service {
    // Without policies of its own the server shares the built-in authorizer, made once per run.
    let services = if policies.is_empty() {
        Service::new(store.clone())
    } else {
        Service::with_policies(store.clone(), policies).unwrap()
    };
    services.with_kubernetes(kubernetes)
}
