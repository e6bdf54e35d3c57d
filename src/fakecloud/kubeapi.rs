//! A fake Kubernetes API server per fake cluster, served over HTTPS with the cluster's CA:
//! discovery (`/version`, `/api`, `/apis`), service accounts and their TokenRequest tokens,
//! cluster role bindings that authorize those tokens (view, edit, cluster-admin), server-side
//! apply of DaemonSets, and the Nodes of the cluster's pools. Enough for kubectl.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};

use super::gke::{ClusterKey, FakeCluster, FakeNode};
use super::{Shared, bearer, clock, json_response};
use crate::provider::ClusterRole;

/// A resource kind the fake serves.
struct Resource {
    group_version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
}

const RESOURCES: [Resource; 4] = [
    Resource { group_version: "v1", plural: "serviceaccounts", kind: "ServiceAccount", namespaced: true },
    Resource { group_version: "v1", plural: "nodes", kind: "Node", namespaced: false },
    Resource { group_version: "apps/v1", plural: "daemonsets", kind: "DaemonSet", namespaced: true },
    Resource {
        group_version: "rbac.authorization.k8s.io/v1",
        plural: "clusterrolebindings",
        kind: "ClusterRoleBinding",
        namespaced: false,
    },
];

/// A TokenRequest token, bound (as a real API server binds it) to its service account's uid:
/// once that account is deleted, or replaced by one of the same name, the token is refused.
struct BoundToken {
    namespace: String,
    name: String,
    uid: Value,
    expiry: SystemTime,
}

/// What exists inside one fake cluster (Nodes come from its pools).
#[derive(Default)]
pub struct KubeObjects {
    /// (resource plural, namespace, name) -> object.
    objects: BTreeMap<(String, String, String), Value>,
    /// TokenRequest token -> the account it was minted for.
    tokens: HashMap<String, BoundToken>,
    resource_version: u64,
}

impl KubeObjects {
    pub fn inspect(&self) -> Value {
        let objects: Vec<Value> = self
            .objects
            .iter()
            .map(|((plural, namespace, name), o)| {
                json!({"resource": plural, "namespace": namespace, "name": name, "labels": o["metadata"]["labels"]})
            })
            .collect();
        json!({"objects": objects, "tokens": self.tokens.len()})
    }
}

pub fn routes(shared: Arc<Shared>, key: ClusterKey) -> Router {
    Router::new().fallback(any(handle)).with_state((shared, key))
}

/// A Kubernetes `Status` failure.
fn status(code: u16, reason: &str, message: &str) -> Response {
    json_response(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}),
    )
}

/// Who is calling.
enum Caller {
    /// A Google account (GKE maps IAM; the fake treats the adapter's account as admin).
    Google(String),
    /// A service account, with its strongest bound role.
    ServiceAccount(String, Option<ClusterRole>),
}

impl Caller {
    fn user(&self) -> String {
        match self {
            Caller::Google(email) => email.clone(),
            Caller::ServiceAccount(user, _) => user.clone(),
        }
    }

    fn role(&self) -> Option<ClusterRole> {
        match self {
            Caller::Google(_) => Some(ClusterRole::ClusterAdmin),
            Caller::ServiceAccount(_, role) => *role,
        }
    }
}

fn rank(role: ClusterRole) -> u8 {
    match role {
        ClusterRole::View => 1,
        ClusterRole::Edit => 2,
        ClusterRole::ClusterAdmin => 3,
    }
}

