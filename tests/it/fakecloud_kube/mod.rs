//! A fake cluster's Kubernetes API as the substrate reconciler and kubectl use it: namespaces,
//! secrets and DaemonSets under server-side apply (managed fields, a conflict refused unless
//! forced), label selectors, a namespace's deletion taking its objects; and the DaemonSets it
//! runs: bcd on every node a DaemonSet selects joins a real server's pool with the Secret's
//! token, a shrunk node pool takes its daemon along, a new template restarts the pods as the
//! same nodes. `clients` tries the fake cloud with the official Python clients, `kubectl` with
//! kubectl.

mod clients;
mod kubectl;
mod plain_kubectl;

use std::time::Duration;

use better_compute::provider::kube::{KubeAuth, KubeClient, kubeconfig};
use better_compute::provider::{ClusterApi, ClusterRole, ClusterSpec, ManagedKubernetes, NodePoolSpec};
use better_compute::store::Backend;
use fakecloud::FakeCloud;
use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::adapters::{PROJECT, cloud, gke, wait};
use crate::harness::{DO_TOKEN, System, TestServer, poll, tenant_principal};

/// `better-compute.dev/substrate-pool=pool_t`, URL-encoded as clients send it.
const SELECTOR: &str = "better-compute.dev%2Fsubstrate-pool%3Dpool_t";

/// A fake cluster's API server as the GKE adapter's Google identity (an admin) calls it.
struct Kube {
    http: reqwest::Client,
    base: String,
    token: String,
    /// `127.0.0.1:PORT` of the cluster's API server.
    endpoint: String,
    /// The cluster's CA, PEM.
    ca_pem: String,
}

impl Kube {
    /// Makes cluster `name` with pool `general` of `nodes` nodes and pool `other` of one.
    async fn cluster(cloud: &FakeCloud, name: &str, nodes: u32) -> Kube {
        let gke = gke(cloud);
        let pool = |name: &str, node_count| NodePoolSpec {
            name: name.into(),
            node_count,
            machine_type: "e2-standard-4".into(),
            ..Default::default()
        };
        let spec = ClusterSpec {
            name: name.into(),
            node_pools: vec![pool("general", nodes), pool("other", 1)],
            ..Default::default()
        };
        wait(&gke, &gke.cluster_create(&spec).await.unwrap()).await.outcome().unwrap();
        let cluster = gke.cluster_get(name).await.unwrap();
        let ca = reqwest::Certificate::from_pem(cluster.ca_certificate_pem.as_bytes()).unwrap();
        let http =
            reqwest::Client::builder().add_root_certificate(ca).timeout(Duration::from_secs(20)).build().unwrap();
        let token = cloud.access_token(&format!("reconciler@{PROJECT}.iam.gserviceaccount.com"));
        Kube {
            http,
            base: format!("https://{}", cluster.endpoint),
            token,
            endpoint: cluster.endpoint,
            ca_pem: cluster.ca_certificate_pem,
        }
    }

    /// A kubeconfig in `dir` of a cluster-admin service account's token, as a user gets one.
    async fn admin_kubeconfig(&self, cloud: &FakeCloud, dir: &std::path::Path) -> std::path::PathBuf {
        let admin =
            KubeClient::new(&self.endpoint, &self.ca_pem, KubeAuth::Google(gke(cloud).tokens().clone())).unwrap();
        admin.service_account_ensure("kube-system", "bc-admin").await.unwrap();
        admin
            .cluster_role_binding_ensure("bc-admin", ClusterRole::ClusterAdmin, "kube-system", "bc-admin")
            .await
            .unwrap();
        let token = admin.token_request("kube-system", "bc-admin", 3600).await.unwrap().token;
        let path = dir.join("admin.kubeconfig");
        std::fs::write(&path, kubeconfig("fake", &self.endpoint, &self.ca_pem, "bc-admin", &token)).unwrap();
        path
    }

