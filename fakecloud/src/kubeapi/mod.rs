//! A fake Kubernetes API server per fake cluster, served over HTTPS with the cluster's CA:
//! discovery (`/version`, `/api`, `/apis`) and the OpenAPI v3 documents, namespaces, service
//! accounts and their TokenRequest tokens, secrets, config maps, Deployments (kept, not run),
//! DaemonSets and the pods the fake kubelets run for them ([`super::kubelet`]), cluster role
//! bindings that authorize those tokens (view, edit, cluster-admin), and the Nodes of the
//! cluster's pools. Writes keep `metadata.managedFields` as server-side apply does, with its
//! conflicts. Bodies are JSON, or the protobuf the typed clients send. Enough for plain kubectl
//! and the official clients.
//!
//! This file authenticates, authorizes and routes; `resources` names the kinds, `objects` keeps
//! them, `fields` is server-side apply's bookkeeping, `selectors` reads label and field
//! selectors, `nodes` makes the Node objects, `openapi` the documents kubectl validates with,
//! `protobuf` reads protobuf bodies.

mod fields;
mod nodes;
mod objects;
mod openapi;
mod protobuf;
mod resources;
mod selectors;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};

use super::gke::{ClusterKey, FakeCluster};
use super::{Shared, bearer, clock, json_response};
pub use nodes::{accelerators, node_labels, node_name};
use objects::{BoundToken, Refusal, Write, qualified};
pub use objects::{KubeObjects, ObjectKey, new_uid};
pub use resources::resource;
use resources::{Resource, Target, discovery, parse};
use selectors::Selector;

pub fn routes(shared: Arc<Shared>, key: ClusterKey) -> Router {
    Router::new().fallback(any(handle)).with_state((shared, key))
}

/// A Kubernetes `Status` failure.
fn status(code: u16, reason: &str, message: &str) -> Response {
    refused(Refusal { code, reason: "", message: message.to_owned(), causes: Vec::new() }, reason)
}

fn refused(refusal: Refusal, reason: &str) -> Response {
    let reason = if refusal.reason.is_empty() { reason } else { refusal.reason };
    let mut body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": refusal.message, "reason": reason, "code": refusal.code});
    if !refusal.causes.is_empty() {
        body["details"] = json!({"causes": refusal.causes});
    }
    json_response(refusal.code, body)
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

/// The built-in cluster roles the fake honours, weakest first: a service account bound to
/// several has the strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ClusterRole {
    View,
    Edit,
    ClusterAdmin,
}

