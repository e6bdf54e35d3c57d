//! Plain kubectl, with no flag a real cluster would not need, against a fake cluster's API server
//! with the kubeconfig a user is issued: `create namespace` (which kubectl sends as protobuf),
//! `apply -f` and `create -f` of a ConfigMap and a Deployment (validated as against a real
//! server: kubectl reads the OpenAPI v3 documents and leaves field validation to the server),
//! a second apply that patches, `get -o json`, the typed `create configmap` and `create
//! deployment`, and `delete`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::Kube;
use crate::harness::adapters::cloud;

const MANIFEST: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: web
data:
  mode: blue
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: example.com/web:1
        ports:
        - containerPort: 8080
";

fn kubectl(config: &Path, args: &[&str]) -> Output {
    // kubectl blocks; the fake cluster it calls is served by the runtime's other thread. Its
    // discovery and OpenAPI cache is the test's own.
    let cache = config.with_file_name("cache");
    tokio::task::block_in_place(|| {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(config)
            .arg("--cache-dir")
            .arg(&cache)
            .args(args)
            .output()
            .expect("kubectl is on PATH")
    })
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// kubectl's output, which must be a success.
fn ok(config: &Path, args: &[&str]) -> String {
    let output = kubectl(config, args);
    assert!(output.status.success(), "kubectl {args:?}: {}", said(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json(config: &Path, args: &[&str]) -> Value {
    let text = ok(config, &[args, &["-o", "json"]].concat());
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("kubectl {args:?} -o json: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_kubectl_creates_applies_reads_and_deletes() {
    let cloud = cloud().await;
    let kube = Kube::cluster(&cloud, "bc-k-plain", 1).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kube.admin_kubeconfig(&cloud, dir.path()).await;
    let config = config.as_path();

    assert_eq!(ok(config, &["create", "namespace", "web"]).trim(), "namespace/web created");
    let namespace = json(config, &["get", "namespace", "web"]);
    assert_eq!(namespace["status"]["phase"], "Active", "{namespace}");

    let manifest = dir.path().join("web.yaml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let manifest = manifest.to_str().unwrap();
    let applied = ok(config, &["apply", "-f", manifest]);
    assert!(applied.contains("configmap/settings created"), "{applied}");
    assert!(applied.contains("deployment.apps/web created"), "{applied}");

    // A second apply patches what changed, and leaves what did not.
    std::fs::write(manifest, MANIFEST.replace("mode: blue", "mode: green")).unwrap();
    let again = ok(config, &["apply", "-f", manifest]);
    assert!(again.contains("configmap/settings configured"), "{again}");
    assert!(again.contains("deployment.apps/web unchanged"), "{again}");
    let settings = json(config, &["get", "configmap", "settings", "-n", "web"]);
    assert_eq!(settings["data"]["mode"], "green", "{settings}");
    let deployment = json(config, &["get", "deployment", "web", "-n", "web"]);
    assert_eq!(deployment["spec"]["replicas"], 2, "{deployment}");
    assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"], 8080);
    assert_eq!(deployment["metadata"]["generation"], 1, "an unchanged spec keeps its generation");

    // `create -f` validates as `apply` does; the typed `create` commands send protobuf.
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "web"}, "data": {"a": "1"}}"#,
    )
    .unwrap();
    assert_eq!(ok(config, &["create", "-f", other.to_str().unwrap()]).trim(), "configmap/other created");
    ok(config, &["create", "configmap", "literal", "-n", "web", "--from-literal=size=3"]);
    let literal = json(config, &["get", "cm", "literal", "-n", "web"]);
    assert_eq!(literal["data"]["size"], "3", "{literal}");
    ok(config, &["create", "deployment", "typed", "-n", "web", "--image=example.com/typed:1", "--replicas=3"]);
    let typed = json(config, &["get", "deploy", "typed", "-n", "web"]);
    assert_eq!(typed["spec"]["replicas"], 3, "{typed}");
    assert_eq!(typed["spec"]["template"]["spec"]["containers"][0]["image"], "example.com/typed:1", "{typed}");
    let listed = json(config, &["get", "configmaps", "-n", "web"]);
    let names: Vec<&str> =
        listed["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["literal", "other", "settings"]);

    let deleted = ok(config, &["delete", "-f", manifest]);
    assert!(deleted.contains("configmap \"settings\" deleted"), "{deleted}");
    let gone = kubectl(config, &["get", "configmap", "settings", "-n", "web"]);
    assert!(!gone.status.success() && said(&gone).contains("NotFound"), "{}", said(&gone));
    ok(config, &["delete", "namespace", "web"]);
    let gone = kubectl(config, &["get", "configmap", "other", "-n", "web"]);
    assert!(!gone.status.success(), "the namespace took its objects: {}", said(&gone));
}
