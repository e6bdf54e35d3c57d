//! The clients' own footguns: `bcctl`'s provider endpoint flag, which must never read `BC_ENDPOINT`.
//!
//! An account's `--endpoint` and the client's global `--endpoint` were one flag, so
//! `bcctl accounts update <id> --credentials-file f` with `BC_ENDPOINT` set sent the control plane's
//! address as the account's provider endpoint, with new credentials: the change was taken
//! (version 2, no warning), and the worker would have sent those credentials there. The
//! provider's address now has its own flag, `--provider-endpoint`.

use std::path::Path;

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{System, TestServer};

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Where acme's account is when the test starts.
const PROVIDER: &str = "http://127.0.0.1:1";

crate::on_both_backends!(
    bc_accounts_update_with_bc_endpoint_set_leaves_the_provider_endpoint_alone,
    bc_accounts_provider_endpoint_changes_the_provider_endpoint,
);

/// A DigitalOcean account of acme's at [`PROVIDER`]; its id.
async fn account(server: &TestServer) -> String {
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let created = server
        .admin_ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do",
                "credentials": "dop_v1_first", "endpoint": PROVIDER, "regions": ["fra1"]}),
        )
        .await;
    created["id"].as_str().unwrap().to_owned()
}

/// Runs `bcctl` with `args`, reaching the server only through `BC_ENDPOINT` and `BC_TOKEN`, as an
/// operator's shell does; its exit, stdout and stderr.
async fn bcctl(server: &TestServer, dir: &Path, args: &[&str]) -> (bool, String, String) {
    let output = tokio::process::Command::new(BC)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("BC_ENDPOINT", &server.endpoint)
        .env("BC_TOKEN", &server.admin_token)
        .output()
        .await
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (output.status.success(), text(output.stdout), text(output.stderr))
}

async fn stored(server: &TestServer, id: &str) -> Value {
    server.admin_ok("/api/platform/accounts/get", json!({"accountId": id})).await
}

async fn bc_accounts_update_with_bc_endpoint_set_leaves_the_provider_endpoint_alone(backend: Backend) {
    let server = System::on(backend).server().await;
    let id = account(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let credentials = dir.path().join("token");
    std::fs::write(&credentials, "dop_v1_rotated\n").unwrap();

    let args = ["-o", "json", "accounts", "update", &id, "--credentials-file", credentials.to_str().unwrap()];
    let (ok, stdout, stderr) = bcctl(&server, dir.path(), &args).await;
    assert!(ok, "the rotation goes through the API at BC_ENDPOINT: {stdout} {stderr}");
    let account = stored(&server, &id).await;
    assert_eq!(account["endpoint"], PROVIDER, "the API's address is not the provider's: {account}");
    assert_eq!(account["version"], 2, "the credentials were rotated: {account}");
    assert!(!stdout.contains(&server.endpoint), "{stdout}");
    server.stop().await;
}

async fn bc_accounts_provider_endpoint_changes_the_provider_endpoint(backend: Backend) {
    let server = System::on(backend).server().await;
    let id = account(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let credentials = dir.path().join("token");
    std::fs::write(&credentials, "dop_v1_for_the_new_endpoint\n").unwrap();
    let moved = "http://127.0.0.1:2";

    let file = credentials.to_str().unwrap();
    let args = ["-o", "json", "accounts", "update", &id, "--credentials-file", file, "--provider-endpoint", moved];
    let (ok, stdout, stderr) = bcctl(&server, dir.path(), &args).await;
    assert!(ok, "{stdout} {stderr}");
    let account = stored(&server, &id).await;
    assert_eq!((account["endpoint"].as_str(), account["version"].as_i64()), (Some(moved), Some(2)), "{account}");

    // And an account made with it starts there.
    let args = [
        "-o",
        "json",
        "accounts",
        "create",
        "--provider",
        "digitalocean",
        "--name",
        "acme-do-2",
        "--tenant",
        "acme",
        "--region",
        "fra1",
        "--credentials-file",
        file,
        "--provider-endpoint",
        moved,
    ];
    let (ok, stdout, stderr) = bcctl(&server, dir.path(), &args).await;
    assert!(ok, "{stdout} {stderr}");
    let created: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(created["endpoint"], moved, "{created}");
    server.stop().await;
}
