//! `bcctl clusters delete --force` and `bcctl orphans list` as a user runs them: the forced cluster is
//! printed `deleted`, and its GKE cluster is listed as an orphan.

use std::process::Command;

use better_compute::store::Backend;
use serde_json::Value;

use super::{Env, GKE_ROUTE, gke_name};

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl -o json` as acme's admin; panics unless it succeeds; its answer.
async fn bcctl(env: &Env, args: &[&str]) -> Value {
    let mut command = Command::new(BC);
    command.env("BC_ENDPOINT", &env.server.endpoint).env("BC_TOKEN", &env.acme_admin).args(["-o", "json"]).args(args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "bcctl {args:?} failed:\n{text}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("bcctl {args:?}: {error}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_forces_a_stuck_delete_and_lists_its_orphans() {
    let mut env = super::setup(Backend::Sqlite).start().await;
    env.start_worker();
    let id = env.ready_cluster("acme", "cli").await;
    env.cloud.set_error_rate(GKE_ROUTE, 1.0, 503);
    let deleting = bcctl(&env, &["clusters", "delete", "--tenant", "acme", &id]).await;
    assert_eq!(deleting["state"], "deleting", "{deleting}");
    let forced = bcctl(&env, &["clusters", "delete", "--tenant", "acme", &id, "--force"]).await;
    assert_eq!(forced["state"], "deleted", "{forced}");
    let listed = bcctl(&env, &["orphans", "list", "--resource", &id]).await;
    let orphans = listed["orphans"].as_array().unwrap();
    assert_eq!(orphans.len(), 1, "{listed}");
    assert_eq!(
        (orphans[0]["kind"].as_str(), orphans[0]["name"].as_str()),
        (Some("cluster"), Some(gke_name(&id).as_str()))
    );
}
