//! The capability of a cluster's own Kubernetes API that the control plane uses: an identity
//! (service account, cluster role binding, short-lived token), server-side apply, and nodes.

use serde_json::Value;

use super::error::ProviderResult;

/// The built-in cluster roles we bind accounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterRole {
    /// Read most things in namespaces.
    View,
    /// Read and write most things in namespaces.
    Edit,
    /// Everything.
    ClusterAdmin,
}

impl ClusterRole {
    /// The role's name in Kubernetes.
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterRole::View => "view",
            ClusterRole::Edit => "edit",
            ClusterRole::ClusterAdmin => "cluster-admin",
        }
    }

    /// The role named `name`, if it is one of ours.
    pub fn parse(name: &str) -> Option<ClusterRole> {
        [ClusterRole::View, ClusterRole::Edit, ClusterRole::ClusterAdmin].into_iter().find(|r| r.as_str() == name)
    }
}

/// A token minted by TokenRequest. `Debug` hides the token.
#[derive(Clone, PartialEq)]
pub struct IssuedToken {
    /// The bearer token.
    pub token: String,
    /// When it expires, as the API server said (RFC 3339).
    pub expiration_timestamp: String,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken").field("expiration_timestamp", &self.expiration_timestamp).finish()
    }
}

/// Whether a server-side apply takes over fields another manager owns (`force=true`) or is
/// refused with a conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Force {
    /// Take the fields over: only for objects that are ours alone (kubeconfig bindings).
    Yes,
    /// Be refused (409) rather than take a field another manager set.
    No,
}

/// An object of the kinds the control plane manages, by kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `Namespace`, `ServiceAccount`, `Secret`, `DaemonSet`, ...
    pub kind: String,
    /// Empty for a cluster-wide object.
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.namespace.as_str() {
            "" => write!(f, "{} {:?}", self.kind, self.name),
            namespace => write!(f, "{} {namespace}/{}", self.kind, self.name),
        }
    }
}

/// A node, as much as the control plane reads of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Its labels.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Whether its `Ready` condition is `True`.
    pub ready: bool,
    /// The machine the provider runs it on (`spec.providerID`, `gce://<project>/<zone>/<instance>`
    /// on GKE); empty when the cluster does not say.
    pub provider_id: String,
}

/// The namespace of the service accounts kubeconfigs are issued for.
pub const CREDENTIAL_NAMESPACE: &str = "kube-system";

/// The prefix of those accounts and of their cluster role bindings: `bc-u-<hash>-<role>`.
pub const CREDENTIAL_PREFIX: &str = "bc-u-";

/// The shortest token lifetime we ask for: the API server's own minimum is 10 minutes.
pub const MIN_TOKEN_SECONDS: u32 = 600;

/// One cluster's Kubernetes API.
#[async_trait::async_trait]
pub trait ClusterApi: Send + Sync {
    /// Creates the service account, or finds it there.
    async fn service_account_ensure(&self, namespace: &str, name: &str) -> ProviderResult<()>;
    /// Binds the service account to a cluster role (creates or replaces the binding `name`).
    async fn cluster_role_binding_ensure(
        &self,
        name: &str,
        role: ClusterRole,
        namespace: &str,
        service_account: &str,
    ) -> ProviderResult<()>;
    /// Mints a token for the account, valid `expiration_seconds` (at least [`MIN_TOKEN_SECONDS`]).
    async fn token_request(
        &self,
        namespace: &str,
        service_account: &str,
        expiration_seconds: u32,
    ) -> ProviderResult<IssuedToken>;
    /// Server-side apply of one object (it names its own apiVersion, kind, namespace and name).
    async fn apply(&self, object: &Value, field_manager: &str, force: Force) -> ProviderResult<Value>;
    /// Reads one object; `None` when there is none.
    async fn object_get(&self, object: &ObjectRef) -> ProviderResult<Option<Value>>;
    /// Deletes one object; one already gone is no error.
    async fn object_delete(&self, object: &ObjectRef) -> ProviderResult<()>;
    /// The objects of `kind` in every namespace whose labels match `selector` (`k=v,...`).
    async fn objects_labelled(&self, kind: &str, selector: &str) -> ProviderResult<Vec<ObjectRef>>;
    /// The objects of `kind` in `namespace`, as the cluster has them; none when the cluster
    /// serves no such kind.
    async fn objects_in_namespace(&self, kind: &str, namespace: &str) -> ProviderResult<Vec<Value>>;
    /// Lists the nodes.
    async fn nodes_list(&self) -> ProviderResult<Vec<Node>>;
    /// The names of the service accounts in `namespace`.
    async fn service_account_names(&self, namespace: &str) -> ProviderResult<Vec<String>>;
    /// Deletes a service account (its tokens stop working); one already gone is no error.
    async fn service_account_delete(&self, namespace: &str, name: &str) -> ProviderResult<()>;
    /// The names of the cluster role bindings.
    async fn cluster_role_binding_names(&self) -> ProviderResult<Vec<String>>;
    /// Deletes a cluster role binding; one already gone is no error.
    async fn cluster_role_binding_delete(&self, name: &str) -> ProviderResult<()>;
}
