//! Adopting a tenant's cluster: the substrate of a pool on the tenant's own account adds its
//! flavors' node pools and objects to the tenant's cluster made through the clusters API (a
//! platform pool may not adopt it: see the hostile suite), never takes over an object it did not make (a
//! namespace and DaemonSet made beforehand with kubectl put it in `error`, untouched), and its
//! teardown removes only what carries its pool's label: the cluster, the tenant's node pool and
//! the kubectl-made objects are all still there afterwards, and so is the substrate's own
//! namespace when the tenant put a DaemonSet of its own there (the teardown's event says so). kubectl sees the DaemonSet it
//! applied, with its labels and its managed fields.

use std::process::Command;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::flavor;
use crate::harness::{Catalog, Env, poll};

crate::on_both_backends!(an_adopted_cluster_keeps_everything_the_substrate_did_not_make);

/// acme's own GKE account, and the pool on it the tenant's cluster is made on.
const TENANT_ACCOUNT: &str = "acct_0000000000000000000000gke2";
const TENANT_POOL: &str = "pool_0000000000000000000000gke1";

/// A pool on acme's own account whose substrate adopts `cluster` with `flavors`; its id.
async fn tenant_substrate_pool(env: &Env, name: &str, cluster: &Value, flavors: Vec<Value>) -> String {
    let policy = json!({"substrate": {"kind": "kubernetes", "account": TENANT_ACCOUNT, "cluster": cluster,
        "flavors": flavors}});
    let body = json!({"accountId": TENANT_ACCOUNT, "name": name, "billingMode": "none", "policy": policy});
    env.server.admin_ok("/api/platform/pools/create", body).await["id"].as_str().unwrap().to_owned()
}

fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::task::block_in_place(|| {
        Command::new("kubectl").arg("--kubeconfig").arg(kubeconfig).args(args).output().expect("kubectl is installed")
    })
}

fn kubectl_ok(kubeconfig: &std::path::Path, args: &[&str]) -> String {
    let out = kubectl(kubeconfig, args);
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fake_cluster(env: &Env, name: &str) -> Value {
    env.fake_gke_clusters().into_iter().find(|c| c["name"] == name).expect("the cluster is at the fake cloud")
}

fn pool_names(cluster: &Value) -> Vec<String> {
    cluster["nodePools"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect()
}

/// `kubectl create -f -` of `manifest`.
fn kubectl_create(kubeconfig: &std::path::Path, manifest: &Value) {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["create", "--validate=false", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl is installed");
    child.stdin.take().unwrap().write_all(manifest.to_string().as_bytes()).unwrap();
    let out = tokio::task::block_in_place(|| child.wait_with_output()).unwrap();
    assert!(out.status.success(), "kubectl create: {}", String::from_utf8_lossy(&out.stderr));
}

/// The namespace a substrate of `pool` applies its objects in.
fn substrate_namespace(pool: &str) -> String {
    let body = &pool["pool_".len()..];
    format!("bc-substrate-{}", &body[..10])
}

/// A DaemonSet of someone else's, named as a substrate's would be.
fn foreign_daemon_set(namespace: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "bcd-general", "namespace": namespace, "labels": {"team": "ops"}},
        "spec": {"selector": {"matchLabels": {"app": "theirs"}},
                 "template": {"metadata": {"labels": {"app": "theirs"}},
                              "spec": {"containers": [{"name": "theirs", "image": "busybox"}]}}},
    })
}

