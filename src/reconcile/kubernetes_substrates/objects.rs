//! The Kubernetes objects a substrate applies to its cluster: a namespace, bcd's service
//! account, the Secret holding the hosted join token, and one bcd DaemonSet per flavor pinned
//! to that flavor's node pool. Every object carries the pool's label, and an annotation with
//! the SHA-256 of what was applied, so a pass re-applies only what changed.

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::provider::ObjectRef;
use crate::store::flavor_node_pool_name;

/// The label on everything a substrate makes (objects, node pools' nodes): its pool's id.
pub const SUBSTRATE_LABEL: &str = "better-compute.dev/substrate-pool";
/// The label of a flavor's nodes and DaemonSet.
pub const FLAVOR_LABEL: &str = "better-compute.dev/flavor";
/// The annotation with the SHA-256 of the applied document.
const APPLIED_SHA256: &str = "better-compute.dev/applied-sha256";
/// The field manager of every apply.
pub const FIELD_MANAGER: &str = "better-compute";
/// The kinds a substrate makes, in the order they are applied (and deleted in reverse).
pub const KINDS: [&str; 4] = ["Namespace", "ServiceAccount", "Secret", "DaemonSet"];
/// bcd's image when the policy names none.
pub const DEFAULT_BCD_IMAGE: &str = concat!("ghcr.io/better-compute/bcd:", env!("CARGO_PKG_VERSION"));

const SERVICE_ACCOUNT: &str = "bcd";
const TOKEN_SECRET: &str = "bcd-join-token";
const TOKEN_KEY: &str = "token";

/// Where bcd reaches the control plane, as the worker was told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DaemonEndpoint {
    /// The API's URL as the nodes reach it.
    pub url: String,
    /// The SHA-256 of the API's CA public key, for bcd to pin; `None` for a public CA.
    pub ca_sha256: Option<String>,
}

/// What the objects are made from.
pub struct Inputs<'a> {
    pub pool_id: &'a str,
    pub flavors: &'a [String],
    pub image: &'a str,
    pub endpoint: &'a DaemonEndpoint,
    /// The hosted join token's bearer form.
    pub token: &'a str,
}

/// The namespace a substrate's objects live in: `bc-substrate-` and 10 characters of the pool.
pub fn namespace(pool_id: &str) -> String {
    let body = pool_id.trim_start_matches("pool_");
    format!("bc-substrate-{}", &body[..body.len().min(10)])
}

/// The reference of an object document.
pub fn reference(object: &Value) -> ObjectRef {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    ObjectRef {
        kind: text(&object["kind"]),
        namespace: text(&object["metadata"]["namespace"]),
        name: text(&object["metadata"]["name"]),
    }
}

/// Whether `object` (as the cluster has it) carries this pool's label.
pub fn is_ours(object: &Value, pool_id: &str) -> bool {
    object["metadata"]["labels"][SUBSTRATE_LABEL] == pool_id
}

/// The namespaced kinds a teardown looks for in the substrate's namespace before deleting it
/// (deleting a namespace deletes everything in it).
pub const NAMESPACED_KINDS: [&str; 9] =
    ["DaemonSet", "Deployment", "StatefulSet", "Job", "Pod", "Service", "ServiceAccount", "ConfigMap", "Secret"];

/// What in a namespace was not made by this pool's substrate, as `Kind name`: everything but
/// the objects carrying its label, what the cluster makes in every namespace (the `default`
/// service account, the `kube-root-ca.crt` config map) and objects owned by another (a pod of a
/// DaemonSet: its owner is judged instead).
pub fn not_ours(kind: &str, objects: &[Value], pool_id: &str) -> Vec<String> {
    objects
        .iter()
        .filter(|object| !is_ours(object, pool_id))
        .filter(|object| object["metadata"]["ownerReferences"].as_array().is_none_or(Vec::is_empty))
        .filter_map(|object| object["metadata"]["name"].as_str())
        .filter(|name| !matches!((kind, *name), ("ServiceAccount", "default") | ("ConfigMap", "kube-root-ca.crt")))
        .map(|name| format!("{kind} {name}"))
        .collect()
}

