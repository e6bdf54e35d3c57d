//! Fresh databases for tests: a Postgres database or a SQLite file of its own per test,
//! migrated on demand and dropped afterwards.

use std::sync::Arc;

use better_compute::store::{Backend, Store};
use sqlx::Connection;

/// The Postgres server the suite runs on: `BC_TEST_POSTGRES_URL`, else the machine's own.
pub fn postgres_admin_url() -> String {
    std::env::var("BC_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The most connections a test's store opens to Postgres (SQLite's has one). The server and
/// the worker of a test share it; a test is a handful of requests at a time, and a small pool
/// lets many tests run at once on one Postgres (`max_connections` is 100 by default).
pub const STORE_CONNECTIONS: u32 = 4;

/// A database of its own for one test, dropped when the last of its clones goes (a handle and
/// the server on it may each hold one).
#[derive(Clone)]
pub struct TestDb {
    /// The URL to connect to.
    pub url: String,
    /// Its backend.
    pub backend: Backend,
    /// Drops the database when the last clone goes.
    _owner: Arc<Owner>,
}

/// What is removed with the database.
struct Owner {
    /// The Postgres database's name, to drop it.
    postgres_name: Option<String>,
    /// The SQLite file's directory, removed with it.
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// A fresh database on `backend`.
    pub(super) async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Postgres => Self::postgres().await,
            Backend::Sqlite => Self::sqlite(),
        }
    }

    /// A fresh Postgres database. Postgres is required: a test that cannot reach it fails.
    async fn postgres() -> TestDb {
        let admin_url = postgres_admin_url();
        let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap_or_else(|error| {
            panic!(
                "the suite needs Postgres at {admin_url} ({error}); start it (see README) or set BC_TEST_POSTGRES_URL"
            )
        });
        let name = format!("bc_test_{}", better_compute::ids::random("db").trim_start_matches("db_"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut admin).await.unwrap();
        let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(&admin_url);
        let owner = Owner { postgres_name: Some(name.clone()), _dir: None };
        TestDb { url: format!("{base}/{name}"), backend: Backend::Postgres, _owner: Arc::new(owner) }
    }

    /// A fresh SQLite file in a temporary directory.
    fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("bc.sqlite").display());
        TestDb { url, backend: Backend::Sqlite, _owner: Arc::new(Owner { postgres_name: None, _dir: Some(dir) }) }
    }

    /// A migrated store on this database.
    pub async fn store(&self) -> Store {
        let store = Store::connect(&self.url, STORE_CONNECTIONS).await.unwrap();
        store.migrate().await.unwrap();
        store
    }
}

impl Drop for Owner {
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
