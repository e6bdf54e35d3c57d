//! `--wait` as a newcomer uses it: the final output shows the state waited for; `get --wait`
//! follows an object that exists already; what the provider refuses reaches the user; a flag
//! that would not hold is refused naming the flags that would.

use better_compute::store::Backend;
use serde_json::Value;

use super::{bcctl, failed, succeeded};
use crate::harness::System;

/// A cluster of acme named `name` with pool `general` (autoscaling 1 to 3) made by `bcctl`,
/// without waiting; its id.
pub fn create_cluster(dev: &Value, name: &str, machine_type: &str) -> (String, std::process::Output) {
    let pool = dev["pools"]["gke"].as_str().unwrap();
    let node_pool = format!("name=general,machine-type={machine_type},count=1,min=1,max=3");
    let args = ["-o", "json", "clusters", "create", "--tenant", "acme", "--pool", pool, "--name", name];
    let args = [&args[..], &["--location", "us-central1", "--node-pool", &node_pool]].concat();
    let made: Value = serde_json::from_str(&succeeded(&args, &bcctl(dev, 120, &args))).unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    let waited = bcctl(dev, 120, &["-o", "json", "clusters", "get", "--tenant", "acme", &id, "--wait"]);
    (id, waited)
}

#[test]
fn wait_shows_the_state_it_waited_for_and_get_waits_on_an_existing_object() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let (cluster, waited) = create_cluster(&dev, "web", "e2-standard-4");
    let ready: Value = serde_json::from_str(&succeeded(&["clusters", "get", "--wait"], &waited)).unwrap();
    assert_eq!(ready["state"], "ready", "get --wait prints the cluster once ready: {ready}");
    let general = ready["nodePools"][0]["id"].as_str().unwrap().to_owned();

    let update = ["nodepools", "update", "--tenant", "acme", "--cluster", &cluster, &general];
    let args = [&update[..], &["--machine-type", "e2-standard-8", "--wait"]].concat();
    let output = bcctl(&dev, 120, &args);
    let (table, progress) = (succeeded(&args, &output), String::from_utf8_lossy(&output.stderr).into_owned());
    print!("bcctl {}:\n{progress}{table}", args.join(" "));
    assert!(progress.lines().last().unwrap().contains("ready"), "{progress}");
    let row = table.lines().nth(1).unwrap();
    assert!(row.contains(" ready ") && !table.contains("updating"), "the final table is the pool ready: {table}");
    assert!(row.contains("e2-standard-8"), "{table}");

    let get = ["-o", "json", "nodepools", "get", "--tenant", "acme", "--cluster", &cluster, &general, "--wait"];
    let pool: Value = serde_json::from_str(&succeeded(&get, &bcctl(&dev, 120, &get))).unwrap();
    assert_eq!((pool["state"].as_str(), pool["machineType"].as_str()), (Some("ready"), Some("e2-standard-8")));

    // `--count` alone on an autoscaling pool would not hold: refused, naming the flags.
    let count = [&update[..], &["--count", "3"]].concat();
    let said = failed(&count, &bcctl(&dev, 120, &count));
    assert!(said.contains("autoscales between 1 and 3 nodes") && said.contains("--no-autoscaling"), "{said}");
    assert!(said.contains("--autoscaling MIN:MAX"), "{said}");
    let fixed = [&count[..], &["--no-autoscaling", "--wait"]].concat();
    let table = succeeded(&fixed, &bcctl(&dev, 120, &fixed));
    assert!(table.lines().nth(1).unwrap().contains(" ready "), "{table}");
}
