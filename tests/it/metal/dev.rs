//! End to end on `bcctl dev` through the CLI: a fake machine from dev.json's `bmcs` is enrolled in
//! `pools.metal` and taken through inspect, commission, deploy (its bcd joins), rescue and back,
//! release and retire, each with `--wait`; the password goes in by file and is in no output.

use std::process::Command;

use serde_json::Value;

use crate::harness::{System, run_ok};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

#[test]
fn bc_dev_takes_a_fake_machine_through_every_verb_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let pool = file["pools"]["metal"].as_str().expect("dev.json has pools.metal").to_owned();
    let bmc = &file["bmcs"][0];
    let password = bmc["password"].as_str().unwrap();
    let password_file = dir.path().join("bmc-password");
    std::fs::write(&password_file, format!("{password}\n")).unwrap();
    let bcctl = |args: &[&str]| -> (Value, String) {
        let mut command = Command::new(BC);
        command
            .env("BC_ENDPOINT", file["endpoint"].as_str().unwrap())
            .env("BC_TOKEN", file["adminToken"].as_str().unwrap())
            .args(["-o", "json"])
            .args(args);
        let output = run_ok(&mut command);
        let stdout = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(!stdout.contains(password) && !stderr.contains(password), "{args:?} printed the password");
        (serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}")), stderr)
    };
    let (machine, progress) = bcctl(&[
        "metal",
        "enroll",
        "--pool",
        &pool,
        "--name",
        "rack1-1",
        "--driver",
        "redfish",
        "--address",
        bmc["address"].as_str().unwrap(),
        "--username",
        bmc["username"].as_str().unwrap(),
        "--password-file",
        password_file.to_str().unwrap(),
        "--ca-certificate-file",
        file["fakecloudTls"]["caFile"].as_str().unwrap(),
        "--wait",
    ]);
    assert_eq!(machine["provisionState"], "manageable", "{machine}");
    assert!(progress.contains("enrolling -> manageable"), "--wait shows the change: {progress}");
    let node = machine["id"].as_str().unwrap().to_owned();
    let verb = |args: &[&str], state: &str| -> Value {
        let mut full = vec!["metal"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--pool", &pool, &node, "--wait"]);
        let (machine, progress) = bcctl(&full);
        assert_eq!(machine["provisionState"], state, "{args:?}: {machine}\n{progress}");
        machine
    };
    let inspected = verb(&["inspect"], "manageable");
    assert_eq!(inspected["inventory"]["cpus"], 8, "{inspected}");
    verb(&["commission"], "ready");
    // The pool's policy names the default image.
    let deployed = verb(&["deploy"], "deployed");
    assert!(deployed["image"].as_str().unwrap().ends_with(".iso"), "{deployed}");
    let (nodes, _) = bcctl(&["nodes", "get", "--pool", &pool, &node]);
    assert_eq!((nodes["state"].as_str(), nodes["hostname"].as_str()), (Some("ready"), Some("metal-1")), "{nodes}");
    verb(&["rescue"], "rescue");
    verb(&["rescue", "--exit"], "deployed");
    verb(&["release"], "ready");
    let retired = verb(&["retire"], "retired");
    assert_eq!(retired["credentialsSet"], false, "{retired}");
}