    async fn call(&self, method: Method, path: &str, content_type: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.header("content-type", content_type).body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> Value {
        let (status, body) = self.call(Method::GET, path, "", None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// Server-side apply as `manager`, without force unless asked.
    async fn apply(&self, path: &str, manager: &str, force: bool, object: Value) -> (u16, Value) {
        let path = format!("{path}?fieldManager={manager}{}", if force { "&force=true" } else { "" });
        self.call(Method::PATCH, &path, "application/apply-patch+yaml", Some(object)).await
    }

    async fn applied(&self, path: &str, object: Value) -> Value {
        let (status, body) = self.apply(path, "better-compute", false, object).await;
        assert!(status == 200 || status == 201, "apply {path}: {status} {body}");
        body
    }
}

fn labelled(kind: &str, api_version: &str, name: &str, namespace: Option<&str>) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "labels": {"better-compute.dev/substrate-pool": "pool_t"}}});
    if let Some(namespace) = namespace {
        object["metadata"]["namespace"] = json!(namespace);
    }
    object
}

fn daemonset(image: &str, endpoint: &str) -> Value {
    let mut ds = labelled("DaemonSet", "apps/v1", "bcd-general", Some("bc-system"));
    ds["spec"] = json!({
        "selector": {"matchLabels": {"app": "bcd"}},
        "template": {
            "metadata": {"labels": {"app": "bcd"}},
            "spec": {
                "nodeSelector": {"cloud.google.com/gke-nodepool": "general"},
                "containers": [{
                    "name": "bcd", "image": image,
                    "args": ["join", "--label", "better-compute.dev/flavor=general", "--label", "rack=r1"],
                    "env": [
                        {"name": "BCD_ENDPOINT", "value": endpoint},
                        {"name": "BCD_TOKEN", "valueFrom": {"secretKeyRef": {"name": "bcd-join", "key": "token"}}},
                        {"name": "BCD_MACHINE_ID", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                        {"name": "BCD_STATE_DIR", "value": "/var/lib/bcd"},
                    ],
                }],
            },
        },
    });
    ds
}

const DS_PATH: &str = "/apis/apps/v1/namespaces/bc-system/daemonsets/bcd-general";

#[tokio::test]
async fn server_side_apply_keeps_managed_fields_and_refuses_a_conflict_without_force() {
    let cloud = cloud().await;
    let kube = Kube::cluster(&cloud, "bc-k-apply", 1).await;
    let (status, namespace) = kube
        .apply("/api/v1/namespaces/bc-system", "better-compute", false, labelled("Namespace", "v1", "bc-system", None))
        .await;
    assert_eq!((status, namespace["status"]["phase"].as_str()), (201, Some("Active")), "{namespace}");

    // kubectl create: an Update manager owning what it wrote.
    let mut taken = daemonset("example.com/bcd:1", "http://127.0.0.1:1");
    taken["metadata"] = json!({"name": "taken", "namespace": "bc-system", "labels": {"made-by": "hand"}});
    let (status, created) = kube
        .call(
            Method::POST,
            "/apis/apps/v1/namespaces/bc-system/daemonsets?fieldManager=kubectl-create",
            "application/json",
            Some(taken.clone()),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["metadata"]["managedFields"][0]["manager"], "kubectl-create");
    assert_eq!(created["metadata"]["managedFields"][0]["operation"], "Update");

    taken["spec"]["template"]["spec"]["containers"][0]["image"] = json!("example.com/bcd:2");
    let path = "/apis/apps/v1/namespaces/bc-system/daemonsets/taken";
    let (status, conflict) = kube.apply(path, "better-compute", false, taken.clone()).await;
    assert_eq!((status, conflict["reason"].as_str()), (409, Some("Conflict")), "{conflict}");
    let cause = &conflict["details"]["causes"][0];
    assert_eq!(cause["field"], ".spec.template.spec.containers[name=\"bcd\"].image", "{conflict}");
    assert!(cause["message"].as_str().unwrap().contains("kubectl-create"), "{conflict}");
    assert_eq!(kube.get(path).await["spec"]["template"]["spec"]["containers"][0]["image"], "example.com/bcd:1");

    let (status, forced) = kube.apply(path, "better-compute", true, taken).await;
    assert_eq!(status, 200, "{forced}");
    let managers = forced["metadata"]["managedFields"].as_array().unwrap();
    let ours = managers.iter().find(|m| m["manager"] == "better-compute").expect("the applier is a manager");
    assert_eq!(ours["operation"], "Apply");
    let container = &ours["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"bcd\"}"];
    assert_eq!(container["f:image"], json!({}), "{ours}");
    assert_eq!(forced["metadata"]["generation"], 2);

    // Secrets: stringData lands in data; label selectors narrow lists, in a namespace and across.
    let mut secret = labelled("Secret", "v1", "bcd-join", Some("bc-system"));
    secret["stringData"] = json!({"token": "bcjt_a.b"});
    let stored = kube.applied("/api/v1/namespaces/bc-system/secrets/bcd-join", secret).await;
    assert_eq!(stored["data"]["token"], "YmNqdF9hLmI=");
    kube.applied(
        "/api/v1/namespaces/default/secrets/unlabelled",
        json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "unlabelled"}}),
    )
    .await;
    let names = |list: &Value| -> Vec<String> {
        list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(&kube.get(&format!("/api/v1/secrets?labelSelector={SELECTOR}")).await), ["bcd-join"]);
    assert_eq!(
        names(&kube.get(&format!("/api/v1/namespaces/default/secrets?labelSelector={SELECTOR}")).await),
        Vec::<String>::new()
    );
    assert_eq!(names(&kube.get("/api/v1/namespaces/default/secrets").await), ["unlabelled"]);
    kube.applied(DS_PATH, daemonset("example.com/bcd:1", "http://127.0.0.1:1")).await;
    assert_eq!(names(&kube.get(&format!("/apis/apps/v1/daemonsets?labelSelector={SELECTOR}")).await), ["bcd-general"]);

    let (status, _) = kube.call(Method::DELETE, "/api/v1/namespaces/bc-system", "", None).await;
    assert_eq!(status, 200);
    assert!(names(&kube.get("/apis/apps/v1/daemonsets").await).is_empty(), "the namespace took its objects");
    assert_eq!(names(&kube.get("/api/v1/secrets").await), ["unlabelled"]);
    let (status, refused) = kube.applied_status("/api/v1/namespaces/bc-system/secrets/x").await;
    assert_eq!((status, refused["message"].as_str()), (404, Some("namespaces \"bc-system\" not found")));
}