fn authenticate(world: &super::World, cluster: &FakeCluster, token: &str) -> Option<Caller> {
    if let Some(email) = world.oauth.account_of(token) {
        return Some(Caller::Google(email.to_owned()));
    }
    let BoundToken { namespace, name, uid, expiry } = cluster.kube.tokens.get(token)?;
    if *expiry < SystemTime::now() {
        return None;
    }
    let account_key = ("serviceaccounts".to_owned(), namespace.clone(), name.clone());
    let account = cluster.kube.objects.get(&account_key)?;
    if account["metadata"]["uid"] != *uid {
        return None;
    }
    let role = cluster
        .kube
        .objects
        .iter()
        .filter(|((plural, _, _), _)| plural == "clusterrolebindings")
        .filter(|(_, binding)| {
            binding["subjects"].as_array().into_iter().flatten().any(|s| {
                s["kind"] == "ServiceAccount" && s["name"] == name.as_str() && s["namespace"] == namespace.as_str()
            })
        })
        .filter_map(|(_, binding)| ClusterRole::parse(binding["roleRef"]["name"].as_str().unwrap_or_default()))
        .max_by_key(|role| rank(*role));
    Some(Caller::ServiceAccount(format!("system:serviceaccount:{namespace}:{name}"), role))
}

/// Whether `role` may `verb` the resource: view reads namespaced objects, edit writes them,
/// cluster-admin does everything (as the built-in roles do, in the part the fake emulates).
fn allowed(role: Option<ClusterRole>, verb: &str, resource: &Resource) -> bool {
    let read = matches!(verb, "get" | "list" | "watch");
    match role {
        Some(ClusterRole::ClusterAdmin) => true,
        Some(ClusterRole::Edit) => resource.namespaced,
        Some(ClusterRole::View) => resource.namespaced && read && resource.plural != "serviceaccounts/token",
        None => false,
    }
}

/// A parsed resource path.
struct Target {
    resource: &'static Resource,
    namespace: String,
    name: Option<String>,
    subresource: Option<String>,
}

fn parse(path: &str) -> Option<Target> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group_version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (namespace.to_string(), rest),
        rest => (String::new(), rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(name.to_string()), None),
        [plural, name, sub] => (*plural, Some(name.to_string()), Some(sub.to_string())),
        _ => return None,
    };
    let resource = RESOURCES.iter().find(|r| r.group_version == group_version && r.plural == plural)?;
    Some(Target { resource, namespace, name, subresource })
}

fn discovery(path: &str) -> Option<Value> {
    let resources = |group_version: &str| {
        let list: Vec<Value> = RESOURCES
            .iter()
            .filter(|r| r.group_version == group_version)
            .flat_map(|r| {
                let mut entries = vec![json!({
                    "name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced, "kind": r.kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                })];
                if r.plural == "serviceaccounts" {
                    entries.push(json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true,
                        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}));
                }
                entries
            })
            .collect();
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list})
    };
    let group = |name: &str| {
        let version = json!({"groupVersion": format!("{name}/v1"), "version": "v1"});
        json!({"name": name, "versions": [version], "preferredVersion": version})
    };
    Some(match path.trim_end_matches('/') {
        "/version" => json!({
            "major": "1", "minor": "32", "gitVersion": "v1.32.6-gke.1200", "gitCommit": "fake",
            "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
            "compiler": "gc", "platform": "linux/amd64",
        }),
        "/api" => json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        "/apis" => json!({"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [group("apps"), group("rbac.authorization.k8s.io"), group("authentication.k8s.io")]}),
        "/api/v1" => resources("v1"),
        "/apis/apps/v1" => resources("apps/v1"),
        "/apis/rbac.authorization.k8s.io/v1" => resources("rbac.authorization.k8s.io/v1"),
        "/apis/authentication.k8s.io/v1" => {
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "authentication.k8s.io/v1", "resources": []})
        }
        _ => return None,
    })
}

