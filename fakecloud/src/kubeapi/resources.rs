//! The kinds the fake Kubernetes API serves, how a request path names one of them, and the
//! discovery documents kubectl and the official clients read first. Deployments are kept as
//! objects only: no pods run for them (the fake kubelets run DaemonSets').

use serde_json::{Value, json};

/// A resource kind the fake serves.
pub struct Resource {
    /// `v1`, `apps/v1`.
    pub group_version: &'static str,
    /// The path segment (`daemonsets`).
    pub plural: &'static str,
    /// The kind (`DaemonSet`).
    pub kind: &'static str,
    /// Whether its objects live in a namespace.
    pub namespaced: bool,
    /// kubectl's short names.
    pub short_names: &'static [&'static str],
}

pub const RESOURCES: [Resource; 9] = [
    Resource { group_version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, short_names: &["ns"] },
    Resource {
        group_version: "v1",
        plural: "serviceaccounts",
        kind: "ServiceAccount",
        namespaced: true,
        short_names: &["sa"],
    },
    Resource { group_version: "v1", plural: "secrets", kind: "Secret", namespaced: true, short_names: &[] },
    Resource { group_version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, short_names: &["cm"] },
    Resource { group_version: "v1", plural: "pods", kind: "Pod", namespaced: true, short_names: &["po"] },
    Resource { group_version: "v1", plural: "nodes", kind: "Node", namespaced: false, short_names: &["no"] },
    Resource {
        group_version: "apps/v1",
        plural: "daemonsets",
        kind: "DaemonSet",
        namespaced: true,
        short_names: &["ds"],
    },
    Resource {
        group_version: "apps/v1",
        plural: "deployments",
        kind: "Deployment",
        namespaced: true,
        short_names: &["deploy"],
    },
    Resource {
        group_version: "rbac.authorization.k8s.io/v1",
        plural: "clusterrolebindings",
        kind: "ClusterRoleBinding",
        namespaced: false,
        short_names: &[],
    },
];

/// The resource of a plural name.
pub fn resource(plural: &str) -> &'static Resource {
    RESOURCES.iter().find(|r| r.plural == plural).expect("a plural of RESOURCES")
}

/// A parsed resource path.
pub struct Target {
    pub resource: &'static Resource,
    /// Empty for cluster-scoped kinds and for lists across namespaces.
    pub namespace: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

pub fn parse(path: &str) -> Option<Target> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group_version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return None,
    };
    // `/api/v1/namespaces/NS` is the namespace itself; `/api/v1/namespaces/NS/secrets` is inside it.
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
    if !resource.namespaced && !namespace.is_empty() {
        return None;
    }
    Some(Target { resource, namespace, name, subresource })
}

pub fn discovery(path: &str) -> Option<Value> {
    let resources = |group_version: &str| {
        let list: Vec<Value> = RESOURCES
            .iter()
            .filter(|r| r.group_version == group_version)
            .flat_map(|r| {
                let mut entries = vec![json!({
                    "name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced, "kind": r.kind,
                    "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update"],
                    "shortNames": r.short_names,
                })];
                if r.plural == "serviceaccounts" {
                    entries.push(json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true,
                        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}));
                }
                if r.plural == "daemonsets" {
                    entries.push(json!({"name": "daemonsets/status", "singularName": "", "namespaced": true,
                        "kind": "DaemonSet", "verbs": ["get"]}));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_into_resource_namespace_name_and_subresource() {
        let target = parse("/api/v1/namespaces/kube-system/serviceaccounts/bc/token").unwrap();
        assert_eq!(target.resource.kind, "ServiceAccount");
        assert_eq!((target.namespace.as_str(), target.name.as_deref()), ("kube-system", Some("bc")));
        assert_eq!(target.subresource.as_deref(), Some("token"));
        let namespace = parse("/api/v1/namespaces/bc-system").unwrap();
        assert_eq!((namespace.resource.kind, namespace.name.as_deref()), ("Namespace", Some("bc-system")));
        let across = parse("/apis/apps/v1/daemonsets").unwrap();
        assert_eq!((across.resource.kind, across.namespace.as_str()), ("DaemonSet", ""));
        assert!(parse("/api/v1/limitranges").is_none());
        assert!(parse("/api/v1/namespaces/x/nodes").is_none(), "nodes are not namespaced");
    }
}
