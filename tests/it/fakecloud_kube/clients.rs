//! The fake cloud as the official clients see it: Kubernetes' Python client reads every kind a
//! fake cluster serves into its models (which refuse an object missing a required field) and
//! server-side applies; DigitalOcean's pydo, which sends its token over HTTPS only, lists and
//! creates against the fake cloud's HTTPS address trusting its CA; and an account's adapter
//! trusts that CA once the process is told to; `bcctl dev` says where the HTTPS address and its CA
//! are.

use std::process::Command;

use better_compute::provider::Instances;
use better_compute::provider::accounts::{digitalocean_for, trust_root};
use serde_json::{Value, json};

use super::{DS_PATH, Kube, daemonset, labelled};
use crate::harness::adapters::cloud;
use crate::harness::{System, curl, poll, python, run_ok};
use better_compute::store::Backend;

fn script(name: &str) -> String {
    format!("{}/tests/python/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs a Python script (blocking: the fake cloud is served by the runtime's other thread) and
/// reads the JSON it prints.
fn run_python(args: &[&str]) -> Value {
    let output = tokio::task::block_in_place(|| run_ok(Command::new(python()).args(args)));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_kubernetes_client_reads_every_kind_and_server_side_applies() {
    let cloud = cloud().await;
    let kube = Kube::cluster(&cloud, "bc-k-python", 2).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kube.admin_kubeconfig(&cloud, dir.path()).await;

    kube.applied("/api/v1/namespaces/bc-system", labelled("Namespace", "v1", "bc-system", None)).await;
    let mut secret = labelled("Secret", "v1", "bcd-join", Some("bc-system"));
    secret["stringData"] = json!({"token": "bcjt_nobody.none"});
    kube.applied("/api/v1/namespaces/bc-system/secrets/bcd-join", secret).await;
    // Nobody answers at this endpoint: the pods back off, as real ones would.
    kube.applied(DS_PATH, daemonset("example.com/bcd:1", "http://127.0.0.1:9")).await;
    poll(std::time::Duration::from_secs(10), "two pods", || async {
        let pods = kube.get("/api/v1/namespaces/bc-system/pods").await;
        if pods["items"].as_array().map_or(0, Vec::len) == 2 { Ok(()) } else { Err(pods.to_string()) }
    })
    .await;

    let config = config.to_str().unwrap();
    let seen = run_python(&[&script("fakecloud_kubernetes.py"), config, "bc-system", "bcd-general"]);
    let nodes = ["gke-bc-k-python-general-0000", "gke-bc-k-python-general-0001", "gke-bc-k-python-other-0000"];
    assert_eq!(seen["nodes"], json!(nodes), "{seen}");
    assert_eq!(seen["cpus"], json!(["4", "4", "4"]), "e2-standard-4: {seen}");
    assert_eq!(seen["bootIds"].as_array().unwrap().len(), 3);
    assert_eq!(seen["namespaces"], json!(["bc-system", "default", "kube-node-lease", "kube-public", "kube-system"]));
    assert_eq!(seen["namespacePhases"], json!(["Active"]));
    assert_eq!(seen["secrets"], json!(["bcd-join"]));
    assert_eq!(seen["serviceAccounts"], json!(["bc-admin"]));
    assert_eq!(seen["pods"], json!(&nodes[..2]), "one pod per selected node: {seen}");
    assert_eq!(seen["podOwners"], json!(["DaemonSet"]));
    assert_eq!(seen["daemonSets"], json!(["bcd-general"]));
    assert_eq!(seen["clusterRoleBindings"], json!(["cluster-admin"]));
    assert_eq!(seen["desired"], 2);
    assert_eq!(seen["applied"], json!({"generation": 1, "managers": [["python-client", "Apply"]]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pydo_refuses_plain_http_and_works_over_https_trusting_the_fake_clouds_ca() {
    let cloud = cloud().await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("fakecloud-ca.pem");
    std::fs::write(&ca_file, cloud.ca_pem()).unwrap();
    let token = fakecloud::FakeCloudConfig::default().digitalocean_token;
    let seen = run_python(&[
        &script("fakecloud_pydo.py"),
        cloud.https_url(),
        cloud.base_url(),
        &token,
        ca_file.to_str().unwrap(),
    ]);
    assert_ne!(seen["plainHttp"], "sent", "pydo sends no token over http: {seen}");
    assert_eq!((seen["vpc"].as_str(), seen["droplet"].as_str()), (Some("pydo-vpc"), Some("pydo-1")), "{seen}");
    assert_eq!(seen["droplets"], json!(["pydo-1"]));
    assert_eq!(seen["vpcs"], json!(["pydo-vpc"]));
}

#[tokio::test]
async fn an_accounts_adapter_trusts_the_fake_clouds_ca_once_the_process_does() {
    let cloud = cloud().await;
    let token = fakecloud::FakeCloudConfig::default().digitalocean_token;
    let untrusted = digitalocean_for(cloud.https_url(), &token).unwrap().instance_list("any").await;
    assert!(untrusted.is_err(), "a CA of the fake cloud's own is not a public root");
    trust_root(cloud.ca_pem()).unwrap();
    assert!(trust_root("not a certificate").is_err());
    let trusted = digitalocean_for(cloud.https_url(), &token).unwrap();
    assert!(trusted.instance_list("any").await.unwrap().is_empty());
}

#[test]
fn bc_dev_writes_the_fake_clouds_https_address_and_ca_file_to_dev_json() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let tls = &file["fakecloudTls"];
    let (url, ca_file) = (tls["url"].as_str().unwrap(), tls["caFile"].as_str().unwrap());
    assert!(url.starts_with("https://127.0.0.1:"), "{file}");
    let token = format!("authorization: Bearer {}", fakecloud::FakeCloudConfig::default().digitalocean_token);
    let listed = curl(&["-sS", "--cacert", ca_file, "-H", &token, &format!("{url}/v2/droplets")]);
    assert!(listed.contains("\"droplets\""), "curl trusting the CA file lists droplets: {listed}");
}
