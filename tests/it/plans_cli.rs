//! `bcctl ... --dry-run` as a user runs it: the kind's plan of the change the command would send,
//! printed like a diff that fits the terminal, with nothing changed; a refused one fails the
//! command naming the field, as the real call would.

use std::process::{Command, Output};
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::Env;
use crate::kubernetes::standard;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl` as acme's admin in a terminal `columns` wide.
async fn bcctl(env: &Env, columns: usize, args: &[&str]) -> Output {
    let mut command = Command::new(BC);
    command
        .env("BC_ENDPOINT", &env.server.endpoint)
        .env("BC_TOKEN", &env.acme_admin)
        .env("COLUMNS", columns.to_string())
        .args(args);
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// Its standard output; panics unless it succeeded.
fn succeeded(args: &[&str], output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "bcctl {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

/// A ready standard cluster of acme with pools `general` (e2-standard-4) and `batch`; its id and
/// the ids of its pools by name.
async fn ready_cluster(env: &Env, name: &str) -> (String, Value) {
    let created = env.ok("/api/compute/kubernetesClusters/create", standard(name, name)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(30)).await;
    let pools = ready["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["id"].clone()));
    (id, pools.collect::<serde_json::Map<_, _>>().into())
}

async fn pool(env: &Env, cluster: &str, pool: &str) -> Value {
    env.ok(
        "/api/compute/kubernetesNodePools/get",
        json!({"tenantId": "acme", "clusterId": cluster, "nodePoolId": pool}),
    )
    .await
}

fn widest(text: &str) -> usize {
    text.lines().map(|line| line.chars().count()).max().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_of_a_machine_type_change_prints_the_rolling_plan_and_changes_nothing() {
    let mut env = crate::kubernetes::start(Backend::Sqlite).await;
    env.start_worker();
    let (cluster, pools) = ready_cluster(&env, "dryrun").await;
    let general = pools["general"].as_str().unwrap();
    let before = pool(&env, &cluster, general).await;

    let update = ["nodepools", "update", "--tenant", "acme", "--cluster", &cluster, general];
    let args = [&update[..], &["--machine-type", "e2-standard-8", "--dry-run"]].concat();
    for columns in [80, 120] {
        let text = succeeded(&args, &bcctl(&env, columns, &args).await);
        print!("bcctl {} --dry-run in {columns} columns:\n{text}", update.join(" "));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "plan: rolling — nothing was changed", "{text}");
        assert!(lines[1].starts_with(r#"~ machineType: "e2-standard-4" -> "e2-standard-8""#), "{text}");
        assert!(text.contains("(rolling: "), "the change says what the provider does: {text}");
        assert!(text.contains("\nprovider objects:\n  update gke node pool "), "{text}");
        assert!(text.lines().any(|line| line.starts_with("! ")), "what users notice: {text}");
        assert!(widest(&text) <= columns, "the plan is {} columns wide:\n{text}", widest(&text));
    }
    let json_args = [&["-o", "json"], &args[..]].concat();
    let plan: Value = serde_json::from_str(&succeeded(&json_args, &bcctl(&env, 120, &json_args).await)).unwrap();
    assert_eq!(plan["effect"], "rolling", "{plan}");
    assert_eq!(plan["changes"][0]["field"], "machineType", "{plan}");

    let after = pool(&env, &cluster, general).await;
    assert_eq!(
        (after["version"].clone(), after["machineType"].clone()),
        (before["version"].clone(), json!("e2-standard-4"))
    );
    assert_eq!(after["state"], "ready", "{after}");

    // Refused as the real update would be (a zone outside the cluster's region): the plan
    // names the field, the command fails, and still nothing changed.
    let refused = [&update[..], &["--zone", "us-central1-a", "--dry-run"]].concat();
    let output = bcctl(&env, 80, &refused).await;
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    print!("a refused dry run:\n{stdout}{stderr}");
    assert!(!output.status.success(), "a refused dry run fails:\n{stdout}");
    assert!(stdout.starts_with("plan: refused — nothing was changed\n"), "{stdout}");
    assert!(stdout.contains("\nx zones[0]: \"us-central1-a\" is not a zone of the cluster's region"), "{stdout}");
    assert!(stderr.contains("would be refused (zones[0]: "), "so does the error: {stderr}");
    assert!(widest(&stdout) <= 80, "{stdout}");
    // A value the API's schema refuses fails the plan call itself, naming the field the same.
    let malformed = [&update[..], &["--machine-type", "Bad Type", "--dry-run"]].concat();
    let output = bcctl(&env, 80, &malformed).await;
    assert!(!output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("machineType: must match"), "{output:?}");
    assert_eq!(pool(&env, &cluster, general).await["version"], before["version"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_of_a_delete_prints_the_provider_objects_and_the_resource_stays() {
    let mut env = crate::kubernetes::start(Backend::Sqlite).await;
    env.start_worker();
    let (cluster, pools) = ready_cluster(&env, "drydelete").await;
    let batch = pools["batch"].as_str().unwrap();

    let args = ["nodepools", "delete", "--tenant", "acme", "--cluster", &cluster, batch, "--dry-run"];
    let text = succeeded(&args, &bcctl(&env, 80, &args).await);
    print!("bcctl nodepools delete --dry-run:\n{text}");
    assert!(text.starts_with("plan: delete — nothing was changed\n"), "{text}");
    assert!(text.contains("\nprovider objects:\n  delete gke node pool ") && text.contains("/batch\n"), "{text}");

    let args = ["clusters", "delete", "--tenant", "acme", &cluster, "--dry-run"];
    let text = succeeded(&args, &bcctl(&env, 80, &args).await);
    print!("bcctl clusters delete --dry-run:\n{text}");
    assert!(text.starts_with("plan: delete — nothing was changed\n"), "{text}");
    let objects: Vec<&str> =
        text.lines().skip_while(|l| *l != "provider objects:").skip(1).take_while(|l| l.starts_with("  ")).collect();
    assert!(objects.iter().any(|o| o.starts_with("  delete gke cluster ")), "{text}");
    assert!(objects.iter().filter(|o| o.starts_with("  delete gke node pool ")).count() == 2, "both pools go: {text}");
    assert!(widest(&text) <= 80, "{text}");

    let still = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": cluster})).await;
    assert_eq!(
        (still["state"].as_str(), still["nodePools"].as_array().map(Vec::len)),
        (Some("ready"), Some(2)),
        "{still}"
    );
    assert_eq!(pool(&env, &cluster, batch).await["state"], "ready");
}
