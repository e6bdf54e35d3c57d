//! The test harness: fresh databases (Postgres and SQLite), the real server on a free port,
//! and request helpers for JSON and gRPC.

use std::path::PathBuf;
use std::time::Duration;

use better_compute::cli::{AuthedChannel, BearerToken};
use better_compute::service::{ApiKeyToken, BootstrapOutcome, Service};
use better_compute::store::{Backend, NewApiKey, PrincipalRow, RoleBindingRow, Store, now_micros};
use serde_json::Value;
use sqlx::Connection;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// The Postgres server the suite runs on: `BC_TEST_POSTGRES_URL`, else the machine's own.
pub fn postgres_admin_url() -> String {
    std::env::var("BC_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A database of its own for one test, dropped afterwards.
pub struct TestDb {
    /// The URL to connect to.
    pub url: String,
    /// Its backend.
    pub backend: Backend,
    /// The Postgres database's name, to drop it.
    postgres_name: Option<String>,
    /// The SQLite file's directory, removed with it.
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// A fresh database on `backend`.
    pub async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Postgres => Self::postgres().await,
            Backend::Sqlite => Self::sqlite(),
        }
    }

    /// A fresh Postgres database. Postgres is required: a test that cannot reach it fails.
    pub async fn postgres() -> TestDb {
        let admin_url = postgres_admin_url();
        let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap_or_else(|error| {
            panic!(
                "the suite needs Postgres at {admin_url} ({error}); start it (see README) or set BC_TEST_POSTGRES_URL"
            )
        });
        let name = format!("bc_test_{}", better_compute::ids::random("db").trim_start_matches("db_"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut admin).await.unwrap();
        let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(&admin_url);
        TestDb { url: format!("{base}/{name}"), backend: Backend::Postgres, postgres_name: Some(name), _dir: None }
    }

    /// A fresh SQLite file in a temporary directory.
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("bc.sqlite").display());
        TestDb { url, backend: Backend::Sqlite, postgres_name: None, _dir: Some(dir) }
    }

    /// A migrated store on this database.
    pub async fn store(&self) -> Store {
        let store = Store::connect(&self.url, 8).await.unwrap();
        store.migrate().await.unwrap();
        store
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some(name) = self.postgres_name.take() else { return };
        // Drop runs outside async; a short-lived runtime on its own thread does the cleanup.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&postgres_admin_url()).await {
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                        .execute(&mut admin)
                        .await;
                }
            });
        })
        .join();
    }
}

/// The real API server, in this process, on a free port.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The operator key made at bootstrap.
    pub admin_token: String,
    /// The server's store, for looking behind the API.
    pub store: Store,
    /// Stops the server.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The serving task.
    task: Option<JoinHandle<()>>,
    /// A client for JSON calls.
    http: reqwest::Client,
}

impl TestServer {
    /// Migrates `db`, bootstraps the operator key and serves.
    pub async fn start(db: &TestDb) -> TestServer {
        let store = db.store().await;
        let services = Service::new(store.clone()).with_secret_key(test_secret_key());
        let admin_token = match services.bootstrap_operator(None).await.unwrap() {
            BootstrapOutcome::Created(token) => token.reveal(),
            BootstrapOutcome::AlreadyBootstrapped => panic!("a fresh database has no keys"),
        };
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
        TestServer { endpoint, admin_token, store, stop: Some(stop), task: Some(task), http: reqwest::Client::new() }
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

    /// Stops the server and waits for it.
    pub async fn stop(mut self) {
        self.shutdown().await;
    }

    async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The secret key of test servers: fixed, so a restarted server opens what it sealed.
pub fn test_secret_key() -> better_compute::secrets::SecretKey {
    better_compute::secrets::SecretKey::from_bytes(&[7u8; 32]).unwrap()
}

/// A user of `tenant` holding `role` there (none when empty), with an API key; returns the
/// bearer token.
pub async fn tenant_principal(store: &Store, tenant: &str, role: &str) -> String {
    let token = ApiKeyToken::generate();
    let principal = PrincipalRow {
        id: better_compute::ids::PrincipalId::random().to_string(),
        kind: "user".to_owned(),
        tenant_id: Some(tenant.to_owned()),
        name: format!("{tenant} {role}"),
        created_at: now_micros(),
        deleted_at: None,
    };
    let bindings: Vec<RoleBindingRow> = (!role.is_empty())
        .then(|| RoleBindingRow {
            id: better_compute::ids::RoleBindingId::random().to_string(),
            principal_id: principal.id.clone(),
            role: role.to_owned(),
            scope_type: "tenant".to_owned(),
            scope_id: tenant.to_owned(),
            tenant_id: Some(tenant.to_owned()),
            created_at: now_micros(),
        })
        .into_iter()
        .collect();
    let key = NewApiKey {
        id: token.id.as_str().to_owned(),
        secret_sha256: token.secret_sha256(),
        description: "test".to_owned(),
        expires_at: None,
    };
    store.principal_create_with_key(&principal, &key, &bindings).await.unwrap();
    token.reveal()
}

/// The code string and details of a failed gRPC call.
pub fn grpc_error(status: &tonic::Status) -> better_compute::error::Error {
    better_compute::error::Error::from_status(status)
}

/// The field paths named by an `INVALID_INPUT` error's details.
pub fn violated_fields(details: &Value) -> Vec<String> {
    let mut fields: Vec<String> = details["fields"]
        .as_array()
        .map(|fields| fields.iter().map(|f| f["field"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default();
    fields.sort();
    fields
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `test` once per backend, so a suite's every test covers Postgres and SQLite alike.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(better_compute::store::Backend::Postgres).await;
                }
            )*
        }
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(better_compute::store::Backend::Sqlite).await;
                }
            )*
        }
    };
}
