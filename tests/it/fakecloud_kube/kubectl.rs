//! kubectl against a fake cluster, as the substrate's "never take over" test uses it: a
//! DaemonSet made with `kubectl create` belongs to `kubectl-create`; a server-side apply that
//! changes its image without `--force-conflicts` fails naming the field and the manager; with it,
//! kubectl sees both managers and their fields with `--show-managed-fields`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use super::{Kube, daemonset, labelled};
use crate::harness::adapters::cloud;

fn kubectl(config: &Path, args: &[&str]) -> Output {
    // kubectl blocks; the fake cluster it calls is served by the runtime's other thread.
    tokio::task::block_in_place(|| {
        Command::new("kubectl").arg("--kubeconfig").arg(config).args(args).output().expect("kubectl is on PATH")
    })
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_managers_and_an_apply_over_anothers_field_conflicts_until_forced() {
    let cloud = cloud().await;
    let kube = Kube::cluster(&cloud, "bc-k-kubectl-fields", 1).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kube.admin_kubeconfig(&cloud, dir.path()).await;
    kube.applied("/api/v1/namespaces/bc-system", labelled("Namespace", "v1", "bc-system", None)).await;

    let mut made = daemonset("example.com/other:1", "http://127.0.0.1:9");
    made["metadata"] = json!({"name": "bcd-general", "namespace": "bc-system"});
    let manifest = dir.path().join("ds.json");
    std::fs::write(&manifest, made.to_string()).unwrap();
    let manifest = manifest.to_str().unwrap();
    let created = kubectl(&config, &["create", "--validate=false", "-f", manifest]);
    assert!(created.status.success(), "{}", said(&created));

    made["spec"]["template"]["spec"]["containers"][0]["image"] = json!("example.com/bcd:2");
    std::fs::write(manifest, made.to_string()).unwrap();
    let refused = kubectl(
        &config,
        &["apply", "--server-side", "--validate=false", "--field-manager=better-compute", "-f", manifest],
    );
    assert!(!refused.status.success());
    let text = said(&refused);
    assert!(text.contains("conflict") && text.contains("kubectl-create"), "{text}");
    assert!(text.contains(".spec.template.spec.containers[name=\"bcd\"].image"), "{text}");

    let forced = kubectl(
        &config,
        &[
            "apply",
            "--server-side",
            "--validate=false",
            "--force-conflicts",
            "--field-manager=better-compute",
            "-f",
            manifest,
        ],
    );
    assert!(forced.status.success(), "{}", said(&forced));
    let shown =
        kubectl(&config, &["get", "ds", "-n", "bc-system", "bcd-general", "-o", "yaml", "--show-managed-fields"]);
    let yaml = said(&shown);
    assert!(shown.status.success(), "{yaml}");
    for expected in
        ["manager: kubectl-create", "operation: Update", "manager: better-compute", "operation: Apply", "f:image: {}"]
    {
        assert!(yaml.contains(expected), "{expected} in {yaml}");
    }
    let listed = kubectl(&config, &["get", "pods", "-n", "bc-system"]);
    assert!(said(&listed).contains("bcd-general-"), "kubectl lists the DaemonSet's pod: {}", said(&listed));
}
