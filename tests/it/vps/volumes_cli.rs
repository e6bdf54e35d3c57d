//! `bcctl volumes ...` as a user runs it: create, update, attach and detach with `--wait` follow
//! the volume until the provider has made the change, delete with `--wait` until it is gone;
//! list and get print it, and the list's table fits a 120-column terminal.

use std::process::Command;

use better_compute::store::Backend;
use serde_json::Value;

use super::DO_POOL;
use super::volumes::ready_instance;
use crate::harness::Env;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl` as acme's admin; panics unless it succeeds; its standard output.
async fn bc_text(env: &Env, args: &[&str]) -> String {
    let mut command = Command::new(BC);
    command.env("BC_ENDPOINT", &env.server.endpoint).env("BC_TOKEN", &env.acme_admin).env("COLUMNS", "120").args(args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    assert!(
        output.status.success(),
        "bcctl {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `bcctl -o json`; its answer.
async fn bcctl(env: &Env, args: &[&str]) -> Value {
    let text = bc_text(env, &[&["-o", "json"], args].concat()).await;
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("bcctl {args:?}: {error}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_volumes_create_grow_attach_detach_and_delete_with_wait() {
    let env = super::start(Backend::Sqlite).await;
    let create = [
        "volumes", "create", "--tenant", "acme", "--pool", DO_POOL, "--name", "data", "--region", "nyc3", "--size",
        "10",
    ];
    let created = bcctl(&env, &[&create[..], &["--wait"]].concat()).await;
    assert_eq!((created["state"].as_str(), created["sizeGigabytes"].as_i64()), (Some("ready"), Some(10)), "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(bcctl(&env, &create).await["id"], id.as_str(), "running the create again is a retry");

    let grown = bcctl(&env, &["volumes", "update", "--tenant", "acme", &id, "--size", "20", "--wait"]).await;
    assert_eq!((grown["state"].as_str(), grown["sizeGigabytes"].as_i64()), (Some("ready"), Some(20)), "{grown}");

    let web = ready_instance(&env, "web", "nyc3").await;
    let instance = web["id"].as_str().unwrap();
    let attached = bcctl(&env, &["volumes", "attach", "--tenant", "acme", &id, "--instance", instance, "--wait"]).await;
    assert_eq!(attached["state"], "ready", "{attached}");
    assert_eq!(attached["instanceId"], instance, "{attached}");
    assert_eq!(attached["attachedMachineId"], web["machineId"], "{attached}");
    let detached = bcctl(&env, &["volumes", "detach", "--tenant", "acme", &id, "--wait"]).await;
    assert_eq!((detached["state"].as_str(), detached["attachedMachineId"].as_str()), (Some("ready"), Some("")));

    let listed = bcctl(&env, &["volumes", "list", "--tenant", "acme"]).await;
    assert_eq!(listed["volumes"][0]["id"], id.as_str(), "{listed}");
    assert_eq!(bcctl(&env, &["volumes", "get", "--tenant", "acme", &id]).await["name"], "data");
    let table = bc_text(&env, &["volumes", "list", "--tenant", "acme"]).await;
    print!("bcctl volumes list:\n{table}");
    assert!(table.lines().nth(1).is_some_and(|row| row.starts_with(&id) && row.contains(" ready ")), "{table}");
    let widest = table.lines().map(|line| line.chars().count()).max().unwrap_or_default();
    assert!(widest <= 120, "the table is {widest} columns wide:\n{table}");

    let deleted = bcctl(&env, &["volumes", "delete", "--tenant", "acme", &id, "--wait"]).await;
    assert_eq!(deleted["state"], "deleted", "{deleted}");
}
