//! The few Compute Engine v1 calls tenant networks need on a GKE account: VPC networks in
//! custom-subnet mode (`autoCreateSubnetworks: false`) and their regional subnetworks, each
//! create and delete answered by a compute operation; and the delete of a GKE node's instance,
//! which its managed instance group makes again (a node's remediation).
//!
//! It shares the GKE adapter's project and access tokens (one service account speaks for the
//! account). Its base URL is `https://compute.googleapis.com/` for Google's own, or the account's
//! endpoint override (the fake cloud serves both APIs), with paths under `compute/v1/`.

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ErrorKind, ProviderError, ProviderResult};
use super::google_auth::{GoogleCall, TokenSource};
use super::pacing::AccountPacer;

const PROVIDER: &str = "gce";

/// Compute Engine's own base URL.
pub const COMPUTE_BASE_URL: &str = "https://compute.googleapis.com/";

/// The Compute Engine adapter for one project.
#[derive(Clone, Debug)]
pub struct Gce {
    base_url: String,
    project: String,
    http: reqwest::Client,
    tokens: TokenSource,
    /// The account's pacer, shared with the GKE adapter it came from.
    pacer: Option<AccountPacer>,
}

/// A VPC network as Compute Engine reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GceNetwork {
    /// Its name.
    pub name: String,
    /// Its full URL.
    pub self_link: String,
    /// Whether it makes a subnetwork in every region by itself (ours never do).
    pub auto_create_subnetworks: bool,
    /// The URLs of its subnetworks.
    pub subnetworks: Vec<String>,
}

/// A subnetwork as Compute Engine reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GceSubnetwork {
    /// Its name.
    pub name: String,
    /// The URL of its network.
    pub network: String,
    /// Its primary IPv4 range.
    pub ip_cidr_range: String,
    /// The URL of its region.
    pub region: String,
    /// Its full URL.
    pub self_link: String,
}

/// A compute operation: `PENDING`, `RUNNING` or `DONE` (with `error` when it failed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GceOperation {
    /// Its name.
    pub name: String,
    /// `PENDING`, `RUNNING` or `DONE`.
    pub status: String,
    /// What it acts on.
    pub target_link: String,
    /// Why it failed, once `DONE`.
    pub error: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireOperation {
    name: String,
    status: String,
    target_link: String,
    error: Option<WireErrors>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireErrors {
    errors: Vec<WireError>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireError {
    code: String,
    message: String,
}

impl From<WireOperation> for GceOperation {
    fn from(op: WireOperation) -> Self {
        let error = op
            .error
            .filter(|e| !e.errors.is_empty())
            .map(|e| e.errors.iter().map(|e| format!("{}: {}", e.code, e.message)).collect::<Vec<_>>().join("; "));
        GceOperation { name: op.name, status: op.status, target_link: op.target_link, error }
    }
}

/// Google's error body: `{"error": {"code": 409, "message": "...", "errors": [{"reason": ...}]}}`.
/// A resource that is not ready (another operation on it runs) is conflict-in-progress.
pub fn classify(status: u16, body: &[u8]) -> ProviderError {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Body {
        error: Inner,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Inner {
        message: String,
        status: String,
        errors: Vec<Reason>,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Reason {
        reason: String,
    }
    let parsed: Body = serde_json::from_slice(body).unwrap_or_default();
    let reason = parsed.error.errors.first().map(|r| r.reason.clone()).unwrap_or(parsed.error.status);
    let kind = if reason == "resourceNotReady" {
        ErrorKind::ConflictInProgress
    } else {
        ProviderError::kind_of_status(status)
    };
    let message = if parsed.error.message.is_empty() { format!("HTTP {status}") } else { parsed.error.message };
    ProviderError { status: Some(status), reason, ..ProviderError::new(kind, PROVIDER, message) }
}

impl Gce {
    /// An adapter for `project`, calling `base_url` (the GKE endpoint override, or empty for
    /// Google's own) with `tokens`.
    pub fn new(base_url: &str, project: &str, http: reqwest::Client, tokens: TokenSource) -> Self {
        let base_url = if base_url.is_empty() || base_url.contains("container.googleapis.com") {
            COMPUTE_BASE_URL.to_owned()
        } else {
            base_url.to_owned()
        };
        Self { base_url, project: project.to_owned(), http, tokens, pacer: None }
    }

    /// The adapter with its calls paced by `pacer`.
    pub fn paced(self, pacer: AccountPacer) -> Self {
        Self { pacer: Some(pacer), ..self }
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.project
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> ProviderResult<Value> {
        let url = format!("{}/compute/v1/projects/{}/{path}", self.base_url.trim_end_matches('/'), self.project);
        let call = GoogleCall { provider: PROVIDER, method, url, what: path, body };
        call.send(&self.http, &self.tokens, self.pacer.as_ref(), classify).await
    }

    async fn operation(&self, method: Method, path: &str, body: Option<Value>) -> ProviderResult<GceOperation> {
        let value = self.call(method, path, body).await?;
        let operation = serde_json::from_value::<WireOperation>(value)
            .map(GceOperation::from)
            .map_err(|error| ProviderError::decode(PROVIDER, "an operation", error))?;
        crate::measured::operation_id(&operation.name);
        Ok(operation)
    }

    /// Starts creating a custom-mode network named `name`.
    pub async fn network_create(&self, name: &str, description: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "networks.insert", async {
            let body = json!({
                "name": name, "description": description, "autoCreateSubnetworks": false,
                "routingConfig": {"routingMode": "REGIONAL"},
            });
            self.operation(Method::POST, "global/networks", Some(body)).await
        })
        .await
    }

    /// Reads a network.
    pub async fn network_get(&self, name: &str) -> ProviderResult<GceNetwork> {
        crate::measured::provider(PROVIDER, "networks.get", async {
            let value = self.call(Method::GET, &format!("global/networks/{name}"), None).await?;
            serde_json::from_value(value).map_err(|error| ProviderError::decode(PROVIDER, "a network", error))
        })
        .await
    }

    /// Starts deleting instance `name` in `zone`: a GKE node's, which its managed instance group
    /// makes again under the same name with a fresh disk.
    pub async fn instance_delete(&self, zone: &str, name: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "instances.delete", async {
            self.operation(Method::DELETE, &format!("zones/{zone}/instances/{name}"), None).await
        })
        .await
    }

    /// Starts deleting a network (refused while it has subnetworks).
    pub async fn network_delete(&self, name: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "networks.delete", async {
            self.operation(Method::DELETE, &format!("global/networks/{name}"), None).await
        })
        .await
    }

    /// Starts creating subnetwork `name` of network `network` in `region` with `ip_range`.
    pub async fn subnetwork_create(
        &self,
        region: &str,
        name: &str,
        network: &str,
        ip_range: &str,
    ) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "subnetworks.insert", async {
            let body = json!({
                "name": name, "network": format!("projects/{}/global/networks/{network}", self.project),
                "ipCidrRange": ip_range, "region": region,
            });
            self.operation(Method::POST, &format!("regions/{region}/subnetworks"), Some(body)).await
        })
        .await
    }

    /// Reads a subnetwork.
    pub async fn subnetwork_get(&self, region: &str, name: &str) -> ProviderResult<GceSubnetwork> {
        crate::measured::provider(PROVIDER, "subnetworks.get", async {
            let value = self.call(Method::GET, &format!("regions/{region}/subnetworks/{name}"), None).await?;
            serde_json::from_value(value).map_err(|error| ProviderError::decode(PROVIDER, "a subnetwork", error))
        })
        .await
    }

    /// Starts deleting a subnetwork.
    pub async fn subnetwork_delete(&self, region: &str, name: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "subnetworks.delete", async {
            self.operation(Method::DELETE, &format!("regions/{region}/subnetworks/{name}"), None).await
        })
        .await
    }

    /// Reads a global operation.
    pub async fn global_operation_get(&self, name: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "globalOperations.get", async {
            self.operation(Method::GET, &format!("global/operations/{name}"), None).await
        })
        .await
    }

    /// Reads an operation of `region`.
    pub async fn region_operation_get(&self, region: &str, name: &str) -> ProviderResult<GceOperation> {
        crate::measured::provider(PROVIDER, "regionOperations.get", async {
            self.operation(Method::GET, &format!("regions/{region}/operations/{name}"), None).await
        })
        .await
    }
}