/// Whether `object` (as the cluster has it) is what `desired` applies.
pub fn is_applied(object: &Value, desired: &Value) -> bool {
    object["metadata"]["annotations"][APPLIED_SHA256] == desired["metadata"]["annotations"][APPLIED_SHA256]
}

/// Every object the substrate wants, in apply order.
pub fn desired(inputs: &Inputs<'_>) -> Vec<Value> {
    let namespace = namespace(inputs.pool_id);
    let labels = json!({SUBSTRATE_LABEL: inputs.pool_id, "app.kubernetes.io/managed-by": FIELD_MANAGER});
    let token = base64::engine::general_purpose::STANDARD.encode(inputs.token);
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": SERVICE_ACCOUNT, "namespace": namespace, "labels": labels},
               "automountServiceAccountToken": false}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
               "metadata": {"name": TOKEN_SECRET, "namespace": namespace, "labels": labels},
               "data": {TOKEN_KEY: token}}),
    ];
    objects.extend(inputs.flavors.iter().map(|flavor| daemon_set(inputs, &namespace, flavor)));
    objects.into_iter().map(stamped).collect()
}

/// The DaemonSet of one flavor: bcd on every node of the flavor's node pool, and nowhere else.
fn daemon_set(inputs: &Inputs<'_>, namespace: &str, flavor: &str) -> Value {
    let selector = json!({"app.kubernetes.io/name": "bcd", FLAVOR_LABEL: flavor});
    let mut labels = selector.clone();
    labels[SUBSTRATE_LABEL] = json!(inputs.pool_id);
    labels["app.kubernetes.io/managed-by"] = json!(FIELD_MANAGER);
    let mut env = vec![
        json!({"name": "BCD_ENDPOINT", "value": inputs.endpoint.url}),
        json!({"name": "BCD_TOKEN", "valueFrom": {"secretKeyRef": {"name": TOKEN_SECRET, "key": TOKEN_KEY}}}),
        json!({"name": "BCD_MACHINE_ID", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}),
        json!({"name": "BCD_STATE_DIR", "value": "/var/lib/bcd"}),
    ];
    if let Some(pin) = &inputs.endpoint.ca_sha256 {
        env.push(json!({"name": "BCD_CA_SHA256", "value": pin}));
    }
    if inputs.endpoint.url.starts_with("http://") {
        // bcd sends its token over plain HTTP only when told so; the worker was given this endpoint.
        env.push(json!({"name": "BCD_INSECURE_PLAINTEXT", "value": "true"}));
    }
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": format!("bcd-{flavor}"), "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "automountServiceAccountToken": false,
                    "hostNetwork": true,
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {"cloud.google.com/gke-nodepool": flavor_node_pool_name(inputs.pool_id, flavor)},
                    // The flavor's own taints keep other pods off its nodes, never bcd.
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{
                        "name": "bcd",
                        "image": inputs.image,
                        // Joins once; a restarted pod finds its node in the state directory.
                        "args": ["join", "--label", format!("{FLAVOR_LABEL}={flavor}")],
                        "env": env,
                        "volumeMounts": [{"name": "state", "mountPath": "/var/lib/bcd"}],
                        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
                        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true},
                    }],
                    "volumes": [{"name": "state",
                                 "hostPath": {"path": format!("/var/lib/bcd/{}", inputs.pool_id), "type": "DirectoryOrCreate"}}],
                },
            },
        },
    })
}