impl Kube {
    /// Applies an empty labelled secret; the status and the body, whatever they are.
    async fn applied_status(&self, path: &str) -> (u16, Value) {
        let name = path.rsplit('/').next().unwrap();
        self.apply(path, "better-compute", false, labelled("Secret", "v1", name, None)).await
    }

    async fn daemonset_status(&self) -> Value {
        self.get(DS_PATH).await["status"].clone()
    }
}

/// The nodes of `pool` as `nodes/list` shows them.
async fn pool_nodes(server: &TestServer, admin: &str, pool: &str) -> Vec<Value> {
    let (status, listed) = server.post("/api/compute/nodes/list", Some(admin), json!({"poolId": pool})).await;
    assert_eq!(status, 200, "{listed}");
    listed["nodes"].as_array().cloned().unwrap_or_default()
}

fn daemons(cloud: &FakeCloud, cluster: &str) -> Vec<Value> {
    let world = cloud.inspect();
    let clusters = world["gke"]["clusters"].as_array().unwrap();
    let found = clusters.iter().find(|c| c["name"] == cluster).expect("the cluster is there");
    found["kubernetes"]["daemons"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemonset_runs_bcd_on_every_node_it_selects_and_a_shrunk_pool_takes_its_daemon_along() {
    let server = System::on(Backend::Postgres).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let account = server
        .admin_ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                   "regions": ["nyc3"]}),
        )
        .await;
    let pool = server
        .admin_ok(
            "/api/platform/pools/create",
            json!({"accountId": account["id"], "name": "own", "billingMode": "none"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let (status, token) = server
        .post(
            "/api/compute/joinTokens/create",
            Some(&admin),
            json!({"poolId": pool, "idempotencyKey": "fake", "maxUses": 5}),
        )
        .await;
    assert_eq!(status, 200, "{token}");

    let cloud = cloud().await;
    let kube = Kube::cluster(&cloud, "bc-k-daemons", 2).await;
    kube.applied("/api/v1/namespaces/bc-system", labelled("Namespace", "v1", "bc-system", None)).await;
    kube.applied(DS_PATH, daemonset("example.com/bcd:1", &server.endpoint)).await;

    // No Secret yet: the pods wait for it, not ready, as a real kubelet's would.
    let waiting = poll(Duration::from_secs(10), "pods waiting for their secret", || async {
        let pods = kube.get("/api/v1/namespaces/bc-system/pods?labelSelector=app%3Dbcd").await;
        let items = pods["items"].as_array().cloned().unwrap_or_default();
        let reason = |p: &Value| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"].clone();
        if items.len() == 2 && items.iter().all(|p| reason(p) == "CreateContainerConfigError") {
            Ok(items)
        } else {
            Err(pods.to_string())
        }
    })
    .await;
    assert_eq!(waiting[0]["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
    assert_eq!(kube.daemonset_status().await["numberReady"], 0);

    let mut secret = labelled("Secret", "v1", "bcd-join", Some("bc-system"));
    secret["stringData"] = json!({"token": token["token"]});
    kube.applied("/api/v1/namespaces/bc-system/secrets/bcd-join", secret).await;
    let joined = poll(Duration::from_secs(30), "both general nodes joined", || async {
        let nodes = pool_nodes(&server, &admin, &pool).await;
        if nodes.len() == 2 { Ok(nodes) } else { Err(format!("{nodes:?}")) }
    })
    .await;
    let mut hostnames: Vec<&str> = joined.iter().map(|n| n["hostname"].as_str().unwrap_or_default()).collect();
    hostnames.sort();
    assert_eq!(hostnames, ["gke-bc-k-daemons-general-0000", "gke-bc-k-daemons-general-0001"], "{joined:?}");
    assert!(joined.iter().all(|n| n["labels"]["better-compute.dev/flavor"] == "general"), "{joined:?}");
    let capacity = &joined[0]["capacity"];
    assert_eq!(
        (&capacity["cpuMillis"], &capacity["memoryBytes"]),
        (&json!(4000), &json!(16_i64 << 30)),
        "e2-standard-4"
    );
    poll(Duration::from_secs(10), "the DaemonSet counts two ready", || async {
        let status = kube.daemonset_status().await;
        let expected = json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2,
                              "updatedNumberScheduled": 2, "numberAvailable": 2, "observedGeneration": 1});
        let holds = expected.as_object().unwrap().iter().all(|(k, v)| &status[k] == v);
        if holds { Ok(()) } else { Err(status.to_string()) }
    })
    .await;
    let first_pods: Vec<String> =
        daemons(&cloud, "bc-k-daemons").iter().map(|d| d["pod"].as_str().unwrap().to_owned()).collect();

    // A new image restarts the pods as the same nodes: nobody joins again.
    kube.applied(DS_PATH, daemonset("example.com/bcd:2", &server.endpoint)).await;
    poll(Duration::from_secs(10), "the pods restarted at generation 2", || async {
        let running = daemons(&cloud, "bc-k-daemons");
        let renewed = running.iter().all(|d| {
            d["generation"] == 2
                && d["phase"] == "running"
                && !first_pods.contains(&d["pod"].as_str().unwrap().to_owned())
        });
        if running.len() == 2 && renewed { Ok(()) } else { Err(format!("{running:?}")) }
    })
    .await;
    assert_eq!(pool_nodes(&server, &admin, &pool).await.len(), 2, "the restarted pods resumed their nodes");

    let gke = gke(&cloud);
    wait(&gke, &gke.node_pool_set_size("bc-k-daemons", "general", 1).await.unwrap()).await.outcome().unwrap();
    poll(Duration::from_secs(10), "one daemon left", || async {
        let running = daemons(&cloud, "bc-k-daemons");
        let pods = kube.get("/api/v1/namespaces/bc-system/pods").await["items"].as_array().unwrap().len();
        if running.len() == 1 && pods == 1 && running[0]["node"] == "gke-bc-k-daemons-general-0000" {
            Ok(())
        } else {
            Err(format!("{running:?}"))
        }
    })
    .await;
    poll(Duration::from_secs(10), "the DaemonSet wants one", || async {
        let status = kube.daemonset_status().await;
        if status["desiredNumberScheduled"] == 1 && status["numberReady"] == 1 {
            Ok(())
        } else {
            Err(status.to_string())
        }
    })
    .await;

    let (status, _) = kube.call(Method::DELETE, DS_PATH, "", None).await;
    assert_eq!(status, 200);
    poll(Duration::from_secs(10), "no daemon left", || async {
        let running = daemons(&cloud, "bc-k-daemons");
        if running.is_empty() { Ok(()) } else { Err(format!("{running:?}")) }
    })
    .await;
    drop(cloud);
    server.stop().await;
}
