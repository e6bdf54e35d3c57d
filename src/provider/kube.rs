//! The cluster-API client: a small reqwest client on the Kubernetes REST paths it needs
//! (service accounts, cluster role bindings, TokenRequest, server-side apply, nodes), trusting
//! only the cluster's own CA.
//!
//! Why not the `kube` crate: it brings `k8s-openapi` (the largest compile of the tree) for five
//! calls, and a second HTTP/TLS stack beside reqwest's; these paths are stable `v1` APIs.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::cluster_api::{ClusterApi, ClusterRole, Force, IssuedToken, MIN_TOKEN_SECONDS, Node, ObjectRef};
use super::error::{ErrorKind, ProviderError, ProviderResult};
use super::google_auth::TokenSource;

const PROVIDER: &str = "kubernetes";

/// How the client authenticates.
#[derive(Clone)]
pub enum KubeAuth {
    /// A bearer token (a TokenRequest token). Hidden from `Debug`.
    Token(String),
    /// A Google access token of a service account: how GKE clusters accept the adapter's account.
    Google(TokenSource),
}

impl std::fmt::Debug for KubeAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KubeAuth::Token(_) => f.write_str("Token(<hidden>)"),
            KubeAuth::Google(source) => f.debug_tuple("Google").field(source).finish(),
        }
    }
}

/// A client of one cluster's API.
#[derive(Clone, Debug)]
pub struct KubeClient {
    base_url: String,
    http: reqwest::Client,
    auth: KubeAuth,
}

impl KubeClient {
    /// A client of the API at `endpoint` (`host` or `host:port`, as GKE's `endpoint` says),
    /// trusting only `ca_pem`.
    pub fn new(endpoint: &str, ca_pem: &str, auth: KubeAuth) -> ProviderResult<Self> {
        let ca = reqwest::Certificate::from_pem(ca_pem.as_bytes()).map_err(|_| {
            ProviderError::new(ErrorKind::Permanent, PROVIDER, "the cluster CA is not a PEM certificate")
        })?;
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .build()
            .map_err(|error| ProviderError::transport(PROVIDER, error))?;
        Ok(Self { base_url: format!("https://{}", endpoint.trim_start_matches("https://")), http, auth })
    }