/// The document with the SHA-256 of itself in an annotation.
fn stamped(mut object: Value) -> Value {
    let digest = Sha256::digest(object.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    object["metadata"]["annotations"] = json!({APPLIED_SHA256: hex});
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(flavors: &'a [String], endpoint: &'a DaemonEndpoint) -> Inputs<'a> {
        Inputs {
            pool_id: "pool_0123456789abcdefghjkmnpqrs",
            flavors,
            image: DEFAULT_BCD_IMAGE,
            endpoint,
            token: "bcjt_x.secret",
        }
    }

    #[test]
    fn every_object_is_labelled_and_each_flavor_gets_a_daemon_set_on_its_node_pool() {
        let flavors = vec!["cpu".to_owned(), "gpu".to_owned()];
        let endpoint = DaemonEndpoint { url: "https://api.example".into(), ca_sha256: Some("ab".into()) };
        let objects = desired(&inputs(&flavors, &endpoint));
        let kinds: Vec<_> = objects.iter().map(|o| reference(o).kind).collect();
        assert_eq!(kinds, ["Namespace", "ServiceAccount", "Secret", "DaemonSet", "DaemonSet"]);
        assert!(objects.iter().all(|o| is_ours(o, "pool_0123456789abcdefghjkmnpqrs")));
        let gpu = &objects[4];
        assert_eq!(reference(gpu).name, "bcd-gpu");
        assert_eq!(reference(gpu).namespace, "bc-substrate-0123456789");
        assert_eq!(
            gpu["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-nodepool"],
            "bc-0123456789-gpu"
        );
        let env = gpu["spec"]["template"]["spec"]["containers"][0]["env"].as_array().unwrap();
        assert!(env.iter().any(|e| e["name"] == "BCD_CA_SHA256" && e["value"] == "ab"));
        assert!(!env.iter().any(|e| e["name"] == "BCD_INSECURE_PLAINTEXT"), "not over https");
        let plain = DaemonEndpoint { url: "http://10.0.0.1:8080".into(), ca_sha256: None };
        let plain = desired(&inputs(&flavors, &plain));
        let env = plain[4]["spec"]["template"]["spec"]["containers"][0]["env"].as_array().unwrap();
        assert!(env.iter().any(|e| e["name"] == "BCD_INSECURE_PLAINTEXT" && e["value"] == "true"));
        // The token is in the Secret only, never in the DaemonSet.
        assert!(!gpu.to_string().contains("bcjt_"));
    }

    #[test]
    fn only_what_the_substrate_did_not_make_keeps_its_namespace() {
        let pool = "pool_0123456789abcdefghjkmnpqrs";
        let objects = vec![
            json!({"metadata": {"name": "bcd-general", "labels": {SUBSTRATE_LABEL: pool}}}),
            json!({"metadata": {"name": "theirs", "labels": {"team": "ops"}}}),
            json!({"metadata": {"name": "theirs-x1", "ownerReferences": [{"kind": "DaemonSet", "name": "theirs"}]}}),
        ];
        assert_eq!(not_ours("DaemonSet", &objects, pool), ["DaemonSet theirs"]);
        let defaults = vec![
            json!({"metadata": {"name": "default"}}),
            json!({"metadata": {"name": "bcd", "labels": {SUBSTRATE_LABEL: pool}}}),
        ];
        assert!(not_ours("ServiceAccount", &defaults, pool).is_empty(), "what every namespace has");
        assert!(not_ours("ConfigMap", &[json!({"metadata": {"name": "kube-root-ca.crt"}})], pool).is_empty());
    }

    #[test]
    fn a_changed_token_or_image_changes_the_applied_digest() {
        let flavors = vec!["cpu".to_owned()];
        let endpoint = DaemonEndpoint { url: "http://127.0.0.1:1".into(), ca_sha256: None };
        let first = desired(&inputs(&flavors, &endpoint));
        let again = desired(&inputs(&flavors, &endpoint));
        assert!(first.iter().zip(&again).all(|(a, b)| is_applied(a, b)));
        let rotated = desired(&Inputs { token: "bcjt_y.other", ..inputs(&flavors, &endpoint) });
        assert!(!is_applied(&first[2], &rotated[2]));
        assert!(is_applied(&first[3], &rotated[3]));
        let rolled = desired(&Inputs { image: "bcd:next", ..inputs(&flavors, &endpoint) });
        assert!(!is_applied(&first[3], &rolled[3]));
    }
}