fn node_json(cluster: &FakeCluster, cluster_name: &str, node: &FakeNode) -> Value {
    let FakeNode { pool, index, zone, version, .. } = node;
    let name = format!("gke-{cluster_name}-{pool}-{index:04}");
    // The pool's node labels, then the ones GKE and Kubernetes set (which win).
    let mut labels = node.labels.clone();
    for (key, value) in [
        ("cloud.google.com/gke-nodepool", pool.as_str()),
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", node.machine_type.as_str()),
        ("topology.kubernetes.io/zone", zone.as_str()),
    ] {
        labels.insert(key.to_owned(), json!(value));
    }
    if node.spot {
        labels.insert("cloud.google.com/gke-spot".to_owned(), json!("true"));
    }
    let mut spec = json!({"providerID": format!("gce://fake/{}/{name}", cluster.endpoint)});
    if !node.taints.is_empty() {
        spec["taints"] = json!(node.taints);
    }
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": name, "uid": format!("node-{cluster_name}-{pool}-{index}"), "resourceVersion": "1",
            "creationTimestamp": clock::now(),
            "labels": labels,
        },
        "spec": spec,
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
            "nodeInfo": {"kubeletVersion": format!("v{version}"), "osImage": "Container-Optimized OS", "architecture": "amd64"},
            "addresses": [{"type": "InternalIP", "address": format!("10.128.0.{}", index + 2)}],
        },
    })
}

/// Nodes as kubectl's table printer wants them.
fn node_table(nodes: &[Value]) -> Value {
    let rows: Vec<Value> = nodes
        .iter()
        .map(|n| {
            json!({"cells": [n["metadata"]["name"], "Ready", "<none>", "1m", n["status"]["nodeInfo"]["kubeletVersion"]],
                   "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": n["metadata"]}})
        })
        .collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "1"},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0},
            {"name": "Status", "type": "string", "format": "", "description": "Status", "priority": 0},
            {"name": "Roles", "type": "string", "format": "", "description": "Roles", "priority": 0},
            {"name": "Age", "type": "string", "format": "", "description": "Age", "priority": 0},
            {"name": "Version", "type": "string", "format": "", "description": "Version", "priority": 0},
        ],
        "rows": rows,
    })
}

fn verb_of(method: &Method, target: &Target) -> &'static str {
    match (method, target.name.is_some()) {
        (&Method::GET, true) => "get",
        (&Method::GET, false) => "list",
        (&Method::POST, _) => "create",
        (&Method::PATCH, _) => "patch",
        (&Method::PUT, _) => "update",
        (&Method::DELETE, _) => "delete",
        _ => "unknown",
    }
}

