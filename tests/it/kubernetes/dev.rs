//! Under `bcctl dev`, as a user runs it with the `bcctl` CLI: a standard cluster with two node pools
//! reaches `ready` within 10 seconds, `kubectl --kubeconfig <issued> get nodes` lists its
//! nodes, and the issued token appears in no log line of the process.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{System, run_ok};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl` as acme against `bcctl dev`; panics unless it succeeds.
fn bcctl(dev: &Value, args: &[&str]) -> std::process::Output {
    run_ok(
        Command::new(BC)
            .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
            .env("BC_TOKEN", dev["tenants"][0]["token"].as_str().unwrap())
            .args(args),
    )
}

#[test]
fn under_bc_dev_a_standard_cluster_is_ready_within_ten_seconds_and_kubectl_lists_its_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("bc-dev.log");
    let (running, dev) = System::on(Backend::Sqlite).logging("info", &log_path).dev(dir.path());
    assert_eq!(dev["tenants"][0]["id"], "acme");
    let pool = dev["pools"]["gke"].as_str().unwrap();

    let started = Instant::now();
    let created = bcctl(
        &dev,
        &[
            "-o",
            "json",
            "clusters",
            "create",
            "--tenant",
            "acme",
            "--pool",
            pool,
            "--name",
            "demo",
            "--location",
            "us-central1",
            "--node-pool",
            "name=general,machine-type=e2-standard-4,count=2",
            "--node-pool",
            "name=batch,machine-type=e2-standard-8,count=1,min=1,max=3,zones=us-central1-b",
            "--wait",
        ],
    );
    let took = started.elapsed();
    let cluster: Value = serde_json::from_slice(&created.stdout).unwrap();
    println!("bcctl dev: a standard cluster with two node pools was ready in {took:?} (bcctl clusters create --wait)");
    assert_eq!(cluster["state"], "ready", "{cluster}");
    assert!(took < Duration::from_secs(10), "ready in {took:?}");
    let progress = String::from_utf8_lossy(&created.stderr);
    assert!(progress.contains("ready"), "--wait shows progress: {progress}");

    let id = cluster["id"].as_str().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    bcctl(
        &dev,
        &[
            "clusters",
            "credentials",
            "--tenant",
            "acme",
            id,
            "--role",
            "admin",
            "--kubeconfig-file",
            kubeconfig.to_str().unwrap(),
        ],
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&kubeconfig).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let nodes = Command::new("kubectl").arg("--kubeconfig").arg(&kubeconfig).args(["get", "nodes"]).output().unwrap();
    let listing = String::from_utf8_lossy(&nodes.stdout);
    assert!(nodes.status.success(), "kubectl: {}", String::from_utf8_lossy(&nodes.stderr));
    assert_eq!(listing.lines().filter(|line| line.contains("Ready")).count(), 3, "{listing}");

    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let config: Value = serde_yaml::from_str(&text).unwrap();
    let token = config["users"][0]["user"]["token"].as_str().unwrap().to_owned();
    bcctl(&dev, &["clusters", "delete", "--tenant", "acme", id, "--wait"]);
    assert!(running.terminate().success());
    let logs = std::fs::read_to_string(&log_path).unwrap();
    assert!(logs.contains("credentials issued"), "the log has the issue, without the token");
    assert!(!logs.contains(&token), "the token is in bcctl dev's log");
}
