//! `bcctl loadbalancers ...` as a user runs it: create with `--wait` follows the load balancer until
//! it is ready, update and delete likewise, list and get print it.

use std::process::Command;

use serde_json::Value;

use super::{Env, POOL, REGION};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

async fn bcctl(env: &Env, args: &[&str]) -> Value {
    let mut command = Command::new(BC);
    command.env("BC_ENDPOINT", &env.server.endpoint).env("BC_TOKEN", &env.acme_admin).args(["-o", "json"]).args(args);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    assert!(
        output.status.success(),
        "bcctl {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_loadbalancers_create_update_and_delete_with_wait() {
    let mut env = super::start(Backend::Sqlite).await;
    env.start_worker();
    let web = env.instance("acme", POOL, REGION, None).await;
    let created = bcctl(
        &env,
        &[
            "loadbalancers",
            "create",
            "--tenant",
            "acme",
            "--pool",
            POOL,
            "--name",
            "cli",
            "--region",
            REGION,
            "--instance",
            &web.id,
            "--forward",
            "http:80:http:8080",
            "--health-check",
            "http:8080/healthz,interval=20",
            "--sticky",
            "LB:300",
            "--allow",
            "198.51.100.0/24",
            "--wait",
        ],
    )
    .await;
    assert_eq!(created["state"], "ready", "--wait follows it until it is ready: {created}");
    assert!(!created["address"].as_str().unwrap().is_empty());
    assert_eq!(created["healthCheck"]["intervalSeconds"], 20);
    let id = created["id"].as_str().unwrap().to_owned();
    let listed = bcctl(&env, &["loadbalancers", "list", "--tenant", "acme"]).await;
    assert_eq!(listed["loadBalancers"][0]["id"], id.as_str());
    let updated = bcctl(
        &env,
        &[
            "loadbalancers",
            "update",
            "--tenant",
            "acme",
            &id,
            "--forward",
            "tcp:22:tcp:2222",
            "--clear-sticky-sessions",
            "--wait",
        ],
    )
    .await;
    assert_eq!((updated["state"].as_str(), updated["version"].as_i64()), (Some("ready"), Some(2)));
    assert_eq!(updated["forwarding"][0]["entryProtocol"], "tcp");
    let fake = env.fake_load_balancer(updated["providerName"].as_str().unwrap()).unwrap();
    assert_eq!(fake["stickySessions"]["type"], "none");
    let got = bcctl(&env, &["loadbalancers", "get", "--tenant", "acme", &id]).await;
    assert_eq!(got["id"], id.as_str());
    let deleted = bcctl(&env, &["loadbalancers", "delete", "--tenant", "acme", &id, "--wait"]).await;
    assert_eq!(deleted["state"], "deleted");
}