/// The zone and instance name of a GKE node's `spec.providerID` (`gce://<project>/<zone>/<name>`).
pub fn instance_of_provider_id(provider_id: &str) -> Option<(&str, &str)> {
    let mut parts = provider_id.strip_prefix("gce://")?.split('/');
    let (_project, zone, name) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && !zone.is_empty() && !name.is_empty()).then_some((zone, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gke_nodes_provider_id_names_its_zone_and_instance() {
        assert_eq!(
            instance_of_provider_id("gce://my-project/us-central1-a/gke-web-general-1a2b3c4d-x7k2"),
            Some(("us-central1-a", "gke-web-general-1a2b3c4d-x7k2"))
        );
        for other in ["", "aws:///us-east-1a/i-0abc", "gce://p/z", "gce://p//n", "gce://p/z/n/extra"] {
            assert_eq!(instance_of_provider_id(other), None, "{other}");
        }
    }

    #[test]
    fn errors_keep_their_reason_and_not_ready_means_wait() {
        let body = br#"{"error":{"code":400,"message":"The network resource 'x' is already being used by 'y'","errors":[{"reason":"resourceInUseByAnotherResource","message":"m"}]}}"#;
        let error = classify(400, body);
        assert_eq!((error.kind, error.reason.as_str()), (ErrorKind::Permanent, "resourceInUseByAnotherResource"));
        let busy = br#"{"error":{"code":400,"message":"not ready","errors":[{"reason":"resourceNotReady"}]}}"#;
        assert_eq!(classify(400, busy).kind, ErrorKind::ConflictInProgress);
        assert_eq!(classify(404, b"").kind, ErrorKind::NotFound);
    }

    #[test]
    fn failed_operations_carry_their_errors() {
        let wire: WireOperation = serde_json::from_value(json!({
            "name": "op-1", "status": "DONE",
            "error": {"errors": [{"code": "QUOTA_EXCEEDED", "message": "no more networks"}]},
        }))
        .unwrap();
        assert_eq!(GceOperation::from(wire).error.as_deref(), Some("QUOTA_EXCEEDED: no more networks"));
    }
}
