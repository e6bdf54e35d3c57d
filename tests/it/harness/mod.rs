//! The test harness, the one setup of every suite. [`System`] is the one builder a test starts
//! what it needs with: a database ([`TestDb`]), the real server in this process ([`TestServer`]),
//! the resource environment with the fake cloud, a seeded [`Catalog`] and workers on demand
//! ([`Env`]), `bc-server` and `bc-worker` as processes ([`ServerProcess`], [`WorkerProcess`]),
//! or `bcctl dev` ([`Running`]). No suite builds these parts itself. Waiting for what the system
//! records: [`poll`], [`eventually`]. Helpers more than one suite uses live here too: the
//! operator's [`Client`] and [`Platform`] (`platform`), the provider adapters on a fake cloud
//! (`adapters`), principals and error details (below), `bcd` and cargo (`workspace`).
//! tests/README.md says how to write a test.

pub mod adapters;
mod catalog;
mod db;
mod env;
mod fakes;
mod metal;
mod plan_reality;
mod platform;
mod poll;
mod processes;
mod server;
mod server_process;
mod system;
mod worker;
mod worker_process;
mod workspace;

use std::path::PathBuf;

use better_compute::service::ApiKeyToken;
use better_compute::store::{NewApiKey, PrincipalRow, RoleBindingRow, Store, now_micros};
use serde_json::Value;

pub use catalog::{Catalog, PROJECT};
pub use db::{TestDb, postgres_admin_url};
pub use env::Env;
pub use fakes::{never_answer, probe_every, sample_every, workers_killed_at_random};
pub use plan_reality::{Reality, assert_plan_was_reality};
pub use platform::{Client, DO_TOKEN, ENROLL, GKE_SECRET, OwnPool, PASSWORD, Platform, gke_key};
pub use poll::{eventually, passes_recorded, poll, poll_explained, serving, worker_idle};
pub use processes::{Running, curl, python, run_ok};
pub use server::{Serving, TestServer};
pub use server_process::ServerProcess;
pub use system::System;
pub use worker::{RunningWorker, fast_config, fast_resources, reconcilers, start_worker, worker};
pub use worker_process::{FAST_WORKER_ARGS, WorkerProcess};
pub use workspace::{bcd_binary, cargo};

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
