//! `bcctl` as an operator runs it for substrates: `bcctl pools create --policy-file` with a YAML
//! substrate, `bcctl substrates list|get` reading it back (a table with one line per flavor, or
//! JSON), and a bad file refused before anything is sent.

use std::process::Command;

use better_compute::store::Backend;
use serde_json::Value;

use super::{GKE_ACCOUNT, ZONE, setup};
use crate::harness::Env;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

async fn bcctl(env: &Env, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(BC);
    command.env("BC_ENDPOINT", &env.server.endpoint).env("BC_TOKEN", &env.server.admin_token).args(args);
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

async fn bc_ok(env: &Env, args: &[&str]) -> String {
    let output = bcctl(env, args).await;
    assert!(output.status.success(), "bcctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_substrate_from_a_yaml_file_is_read_back_by_bc_substrates() {
    let env = setup(Backend::Sqlite).start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("substrate.yaml");
    std::fs::write(
        &file,
        format!(
            "kind: kubernetes\naccount: {GKE_ACCOUNT}\ncluster: {{create: {{location: {ZONE}, releaseChannel: regular}}}}\n\
             flavors:\n- {{name: general, machineType: e2-standard-4, nodeCount: 2}}\n\
             - {{name: l4, machineType: g2-standard-8, autoscaling: {{min: 0, max: 4}}, accelerators: {{type: nvidia-l4, count: 1}}}}\n"
        ),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let made = bc_ok(
        &env,
        &[
            "-o",
            "json",
            "pools",
            "create",
            "--account",
            GKE_ACCOUNT,
            "--name",
            "gpu",
            "--billing-mode",
            "none",
            "--policy-file",
            path,
        ],
    )
    .await;
    let pool: Value = serde_json::from_str(&made).unwrap();
    let pool = pool["id"].as_str().unwrap();

    let table = bc_ok(&env, &["substrates", "get", "--pool", pool]).await;
    let body = &pool["pool_".len()..];
    assert!(table.contains("pending") && table.contains(&format!("bc-s-{}", &body[..24])), "{table}");
    let line = table.lines().find(|l| l.starts_with("l4 ")).unwrap_or_else(|| panic!("a line per flavor: {table}"));
    assert!(line.contains(&format!("bc-{}-l4", &body[..10])), "{line}");
    let listed: Value =
        serde_json::from_str(&bc_ok(&env, &["-o", "json", "substrates", "list", "--pool", pool]).await).unwrap();
    assert_eq!(listed["substrates"][0]["flavors"][1]["name"], "l4", "{listed}");

    std::fs::write(&file, "flavors: [unclosed").unwrap();
    let refused = bcctl(&env, &["pools", "update", pool, "--policy-file", path]).await;
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--policy-file") && said.contains("not YAML or JSON"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcctl_substrates_get_wait_follows_the_substrate_until_it_is_ready_then_deleted() {
    let mut env = setup(Backend::Sqlite).start().await;
    env.start_worker();
    let create = serde_json::json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let pool = env
        .substrate_pool("waited", super::substrate_policy(create, vec![super::flavor("general", "e2-medium", 1)]))
        .await;

    let output = bcctl(&env, &["-o", "json", "substrates", "get", "--pool", &pool, "--wait"]).await;
    let progress = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{progress}");
    let ready: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(ready["state"], "ready", "{ready}");
    assert!(progress.lines().any(|l| l.contains("provisioning")), "each new state on stderr: {progress}");

    env.archive_pool(&pool).await;
    env.substrate_until(&pool, "on its way out", |s| s["state"] == "deleting" || s["state"] == "deleted").await;
    let output = bcctl(&env, &["-o", "json", "substrates", "get", "--pool", &pool, "--wait"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let gone: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(gone["state"], "deleted", "a substrate being torn down is followed until it is gone: {gone}");
    env.stop_worker().await;
}