    async fn token(&self) -> ProviderResult<String> {
        match &self.auth {
            KubeAuth::Token(token) => Ok(token.clone()),
            KubeAuth::Google(source) => source.access_token().await,
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> ProviderResult<Value> {
        let mut request =
            self.http.request(method, format!("{}{path}", self.base_url)).bearer_auth(self.token().await?);
        if let Some(body) = body {
            request = request.header("content-type", content_type).body(body.to_string());
        }
        let response = request.send().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
        let status = response.status();
        let request_id = response.headers().get("audit-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = response.bytes().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|error| ProviderError::decode(PROVIDER, path, error));
        }
        let mut error = classify(status, &bytes);
        error.request_id = request_id;
        Err(error)
    }

    /// The `metadata.name` of each item a list path returns.
    async fn names(&self, path: &str) -> ProviderResult<Vec<String>> {
        let list = self.call(Method::GET, path, "", None).await?;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        Ok(items.iter().filter_map(|item| item["metadata"]["name"].as_str().map(str::to_owned)).collect())
    }

    /// Deletes the object at `path`; a 404 means it is gone already.
    async fn delete(&self, path: &str) -> ProviderResult<()> {
        match self.call(Method::DELETE, path, "", None).await {
            Err(error) if error.status == Some(404) => Ok(()),
            other => other.map(drop),
        }
    }
}

/// A `Status` body: `{"kind": "Status", "reason": "Forbidden", "message": "..."}`.
pub fn classify(status: StatusCode, body: &[u8]) -> ProviderError {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Status {
        reason: String,
        message: String,
    }
    let parsed: Status = serde_json::from_slice(body).unwrap_or_default();
    let code = status.as_u16();
    // A 409 on create means "already there"; on an apply it means another manager owns a field.
    let kind = ProviderError::kind_of_status(code);
    let message = if parsed.message.is_empty() { format!("HTTP {code}") } else { parsed.message };
    ProviderError { status: Some(code), reason: parsed.reason, ..ProviderError::new(kind, PROVIDER, message) }
}

/// The plural resource path of an object, from its apiVersion and kind, for the kinds we apply.
/// Where a kind is served: its API group path, its plural, and whether it lives in a namespace.
fn kind_path(kind: &str) -> ProviderResult<(&'static str, &'static str, bool)> {
    Ok(match kind {
        "DaemonSet" => ("/apis/apps/v1", "daemonsets", true),
        "Deployment" => ("/apis/apps/v1", "deployments", true),
        "StatefulSet" => ("/apis/apps/v1", "statefulsets", true),
        "Job" => ("/apis/batch/v1", "jobs", true),
        "Pod" => ("/api/v1", "pods", true),
        "Service" => ("/api/v1", "services", true),
        "ServiceAccount" => ("/api/v1", "serviceaccounts", true),
        "ConfigMap" => ("/api/v1", "configmaps", true),
        "Secret" => ("/api/v1", "secrets", true),
        "Namespace" => ("/api/v1", "namespaces", false),
        "ClusterRoleBinding" => ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", false),
        "ClusterRole" => ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", false),
        _ => return Err(ProviderError::new(ErrorKind::Permanent, PROVIDER, format!("cannot manage a {kind:?}"))),
    })
}

/// The REST path of one object.
fn object_path(object: &ObjectRef) -> ProviderResult<String> {
    let (group, plural, namespaced) = kind_path(&object.kind)?;
    if object.name.is_empty() {
        return Err(ProviderError::new(ErrorKind::Permanent, PROVIDER, "the object has no metadata.name"));
    }
    let name = &object.name;
    Ok(if namespaced {
        let namespace = if object.namespace.is_empty() { "default" } else { object.namespace.as_str() };
        format!("{group}/namespaces/{namespace}/{plural}/{name}")
    } else {
        format!("{group}/{plural}/{name}")
    })
}

/// The reference of an object document (its kind, namespace and name).
fn object_ref(object: &Value) -> ObjectRef {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    ObjectRef {
        kind: text(&object["kind"]),
        namespace: text(&object["metadata"]["namespace"]),
        name: text(&object["metadata"]["name"]),
    }
}

/// Percent-encodes a query value (a label selector holds `/`, `=` and `,`).
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[async_trait::async_trait]
impl ClusterApi for KubeClient {
    async fn service_account_ensure(&self, namespace: &str, name: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "serviceAccounts.apply", async {
            let body = json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": namespace}
            });
            let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts");
            match self.call(Method::POST, &path, "application/json", Some(&body)).await {
                Err(error) if error.status == Some(409) => Ok(()),
                other => other.map(drop),
            }
        })
        .await
    }

    async fn cluster_role_binding_ensure(
        &self,
        name: &str,
        role: ClusterRole,
        namespace: &str,
        service_account: &str,
    ) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "clusterRoleBindings.apply", async {
            // Applied rather than created: the role of a binding cannot change, but apply replaces
            // the subjects, and a second pass finds the same binding.
            let binding = json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role.as_str()},
                "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
            });
            self.apply(&binding, "better-compute", Force::Yes).await.map(drop)
        })
        .await
    }

    async fn token_request(
        &self,
        namespace: &str,
        service_account: &str,
        expiration_seconds: u32,
    ) -> ProviderResult<IssuedToken> {
        crate::measured::provider(PROVIDER, "serviceAccounts.createToken", async {
            let body = json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": expiration_seconds.max(MIN_TOKEN_SECONDS)},
            });
            let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token");
            let answer = self.call(Method::POST, &path, "application/json", Some(&body)).await?;
            let token = answer["status"]["token"].as_str().unwrap_or_default();
            let expires = answer["status"]["expirationTimestamp"].as_str().unwrap_or_default();
            if token.is_empty() || expires.is_empty() {
                return Err(ProviderError::decode(
                    PROVIDER,
                    "the TokenRequest",
                    "no status.token or expirationTimestamp",
                ));
            }
            Ok(IssuedToken { token: token.to_owned(), expiration_timestamp: expires.to_owned() })
        })
        .await
    }

    async fn apply(&self, object: &Value, field_manager: &str, force: Force) -> ProviderResult<Value> {
        crate::measured::provider(PROVIDER, "objects.apply", async {
            let force = if force == Force::Yes { "&force=true" } else { "" };
            let path =
                format!("{}?fieldManager={}{force}", object_path(&object_ref(object))?, query_value(field_manager));
            self.call(Method::PATCH, &path, "application/apply-patch+yaml", Some(object)).await
        })
        .await
    }

    async fn object_get(&self, object: &ObjectRef) -> ProviderResult<Option<Value>> {
        crate::measured::provider(PROVIDER, "objects.get", async {
            match self.call(Method::GET, &object_path(object)?, "", None).await {
                Ok(found) => Ok(Some(found)),
                Err(error) if error.status == Some(404) => Ok(None),
                Err(error) => Err(error),
            }
        })
        .await
    }

    async fn object_delete(&self, object: &ObjectRef) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "objects.delete", async { self.delete(&object_path(object)?).await }).await
    }

    async fn objects_labelled(&self, kind: &str, selector: &str) -> ProviderResult<Vec<ObjectRef>> {
        crate::measured::provider(PROVIDER, "objects.list", async {
            let (group, plural, _) = kind_path(kind)?;
            let path = format!("{group}/{plural}?labelSelector={}", query_value(selector));
            let list = self.call(Method::GET, &path, "", None).await?;
            let items = list["items"].as_array().cloned().unwrap_or_default();
            Ok(items
                .iter()
                .map(|item| ObjectRef { kind: kind.to_owned(), ..object_ref(item) })
                .filter(|object| !object.name.is_empty())
                .collect())
        })
        .await
    }

    async fn objects_in_namespace(&self, kind: &str, namespace: &str) -> ProviderResult<Vec<Value>> {
        crate::measured::provider(PROVIDER, "objects.list", async {
            let (group, plural, _) = kind_path(kind)?;
            match self.call(Method::GET, &format!("{group}/namespaces/{namespace}/{plural}"), "", None).await {
                Ok(list) => Ok(list["items"].as_array().cloned().unwrap_or_default()),
                Err(error) if error.status == Some(404) => Ok(Vec::new()),
                Err(error) => Err(error),
            }
        })
        .await
    }

    async fn nodes_list(&self) -> ProviderResult<Vec<Node>> {
        crate::measured::provider(PROVIDER, "nodes.list", async {
            let list = self.call(Method::GET, "/api/v1/nodes", "", None).await?;
            let items = list["items"].as_array().cloned().unwrap_or_default();
            Ok(items
                .iter()
                .map(|node| Node {
                    name: node["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
                    labels: serde_json::from_value::<BTreeMap<String, String>>(node["metadata"]["labels"].clone())
                        .unwrap_or_default(),
                    ready: node["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True"),
                    provider_id: node["spec"]["providerID"].as_str().unwrap_or_default().to_owned(),
                })
                .collect())
        })
        .await
    }

    async fn service_account_names(&self, namespace: &str) -> ProviderResult<Vec<String>> {
        crate::measured::provider(PROVIDER, "serviceAccounts.list", async {
            self.names(&format!("/api/v1/namespaces/{namespace}/serviceaccounts")).await
        })
        .await
    }

    async fn service_account_delete(&self, namespace: &str, name: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "serviceAccounts.delete", async {
            self.delete(&format!("/api/v1/namespaces/{namespace}/serviceaccounts/{name}")).await
        })
        .await
    }

    async fn cluster_role_binding_names(&self) -> ProviderResult<Vec<String>> {
        crate::measured::provider(PROVIDER, "clusterRoleBindings.list", async {
            self.names("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings").await
        })
        .await
    }

    async fn cluster_role_binding_delete(&self, name: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "clusterRoleBindings.delete", async {
            self.delete(&format!("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{name}")).await
        })
        .await
    }
}