impl ClusterRole {
    /// The role a binding's `roleRef.name` names, as Kubernetes names its built-in roles.
    fn named(name: &str) -> Option<ClusterRole> {
        match name {
            "view" => Some(ClusterRole::View),
            "edit" => Some(ClusterRole::Edit),
            "cluster-admin" => Some(ClusterRole::ClusterAdmin),
            _ => None,
        }
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
        .filter_map(|(_, binding)| ClusterRole::named(binding["roleRef"]["name"].as_str().unwrap_or_default()))
        .max();
    Some(Caller::ServiceAccount(format!("system:serviceaccount:{namespace}:{name}"), role))
}

/// Whether `role` may `verb` the resource: view reads namespaced objects, edit writes them,
/// cluster-admin does everything (as the built-in roles do, in the part the fake emulates).
fn allowed(role: Option<ClusterRole>, verb: &str, resource: &Resource) -> bool {
    let read = matches!(verb, "get" | "list" | "watch");
    match role {
        Some(ClusterRole::ClusterAdmin) => true,
        Some(ClusterRole::Edit) => resource.namespaced || (read && resource.plural == "namespaces"),
        // view reads neither secrets nor tokens, as the built-in role.
        Some(ClusterRole::View) => {
            read && (resource.namespaced || resource.plural == "namespaces")
                && !matches!(resource.plural, "serviceaccounts/token" | "secrets")
        }
        None => false,
    }
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
        && let Some(document) = discovery(uri.path()).or_else(|| openapi::openapi(uri.path()))
    {
        return json_response(200, document);
    }
    let Some(target) = parse(uri.path()) else {
        return status(404, "NotFound", &format!("the server could not find the requested resource ({})", uri.path()));
    };
    let verb = verb_of(&method, &target);
    let plural = target.resource.plural;
    let group = target.resource.group_version.rsplit_once('/').map(|(group, _)| group).unwrap_or_default();
    let checked_plural = if target.subresource.as_deref() == Some("token") { "serviceaccounts/token" } else { plural };
    let checked = Resource { plural: checked_plural, ..*target.resource };
    if !allowed(caller.role(), verb, &checked) {
        let name = target.name.clone().unwrap_or_default();
        let scope = if target.resource.namespaced && !target.namespace.is_empty() {
            format!(" in the namespace \"{}\"", target.namespace)
        } else {
            " at the cluster scope".into()
        };
        let message = format!(
            "{} \"{name}\" is forbidden: User \"{}\" cannot {verb} resource \"{checked_plural}\" in API group \"{group}\"{scope}",
            qualified(target.resource),
            caller.user()
        );
        return status(403, "Forbidden", &message);
    }
    let query: BTreeMap<String, String> = Query::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    let wants_table = headers.get("accept").and_then(|a| a.to_str().ok()).is_some_and(|a| a.contains("as=Table"));
    let selectors = (
        Selector::parse(query.get("labelSelector").map(String::as_str).unwrap_or_default()),
        Selector::parse(query.get("fieldSelector").map(String::as_str).unwrap_or_default()),
    );
    let (labels, field_selector) = match selectors {
        (Ok(labels), Ok(fields)) => (labels, fields),
        (Err(message), _) | (_, Err(message)) => return status(400, "BadRequest", &message),
    };
    if plural == "nodes" {
        if method != Method::GET {
            return status(405, "MethodNotAllowed", "the fake's nodes are its GKE node pools'");
        }
        let cluster_name = &key.2;
        let nodes: Vec<Value> = cluster
            .nodes()
            .iter()
            .map(|n| nodes::node_json(cluster, cluster_name, n))
            .filter(|n| labels.matches_labels(&n["metadata"]["labels"]) && field_selector.matches_fields(n))
            .collect();
        return match &target.name {
            Some(name) => match nodes.into_iter().find(|n| n["metadata"]["name"] == name.as_str()) {
                Some(node) if wants_table => json_response(200, nodes::table("Node", &[node])),
                Some(node) => json_response(200, node),
                None => status(404, "NotFound", &format!("nodes \"{name}\" not found")),
            },
            None => list_response(target.resource, nodes, "1", wants_table),
        };
    }
    let content_type = headers.get("content-type").and_then(|c| c.to_str().ok()).unwrap_or_default();
    // A delete's options are not read: the fake deletes at once, as a background deletion ends.
    let body: Value = if body.is_empty() || method == Method::DELETE {
        Value::Null
    } else if content_type.starts_with("application/vnd.kubernetes.protobuf") {
        match protobuf::decode(&body) {
            Ok(value) => value,
            Err(message) => return status(415, "UnsupportedMediaType", &message),
        }
    } else {
        // kubectl and the official clients send apply patches as JSON, which is YAML too; the
        // fake reads only that form.
        match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(_) => {
                return status(415, "UnsupportedMediaType", "the fake API server reads JSON and protobuf bodies only");
            }
        }
    };
    // As the real server names an Update's manager: the query's, else the user agent's product.
    let agent = headers.get("user-agent").and_then(|a| a.to_str().ok()).unwrap_or_default();
    let manager = query
        .get("fieldManager")
        .cloned()
        .unwrap_or_else(|| agent.split('/').next().unwrap_or_default().chars().take(128).collect());
    let objects = &mut world.gke.clusters.get_mut(&key).expect("looked up above").kube;
    let Target { resource, namespace, name, subresource } = &target;
    let name = name.as_deref();
    let written = |result: Result<(Value, bool), Refusal>| match result {
        Ok((object, created)) => json_response(if created { 201 } else { 200 }, object),
        Err(refusal) => refused(refusal, ""),
    };
    match (&method, name, subresource.as_deref()) {
        (&Method::GET, None, None) => {
            let items = objects.list(resource, namespace, &labels, &field_selector);
            list_response(resource, items, &objects.resource_version(), wants_table)
        }
        (&Method::GET, Some(name), None | Some("status")) => match objects.get(resource, namespace, name) {
            Some(object) if wants_table => {
                json_response(200, nodes::table(resource.kind, std::slice::from_ref(object)))
            }
            Some(object) => json_response(200, object.clone()),
            None => status(404, "NotFound", &format!("{} \"{name}\" not found", qualified(resource))),
        },
        (&Method::POST, None, None) => written(objects.write(resource, namespace, None, body, &manager, Write::Create)),
        (&Method::PUT, Some(name), None) => {
            written(objects.write(resource, namespace, Some(name), body, &manager, Write::Replace))
        }
        (&Method::PATCH, Some(name), None) if content_type.starts_with("application/apply-patch") => {
            if !query.contains_key("fieldManager") {
                return status(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                );
            }
            let force = query.get("force").is_some_and(|f| f == "true");
            written(objects.write(resource, namespace, Some(name), body, &manager, Write::Apply { force }))
        }
        (&Method::PATCH, Some(name), None)
            if content_type.starts_with("application/merge-patch+json")
                || content_type.starts_with("application/strategic-merge-patch+json") =>
        {
            written(objects.write(resource, namespace, Some(name), body, &manager, Write::Merge))
        }
        (&Method::PATCH, Some(_), None) => {
            status(415, "UnsupportedMediaType", &format!("the fake API server does not read {content_type} patches"))
        }
        (&Method::DELETE, Some(name), None) => match objects.delete(resource, namespace, name) {
            Ok(object) if resource.plural == "namespaces" => json_response(200, object),
            Ok(object) => json_response(
                200,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                       "details": {"name": name, "group": group, "kind": plural, "uid": object["metadata"]["uid"]}}),
            ),
            Err(refusal) => refused(refusal, ""),
        },
        (&Method::DELETE, None, None) => {
            let items = objects.list(resource, namespace, &labels, &field_selector);
            for item in &items {
                let (ns, name) =
                    (item["metadata"]["namespace"].as_str().unwrap_or_default(), &item["metadata"]["name"]);
                let _ = objects.delete(resource, ns, name.as_str().unwrap_or_default());
            }
            list_response(resource, items, &objects.resource_version(), false)
        }
        (&Method::POST, Some(name), Some("token")) if resource.plural == "serviceaccounts" => {
            token_request(objects, namespace, name, &body)
        }
        _ => status(405, "MethodNotAllowed", "the fake API server does not emulate this call"),
    }
}

fn list_response(resource: &Resource, items: Vec<Value>, version: &str, wants_table: bool) -> Response {
    if wants_table {
        return json_response(200, nodes::table(resource.kind, &items));
    }
    json_response(
        200,
        json!({"kind": format!("{}List", resource.kind), "apiVersion": resource.group_version,
               "metadata": {"resourceVersion": version}, "items": items}),
    )
}

/// `POST .../serviceaccounts/NAME/token`: a token bound to the account.
fn token_request(objects: &mut KubeObjects, namespace: &str, name: &str, body: &Value) -> Response {
    let Some(account) = objects.get(resources::resource("serviceaccounts"), namespace, name) else {
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
    let bound = BoundToken { namespace: namespace.to_owned(), name: name.to_owned(), uid, expiry };
    objects.tokens.insert(token.clone(), bound);
    json_response(
        201,
        json!({
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
            "spec": {"audiences": body["spec"]["audiences"].as_array().cloned().unwrap_or_default(), "expirationSeconds": seconds},
            "status": {"token": token, "expirationTimestamp": clock::rfc3339(expiry)},
        }),
    )
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
}
