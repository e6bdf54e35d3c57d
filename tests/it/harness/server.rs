//! The real API server, in this process, on a free port: [`TestServer`] a freshly bootstrapped
//! one with request helpers for JSON and gRPC ([`System::server`](super::System::server) starts
//! it), [`Serving`] a store of a started system served again (a restart, a second server).

use std::sync::Arc;
use std::time::Duration;

use better_compute::cli::{AuthedChannel, BearerToken};
use better_compute::reconcile::{Reconciler, WorkerConfig};
use better_compute::service::{BootstrapOutcome, Service};
use better_compute::store::Store;
use serde_json::Value;
use tokio::task::{JoinError, JoinHandle};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::{RunningWorker, TestDb, start_worker};

/// `services` served on a free port until stopped or dropped.
pub struct Serving {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// Stops the server.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The serving task.
    task: Option<JoinHandle<()>>,
}

impl Serving {
    /// Serves `services` on a free port.
    pub(super) async fn start(services: Service) -> Serving {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            better_compute::server::serve(listener, services, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Serving { endpoint, stop: Some(stop), task: Some(task) }
    }

    /// Serves `store` (of a system a test started) as it is, without a bootstrap: a restarted
    /// server on the same database, or a second one beside the first.
    pub async fn restart(store: Store) -> Serving {
        Self::start(Service::new(store)).await
    }

    /// Stops it gracefully; panics if that takes more than 10 s (a stream that never ends) or
    /// if the server failed.
    pub async fn stop(mut self) {
        self.shutdown().await.expect("the server stops within 10 s, open watches included").unwrap();
    }

    /// Asks the server to stop and waits up to 10 s: `None` if it did not stop in that time.
    async fn shutdown(&mut self) -> Option<Result<(), JoinError>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take()?;
        tokio::time::timeout(Duration::from_secs(10), task).await.ok()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The real API server on a fresh store, bootstrapped with an operator key.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The operator key made at bootstrap.
    pub admin_token: String,
    /// The server's store, for looking behind the API.
    pub store: Store,
    /// The serving task.
    serving: Serving,
    /// A client for JSON calls.
    http: reqwest::Client,
    /// The database, kept as long as the server (a test that stops the server and goes on with
    /// its store keeps a clone).
    pub db: TestDb,
}

impl TestServer {
    /// Bootstraps the operator key of `services` (on `store` of `db`, fresh) and serves them.
    pub(super) async fn bootstrap(db: TestDb, store: Store, services: Service) -> TestServer {
        let admin_token = match services.bootstrap_operator(None).await.unwrap() {
            BootstrapOutcome::Created(token) => token.reveal(),
            BootstrapOutcome::AlreadyBootstrapped => panic!("a fresh database has no keys"),
        };
        let serving = Serving::start(services).await;
        TestServer { endpoint: serving.endpoint.clone(), admin_token, store, serving, http: reqwest::Client::new(), db }
    }

    /// `POST <path>` with a JSON body, as `token` (none: no Authorization header). Returns the
    /// status and the JSON body.
    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
        self.post_raw(path, token, body.to_string()).await
    }

    /// `POST <path>` with a raw body.
    pub async fn post_raw(&self, path: &str, token: Option<&str>, body: String) -> (u16, Value) {
        let mut request =
            self.http.post(format!("{}{path}", self.endpoint)).header("content-type", "application/json").body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let json = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text));
        (status, json)
    }

    /// `POST <path>` as the operator; panics unless it answers 200.
    pub async fn admin_ok(&self, path: &str, body: Value) -> Value {
        let (status, json) = self.post(path, Some(&self.admin_token.clone()), body).await;
        assert_eq!(status, 200, "{path}: {json}");
        json
    }

    /// A gRPC channel whose calls carry `token`.
    pub async fn channel(&self, token: Option<&str>) -> AuthedChannel {
        let channel = Channel::from_shared(self.endpoint.clone()).unwrap().connect().await.unwrap();
        InterceptedService::new(channel, BearerToken::new(token).unwrap())
    }

    /// Starts a worker on the server's store with `config`, running `reconcilers`.
    pub fn start_worker(&self, config: WorkerConfig, reconcilers: Vec<Arc<dyn Reconciler>>) -> RunningWorker {
        start_worker(&self.store, config, reconcilers)
    }

    /// Stops the server and waits for it (up to 10 s).
    pub async fn stop(mut self) {
        let _ = self.serving.shutdown().await;
    }
}