async fn an_adopted_cluster_keeps_everything_the_substrate_did_not_make(backend: Backend) {
    let catalog = Catalog::new().gke_account(TENANT_ACCOUNT, Some("acme"), &[super::ZONE]).pool(
        TENANT_POOL,
        TENANT_ACCOUNT,
        "none",
        &[],
    );
    let mut env = super::setup_with(backend, catalog).start().await;
    env.start_worker();

    // The tenant's cluster, with its own node pool, and an admin kubeconfig of it.
    let request = json!({
        "tenantId": "acme", "poolId": TENANT_POOL, "name": "shared", "mode": "standard", "location": super::ZONE,
        "idempotencyKey": "shared",
        "nodePools": [{"name": "apps", "machineType": "e2-standard-4", "nodeCount": 1}],
    });
    let cluster = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = cluster["id"].as_str().unwrap().to_owned();
    let ready = env.wait_state("kubernetesClusters", "clusterId", &id, "ready").await;
    let name = ready["providerName"].as_str().unwrap().to_owned();
    let issued = env
        .ok(
            "/api/compute/kubernetesClusters/credentials",
            json!({"tenantId": "acme", "clusterId": id, "role": "admin"}),
        )
        .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("admin");
    std::fs::write(&kubeconfig, issued["kubeconfig"].as_str().unwrap()).unwrap();
    let adopt = json!({"adopt": {"name": name, "location": super::ZONE}});

    // A substrate whose namespace and DaemonSet someone made first with kubectl: it fails on
    // the first, naming it, and changes neither.
    env.stop_worker().await;
    let blocked = tenant_substrate_pool(&env, "blocked", &adopt, vec![flavor("general", "e2-medium", 1)]).await;
    let namespace = substrate_namespace(&blocked);
    kubectl_create(&kubeconfig, &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}));
    kubectl_create(&kubeconfig, &foreign_daemon_set(&namespace));
    env.start_worker();
    let failed = env.substrate_until(&blocked, "in error", |s| s["state"] == "error").await;
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains(&format!("Namespace \"{namespace}\"")) && message.contains("left untouched"), "{failed}");
    assert!(env.substrate_events(&blocked).await.iter().any(|e| e == "kubernetes.substrate.error"));
    let before = kubectl_ok(&kubeconfig, &["get", "namespace", &namespace, "-o", "json"]);
    assert!(!before.contains("better-compute.dev/substrate-pool"), "not labelled: {before}");

    // Two more substrates on the same cluster converge beside the tenant's pool.
    let joined = tenant_substrate_pool(&env, "joined", &adopt, vec![flavor("general", "e2-medium", 2)]).await;
    let clean = tenant_substrate_pool(&env, "clean", &adopt, vec![flavor("small", "e2-medium", 1)]).await;
    let substrate = env
        .substrate_until(&joined, "ready with its nodes", |s| {
            s["state"] == "ready" && s["flavors"][0]["joinedNodes"] == 2
        })
        .await;
    assert_eq!(substrate["mode"], "adopt");
    let daemon_set = kubectl_ok(
        &kubeconfig,
        &["get", "ds", "-n", &substrate_namespace(&joined), "bcd-general", "-o", "yaml", "--show-managed-fields"],
    );
    assert!(daemon_set.contains(&format!("better-compute.dev/substrate-pool: {joined}")), "{daemon_set}");
    assert!(daemon_set.contains("manager: better-compute") && daemon_set.contains("operation: Apply"), "{daemon_set}");
    assert!(daemon_set.contains("fieldsV1"), "{daemon_set}");
    env.substrate_until(&clean, "ready", |s| s["state"] == "ready").await;

    // The tenant adds a DaemonSet of its own to the substrate's namespace with kubectl.
    let joined_namespace = substrate_namespace(&joined);
    let mut tenants_own = foreign_daemon_set(&joined_namespace);
    tenants_own["metadata"]["name"] = json!("tenant-agent");
    kubectl_create(&kubeconfig, &tenants_own);

    // All torn down: only what they made goes.
    for pool in [&blocked, &joined, &clean] {
        env.archive_pool(pool).await;
    }
    for pool in [&blocked, &joined, &clean] {
        env.substrate_until(pool, "deleted", |s| s["state"] == "deleted").await;
    }
    let cluster = fake_cluster(&env, &name);
    assert_eq!(pool_names(&cluster), ["apps"], "the tenant's node pool alone is left: {cluster}");
    kubectl_ok(&kubeconfig, &["get", "namespace", &namespace]);
    kubectl_ok(&kubeconfig, &["get", "ds", "-n", &namespace, "bcd-general"]);
    // The namespace holding the tenant's DaemonSet is left, with it, and the teardown says so;
    // what the substrate made in it is gone.
    kubectl_ok(&kubeconfig, &["get", "ds", "-n", &joined_namespace, "tenant-agent"]);
    let ours = kubectl(&kubeconfig, &["get", "ds", "-n", &joined_namespace, "bcd-general"]);
    assert!(!ours.status.success(), "the substrate's DaemonSet is gone");
    let filter = better_compute::store::EventFilter { limit: 10_000, ..Default::default() };
    let deleted = env
        .store
        .event_list_after(&filter)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.subject == joined && e.event_type == "kubernetes.substrate.deleted");
    let said = deleted.expect("the teardown's event").data["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        said.contains(&format!("namespace \"{joined_namespace}\" was left")) && said.contains("DaemonSet tenant-agent"),
        "{said}"
    );
    // A namespace with nothing but what the substrate made goes with it.
    let theirs = kubectl(&kubeconfig, &["get", "namespace", &substrate_namespace(&clean)]);
    assert!(!theirs.status.success(), "the substrate's own namespace is gone");
    let tenants = env.wait_state("kubernetesClusters", "clusterId", &id, "ready").await;
    assert_eq!(tenants["nodePools"].as_array().unwrap().len(), 1, "{tenants}");
    poll(super::CONVERGE, "no node of the substrates left ready", || async {
        let left = env.pool_nodes(&joined, "ready").await.len() + env.pool_nodes(&clean, "ready").await.len();
        if left == 0 { Ok(()) } else { Err(format!("{left} ready")) }
    })
    .await;
    env.stop_worker().await;
}