async fn handle(
    State((shared, key)): State<(Arc<Shared>, ClusterKey)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut world = shared.world();
    let world = &mut *world;
    let Some(cluster) = world.gke.clusters.get(&key) else {
        return status(503, "ServiceUnavailable", "the cluster is gone");
    };
    let Some(caller) = bearer(&headers).and_then(|token| authenticate(world, cluster, token)) else {
        return status(401, "Unauthorized", "Unauthorized");
    };
    if method == Method::GET
        && let Some(document) = discovery(uri.path())
    {
        return json_response(200, document);
    }
    let Some(target) = parse(uri.path()) else {
        return status(404, "NotFound", &format!("the server could not find the requested resource ({})", uri.path()));
    };
    let verb = verb_of(&method, &target);
    let (group, plural) = match target.resource.group_version.rsplit_once('/') {
        Some((group, _)) => (group, target.resource.plural),
        None => ("", target.resource.plural),
    };
    let checked_plural = if target.subresource.as_deref() == Some("token") { "serviceaccounts/token" } else { plural };
    let checked = Resource { plural: checked_plural, ..*target.resource };
    if !allowed(caller.role(), verb, &checked) {
        let name = target.name.clone().unwrap_or_default();
        let qualified = if group.is_empty() { plural.to_owned() } else { format!("{plural}.{group}") };
        let scope = if target.resource.namespaced {
            format!(" in the namespace \"{}\"", target.namespace)
        } else {
            " at the cluster scope".into()
        };
        let message = format!(
            "{qualified} \"{name}\" is forbidden: User \"{}\" cannot {verb} resource \"{checked_plural}\" in API group \"{group}\"{scope}",
            caller.user()
        );
        return status(403, "Forbidden", &message);
    }
    if plural == "nodes" {
        let cluster_name = &key.2;
        let nodes: Vec<Value> = cluster.nodes().iter().map(|n| node_json(cluster, cluster_name, n)).collect();
        let wants_table = headers.get("accept").and_then(|a| a.to_str().ok()).is_some_and(|a| a.contains("as=Table"));
        return match (&target.name, wants_table) {
            (Some(name), _) => match nodes.into_iter().find(|n| n["metadata"]["name"] == name.as_str()) {
                Some(node) => json_response(200, node),
                None => status(404, "NotFound", &format!("nodes \"{name}\" not found")),
            },
            (None, true) => json_response(200, node_table(&nodes)),
            (None, false) => {
                json_response(200, json!({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": nodes}))
            }
        };
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        // kubectl sends apply patches as JSON, which is YAML too; the fake reads only that form.
        match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(_) => return status(415, "UnsupportedMediaType", "the fake API server reads JSON bodies only"),
        }
    };
    let query = uri.query().unwrap_or_default().to_owned();
    let objects = &mut world.gke.clusters.get_mut(&key).expect("looked up above").kube;
    store(objects, &method, &target, body, &query)
}

fn object_key(target: &Target, name: &str) -> (String, String, String) {
    (target.resource.plural.to_owned(), target.namespace.clone(), name.to_owned())
}

fn store(objects: &mut KubeObjects, method: &Method, target: &Target, body: Value, query: &str) -> Response {
    let resource = target.resource;
    match (method, &target.name, target.subresource.as_deref()) {
        (&Method::GET, None, None) => {
            let items: Vec<Value> = objects
                .objects
                .iter()
                .filter(|((p, ns, _), _)| {
                    p == resource.plural && (target.namespace.is_empty() || *ns == target.namespace)
                })
                .map(|(_, o)| o.clone())
                .collect();
            json_response(
                200,
                json!({"kind": format!("{}List", resource.kind), "apiVersion": resource.group_version, "metadata": {}, "items": items}),
            )
        }
        (&Method::GET, Some(name), None) => match objects.objects.get(&object_key(target, name)) {
            Some(object) => json_response(200, object.clone()),
            None => status(404, "NotFound", &format!("{} \"{name}\" not found", resource.plural)),
        },
        (&Method::POST, None, None) => {
            let name = body["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            if name.is_empty() {
                return status(422, "Invalid", "metadata.name: Required value");
            }
            if objects.objects.contains_key(&object_key(target, &name)) {
                return status(409, "AlreadyExists", &format!("{} \"{name}\" already exists", resource.plural));
            }
            let object = stamp(objects, target, body, None, None);
            objects.objects.insert(object_key(target, &name), object.clone());
            json_response(201, object)
        }
        (&Method::PATCH, Some(name), None) => {
            let manager = query.split('&').find_map(|pair| pair.strip_prefix("fieldManager=")).unwrap_or_default();
            if manager.is_empty() {
                return status(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                );
            }
            let key = object_key(target, name);
            let existing = objects.objects.get(&key).cloned();
            let created = existing.is_none();
            let object = stamp(objects, target, body, existing, Some(manager));
            objects.objects.insert(key, object.clone());
            json_response(if created { 201 } else { 200 }, object)
        }
        (&Method::DELETE, Some(name), None) => match objects.objects.remove(&object_key(target, name)) {
            Some(_) => json_response(200, json!({"kind": "Status", "apiVersion": "v1", "status": "Success"})),
            None => status(404, "NotFound", &format!("{} \"{name}\" not found", resource.plural)),
        },
        (&Method::POST, Some(name), Some("token")) if resource.plural == "serviceaccounts" => {
            let Some(account) = objects.objects.get(&object_key(target, name)) else {
                return status(404, "NotFound", &format!("serviceaccounts \"{name}\" not found"));
            };
            let uid = account["metadata"]["uid"].clone();
            let seconds = body["spec"]["expirationSeconds"].as_u64().unwrap_or(3600);
            if seconds < 600 {
                return status(
                    422,
                    "Invalid",
                    &format!(
                        "spec.expirationSeconds: Invalid value: {seconds}: may not specify a duration less than 10 minutes"
                    ),
                );
            }
            let expiry = SystemTime::now() + Duration::from_secs(seconds);
            let token = format!("fake-sa-token.{:032x}{:032x}", rand::random::<u128>(), rand::random::<u128>());
            let bound = BoundToken { namespace: target.namespace.clone(), name: name.clone(), uid, expiry };
            objects.tokens.insert(token.clone(), bound);
            json_response(
                201,
                json!({
                    "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                    "metadata": {"name": name, "namespace": target.namespace, "creationTimestamp": null},
                    "spec": {"audiences": body["spec"]["audiences"].as_array().cloned().unwrap_or_default(), "expirationSeconds": seconds},
                    "status": {"token": token, "expirationTimestamp": clock::rfc3339(expiry)},
                }),
            )
        }
        _ => status(405, "MethodNotAllowed", "the fake API server does not emulate this call"),
    }
}

/// Fills in what the server owns (uid, resourceVersion, timestamps, managed fields).
fn stamp(
    objects: &mut KubeObjects,
    target: &Target,
    mut object: Value,
    existing: Option<Value>,
    manager: Option<&str>,
) -> Value {
    objects.resource_version += 1;
    let name =
        target.name.clone().or_else(|| object["metadata"]["name"].as_str().map(str::to_owned)).unwrap_or_default();
    let previous = existing.as_ref().map(|e| e["metadata"].clone()).unwrap_or(Value::Null);
    let generation = previous["generation"].as_u64().unwrap_or(0)
        + u64::from(existing.as_ref().is_none_or(|e| e.get("spec") != object.get("spec")));
    object["apiVersion"] = json!(target.resource.group_version);
    object["kind"] = json!(target.resource.kind);
    let metadata = object["metadata"].as_object_mut().map(std::mem::take).unwrap_or_default();
    let mut metadata = Value::Object(metadata);
    metadata["name"] = json!(name);
    if target.resource.namespaced {
        metadata["namespace"] = json!(target.namespace);
    }
    metadata["uid"] = previous.get("uid").cloned().unwrap_or_else(|| json!(format!("{:032x}", rand::random::<u128>())));
    metadata["creationTimestamp"] = previous.get("creationTimestamp").cloned().unwrap_or_else(|| json!(clock::now()));
    metadata["resourceVersion"] = json!(objects.resource_version.to_string());
    metadata["generation"] = json!(generation.max(1));
    if let Some(manager) = manager {
        metadata["managedFields"] = json!([{
            "manager": manager, "operation": "Apply", "apiVersion": target.resource.group_version,
            "time": clock::now(), "fieldsType": "FieldsV1", "fieldsV1": {},
        }]);
    }
    object["metadata"] = metadata;
    if target.resource.kind == "DaemonSet" {
        object["status"] = json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0});
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_grant_what_the_built_in_roles_grant() {
        let daemonsets = parse("/apis/apps/v1/namespaces/default/daemonsets/bcd").unwrap().resource;
        let nodes = parse("/api/v1/nodes").unwrap().resource;
        assert!(allowed(Some(ClusterRole::View), "get", daemonsets));
        assert!(!allowed(Some(ClusterRole::View), "patch", daemonsets));
        assert!(allowed(Some(ClusterRole::Edit), "patch", daemonsets));
        assert!(!allowed(Some(ClusterRole::Edit), "list", nodes));
        assert!(allowed(Some(ClusterRole::ClusterAdmin), "list", nodes));
        assert!(!allowed(None, "get", daemonsets));
    }

    #[test]
    fn paths_parse_into_resource_namespace_name_and_subresource() {
        let target = parse("/api/v1/namespaces/kube-system/serviceaccounts/bc/token").unwrap();
        assert_eq!(target.resource.kind, "ServiceAccount");
        assert_eq!((target.namespace.as_str(), target.name.as_deref()), ("kube-system", Some("bc")));
        assert_eq!(target.subresource.as_deref(), Some("token"));
        assert!(parse("/api/v1/pods").is_none());
    }
}
