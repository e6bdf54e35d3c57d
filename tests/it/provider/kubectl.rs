//! kubectl 1.32 against a fake cluster's API server, with kubeconfigs minted through the
//! adapters: view may read but not apply, cluster-admin may apply and list nodes.

use std::process::Command;

use better_compute::provider::kube::{KubeAuth, KubeClient, kubeconfig};
use better_compute::provider::{
    ClusterApi, ClusterRole, ClusterSpec, ErrorKind, Force, ManagedKubernetes, NodePoolSpec,
};
use serde_json::json;

use super::{cloud, gke, wait};

const DAEMONSET: &str = r#"{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"bcd","namespace":"default"},
"spec":{"selector":{"matchLabels":{"app":"bcd"}},"template":{"metadata":{"labels":{"app":"bcd"}},
"spec":{"containers":[{"name":"bcd","image":"example.com/bcd:1"}]}}}}"#;

fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    // kubectl blocks; the fake cluster it calls is served by the other worker threads.
    tokio::task::block_in_place(|| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output()
            .expect("kubectl must be installed (CI installs kubectl 1.32); it is not on PATH")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_nodes_and_applies_only_with_the_right_role() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let spec = ClusterSpec {
        name: "bc-k-kubectl".into(),
        node_pools: vec![NodePoolSpec { name: "pool-a".into(), node_count: 2, ..Default::default() }],
        ..Default::default()
    };
    wait(&gke, &gke.cluster_create(&spec).await.unwrap()).await.outcome().unwrap();
    let cluster = gke.cluster_get("bc-k-kubectl").await.unwrap();

    // The adapter's Google identity administers the cluster, as on GKE.
    let admin_api =
        KubeClient::new(&cluster.endpoint, &cluster.ca_certificate_pem, KubeAuth::Google(gke.tokens().clone()))
            .unwrap();
    assert_eq!(admin_api.nodes_list().await.unwrap().len(), 2);
    for (name, role) in [("bc-viewer", ClusterRole::View), ("bc-admin", ClusterRole::ClusterAdmin)] {
        admin_api.service_account_ensure("kube-system", name).await.unwrap();
        admin_api.service_account_ensure("kube-system", name).await.unwrap();
        admin_api.cluster_role_binding_ensure(name, role, "kube-system", name).await.unwrap();
    }
    let too_short = admin_api.token_request("kube-system", "bc-viewer", 60).await.unwrap();
    assert!(!too_short.expiration_timestamp.is_empty(), "a too-short lifetime is raised to the minimum");
    let view = admin_api.token_request("kube-system", "bc-viewer", 3600).await.unwrap();
    let admin = admin_api.token_request("kube-system", "bc-admin", 3600).await.unwrap();

    let viewer_api =
        KubeClient::new(&cluster.endpoint, &cluster.ca_certificate_pem, KubeAuth::Token(view.token.clone())).unwrap();
    let forbidden = viewer_api.apply(&serde_json::from_str(DAEMONSET).unwrap(), "bc", Force::Yes).await.unwrap_err();
    assert_eq!((forbidden.status, forbidden.reason.as_str()), (Some(403), "Forbidden"));
    let unknown =
        KubeClient::new(&cluster.endpoint, &cluster.ca_certificate_pem, KubeAuth::Token("nope".into())).unwrap();
    assert_eq!(unknown.nodes_list().await.unwrap_err().status, Some(401));

    let dir = std::env::temp_dir().join(format!("bc-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("ds.json");
    std::fs::write(&manifest, DAEMONSET).unwrap();
    let manifest = manifest.to_str().unwrap();
    let write = |name: &str, token: &str| {
        let path = dir.join(name);
        std::fs::write(&path, kubeconfig("bc-k-kubectl", &cluster.endpoint, &cluster.ca_certificate_pem, name, token))
            .unwrap();
        path
    };
    let view_config = write("view", &view.token);
    let admin_config = write("admin", &admin.token);

    let denied = kubectl(&view_config, &["apply", "--server-side", "--validate=false", "-f", manifest]);
    assert!(!denied.status.success());
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert!(stderr.contains("forbidden"), "kubectl said: {stderr}");

    let applied = kubectl(&admin_config, &["apply", "--server-side", "--validate=false", "-f", manifest]);
    assert!(applied.status.success(), "kubectl said: {}", String::from_utf8_lossy(&applied.stderr));
    assert!(String::from_utf8_lossy(&applied.stdout).contains("daemonset.apps/bcd serverside-applied"));

    let read = kubectl(&view_config, &["get", "daemonsets", "-o", "name"]);
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "daemonset.apps/bcd",
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );

    let nodes = kubectl(&admin_config, &["get", "nodes"]);
    let listing = String::from_utf8_lossy(&nodes.stdout);
    assert!(nodes.status.success(), "kubectl said: {}", String::from_utf8_lossy(&nodes.stderr));
    assert!(listing.contains("gke-bc-k-kubectl-pool-a-0000") && listing.contains("Ready"), "{listing}");
    let viewer_nodes = kubectl(&view_config, &["get", "nodes"]);
    assert!(!viewer_nodes.status.success(), "view does not reach cluster-scoped nodes");

    let again = admin_api.apply(&json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bcd", "namespace": "default"}, "spec": {"x": 1}}), "bc", Force::Yes).await.unwrap();
    assert_eq!(again["metadata"]["generation"], 2);
    assert_eq!(viewer_api.nodes_list().await.unwrap_err().kind, ErrorKind::Permanent);
    std::fs::remove_dir_all(&dir).unwrap();
}