/// A kubeconfig for `cluster` at `endpoint`, trusting `ca_pem`, authenticating with `token`:
/// YAML in block style with the keys in kubectl's order, as `kubectl config view --raw` writes
/// it. It holds the token: write it where only its owner reads.
pub fn kubeconfig(cluster: &str, endpoint: &str, ca_pem: &str, user: &str, token: &str) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let server = format!("https://{}", endpoint.trim_start_matches("https://"));
    let [cluster, user, token, server, ca] = [cluster, user, token, server.as_str(), ca.as_str()].map(yaml_scalar);
    format!(
        "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca}
    server: {server}
  name: {cluster}
contexts:
- context:
    cluster: {cluster}
    namespace: default
    user: {user}
  name: {cluster}
current-context: {cluster}
kind: Config
preferences: {{}}
users:
- name: {user}
  user:
    token: {token}
"
    )
}

/// `text` as a YAML scalar that reads back as that string under YAML 1.1 and 1.2 alike: plain
/// when it is made of characters no YAML reader gives a meaning to (names, base64, a URL, a
/// token) and cannot be read as a boolean, null or number; otherwise double-quoted, with JSON's
/// escapes (each of which is a YAML escape).
fn yaml_scalar(text: &str) -> String {
    let plain = text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+' | '=' | ':'))
        && !text.ends_with(':')
        // YAML 1.1 reads these as booleans or null, whatever their case.
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain { text.to_owned() } else { serde_json::Value::from(text).to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_map_to_their_resource_paths() {
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bcd", "namespace": "kube-system"}});
        assert_eq!(object_path(&object_ref(&ds)).unwrap(), "/apis/apps/v1/namespaces/kube-system/daemonsets/bcd");
        let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"}});
        assert_eq!(object_path(&object_ref(&crb)).unwrap(), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/b");
        let unknown = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
        assert_eq!(object_path(&object_ref(&unknown)).unwrap_err().kind, ErrorKind::Permanent);
    }

    #[test]
    fn a_kubeconfig_is_block_yaml_that_reads_back_as_given() {
        let config = kubeconfig("bc-k-one", "127.0.0.1:6443", "-----BEGIN CERTIFICATE-----\n", "bc-u-1-view", "ey.J:w");
        assert!(config.starts_with("apiVersion: v1\nclusters:\n- cluster:\n"), "{config}");
        assert!(!config.contains('{') || config.contains("preferences: {}"), "block style: {config}");
        let read: serde_json::Value = serde_yaml::from_str(&config).unwrap();
        assert_eq!(read["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443");
        assert_eq!(read["clusters"][0]["name"], "bc-k-one");
        assert_eq!(read["contexts"][0]["context"]["user"], "bc-u-1-view");
        assert_eq!(read["users"][0]["user"]["token"], "ey.J:w");
        assert_eq!(read["current-context"], "bc-k-one");
        use base64::Engine;
        let ca = read["clusters"][0]["cluster"]["certificate-authority-data"].as_str().unwrap();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(ca).unwrap(), b"-----BEGIN CERTIFICATE-----\n");
    }

    #[test]
    fn scalars_that_yaml_would_read_otherwise_are_quoted() {
        for text in
            ["yes", "No", "on", "null", "~", "", "123", "1.5", "-x", "a: b", "a #b", "x:", "\"q\"", "line\nbreak"]
        {
            let quoted = yaml_scalar(text);
            assert!(quoted.starts_with('"'), "{text:?} is {quoted}");
            let read: serde_json::Value = serde_yaml::from_str(&format!("k: {quoted}")).unwrap();
            assert_eq!(read["k"], text, "{quoted}");
        }
        for text in ["bc-k-abc", "https://10.0.0.1:443", "LS0tLS1CRUdJTi+/=", "eyJhbGciOi.J9.x_y-z"] {
            assert_eq!(yaml_scalar(text), text);
            let read: serde_json::Value = serde_yaml::from_str(&format!("k: {text}")).unwrap();
            assert_eq!(read["k"], text);
        }
    }

    #[test]
    fn debug_hides_the_token() {
        assert!(!format!("{:?}", KubeAuth::Token("secret-token".into())).contains("secret"));
    }
}
