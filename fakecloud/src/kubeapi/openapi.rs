//! The OpenAPI v3 documents kubectl reads before it sends an object (`apply`, `create -f`):
//! `/openapi/v3` lists a document per group version, and each document has the paths of the
//! kinds the fake serves, with the `fieldValidation` parameter on their PATCH, as a real server
//! has it. That tells kubectl the server validates fields itself, so it leaves validation to
//! the server (`?fieldValidation=Strict`) as it does against a real cluster, instead of failing
//! to download a schema. `/openapi/v2` (which kubectl asks for as protobuf) stays unserved:
//! kubectl falls back to it only when v3 fails.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::resources::{RESOURCES, Resource};

/// `api/v1`, `apis/apps/v1`: a group version as OpenAPI v3 names its document.
fn document_path(group_version: &str) -> String {
    if group_version.contains('/') { format!("apis/{group_version}") } else { format!("api/{group_version}") }
}

/// The group versions the fake serves kinds of.
fn group_versions() -> Vec<&'static str> {
    let mut versions: Vec<&str> = RESOURCES.iter().map(|r| r.group_version).collect();
    versions.sort_unstable();
    versions.dedup();
    versions
}

fn gvk(resource: &Resource) -> Value {
    let (group, version) = resource.group_version.rsplit_once('/').unwrap_or(("", resource.group_version));
    json!({"group": group, "version": version, "kind": resource.kind})
}

/// The schema's name, as the real documents name it (`io.k8s.api.apps.v1.DaemonSet`).
fn schema_name(resource: &Resource) -> String {
    let package = match resource.group_version.split_once('/') {
        Some((group, version)) => format!("{}.{version}", group.split('.').next().unwrap_or(group)),
        None => format!("core.{}", resource.group_version),
    };
    format!("io.k8s.api.{package}.{}", resource.kind)
}

/// The document of one group version.
fn document(group_version: &str) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let field_validation = json!({"name": "fieldValidation", "in": "query", "schema": {"type": "string"},
        "description": "Strict, Warn or Ignore: what the server does with unknown or duplicate fields."});
    for resource in RESOURCES.iter().filter(|r| r.group_version == group_version) {
        let base = match resource.namespaced {
            true => format!("/{}/namespaces/{{namespace}}/{}", document_path(group_version), resource.plural),
            false => format!("/{}/{}", document_path(group_version), resource.plural),
        };
        let schema = schema_name(resource);
        let reference = json!({"$ref": format!("#/components/schemas/{schema}")});
        let operation = |action: &str, body: bool| {
            let mut operation = json!({
                "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk(resource),
                "parameters": [field_validation.clone()],
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": reference.clone()}}}},
            });
            if body {
                operation["requestBody"] = json!({"content": {"application/json": {"schema": reference.clone()}}});
            }
            operation
        };
        paths.insert(base.clone(), json!({"post": operation("post", true)}));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": operation("get", false), "put": operation("put", true), "patch": operation("patch", true),
                   "delete": operation("delete", false)}),
        );
        schemas.insert(
            schema,
            json!({
                "type": "object", "x-kubernetes-group-version-kind": [gvk(resource)],
                "description": format!("A {} as the fake cluster keeps it.", resource.kind),
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": {"type": "object"}},
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.6-gke.1200"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// The documents' index: each group version's document, by a URL that changes with it.
fn index() -> Value {
    let paths: Map<String, Value> = group_versions()
        .into_iter()
        .map(|group_version| {
            let path = document_path(group_version);
            let hash = Sha256::digest(document(group_version).to_string().as_bytes());
            let hash: String = hash.iter().take(32).map(|b| format!("{b:02X}")).collect();
            let url = format!("/openapi/v3/{path}?hash={hash}");
            (path, json!({"serverRelativeURL": url}))
        })
        .collect();
    json!({"paths": paths})
}

/// The document at `path`, if it is one.
pub fn openapi(path: &str) -> Option<Value> {
    let path = path.trim_end_matches('/');
    if path == "/openapi/v3" {
        return Some(index());
    }
    let wanted = path.strip_prefix("/openapi/v3/")?;
    group_versions().into_iter().find(|gv| document_path(gv) == wanted).map(document)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_names_a_document_per_group_version_and_each_patch_takes_field_validation() {
        let index = openapi("/openapi/v3").unwrap();
        let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"].as_str().unwrap();
        let document = openapi(url.split('?').next().unwrap()).unwrap();
        let patch = &document["paths"]["/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "apps", "version": "v1", "kind": "DaemonSet"})
        );
        assert_eq!(patch["parameters"][0]["name"], "fieldValidation");
        assert!(document["components"]["schemas"]["io.k8s.api.apps.v1.DaemonSet"].is_object());
        let core = openapi("/openapi/v3/api/v1").unwrap();
        assert!(core["paths"]["/api/v1/namespaces/{name}"]["patch"].is_object(), "namespaces are cluster-scoped");
        assert!(openapi("/openapi/v3/apis/batch/v1").is_none());
        assert!(openapi("/openapi/v2").is_none());
    }
}
