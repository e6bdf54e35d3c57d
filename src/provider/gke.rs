//! The GKE adapter: `container.googleapis.com/v1` under `projects/{p}/locations/{l}`, authenticated
//! as a service account.
//!
//! GKE's rules it knows: one change per update request; a failed operation ends `DONE` with an
//! `error`; int64 fields travel as JSON strings; a change while another operation runs on the
//! cluster is refused with HTTP 400 `FAILED_PRECONDITION`, which is conflict-in-progress (wait),
//! not a failure.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ErrorClass, ErrorKind, ProviderError, ProviderResult};
use super::google_auth::{GoogleCall, TokenSource};
use super::managed::{
    Autoscaling, Cluster, ClusterChange, ClusterSpec, ManagedKubernetes, NodePool, NodePoolChange, NodePoolSpec,
    Operation, ReleaseChannel, ServerConfig,
};
use super::pacing::AccountPacer;

const PROVIDER: &str = "gke";

/// Where and as whom the adapter works.
#[derive(Clone, Debug)]
pub struct GkeConfig {
    /// The API's base URL, `https://container.googleapis.com/` in production.
    pub base_url: String,
    /// The project id.
    pub project: String,
    /// The region or zone.
    pub location: String,
}

/// The GKE adapter for one project and location.
#[derive(Clone, Debug)]
pub struct Gke {
    config: GkeConfig,
    http: reqwest::Client,
    tokens: TokenSource,
    /// The account's pacer; none for an adapter made without a store (tests of the adapter).
    pacer: Option<AccountPacer>,
}

impl Gke {
    /// An adapter over `http`, authenticated by `tokens`.
    pub fn new(config: GkeConfig, http: reqwest::Client, tokens: TokenSource) -> Self {
        Self { config, http, tokens, pacer: None }
    }

    /// The adapter with its calls paced by `pacer`.
    pub fn paced(self, pacer: AccountPacer) -> Self {
        Self { pacer: Some(pacer), ..self }
    }

    /// The access tokens the adapter uses (a GKE cluster's API accepts them too).
    pub fn tokens(&self) -> &TokenSource {
        &self.tokens
    }

    /// The Compute Engine adapter of the same project and service account (tenant networks).
    pub fn compute(&self) -> super::gce::Gce {
        let gce =
            super::gce::Gce::new(&self.config.base_url, &self.config.project, self.http.clone(), self.tokens.clone());
        match &self.pacer {
            Some(pacer) => gce.paced(pacer.clone()),
            None => gce,
        }
    }

    fn parent(&self) -> String {
        format!("projects/{}/locations/{}", self.config.project, self.config.location)
    }

    fn cluster_path(&self, cluster: &str) -> String {
        format!("{}/clusters/{cluster}", self.parent())
    }

    fn pool_path(&self, cluster: &str, pool: &str) -> String {
        format!("{}/nodePools/{pool}", self.cluster_path(cluster))
    }

    /// One call; retries once with a fresh token if the API says the token is no longer good.
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> ProviderResult<Value> {
        let url = format!("{}/v1/{path}", self.config.base_url.trim_end_matches('/'));
        let call = GoogleCall { provider: PROVIDER, method, url, what: path, body };
        call.send(&self.http, &self.tokens, self.pacer.as_ref(), classify).await
    }

    async fn operation(&self, method: Method, path: &str, body: Option<Value>) -> ProviderResult<Operation> {
        let value = self.call(method, path, body).await?;
        let operation = decode::<WireOperation>(value, "an operation").map(Operation::from)?;
        crate::measured::operation_id(&operation.name);
        Ok(operation)
    }
}

fn decode<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> ProviderResult<T> {
    serde_json::from_value(value).map_err(|error| ProviderError::decode(PROVIDER, what, error))
}

/// Google's error body: `{"error": {"code": 400, "message": "...", "status": "FAILED_PRECONDITION"}}`.
pub fn classify(status: u16, body: &[u8]) -> ProviderError {
    #[derive(Deserialize, Default)]
    struct Body {
        #[serde(default)]
        error: Inner,
    }
    #[derive(Deserialize, Default)]
    struct Inner {
        #[serde(default)]
        message: String,
        #[serde(default)]
        status: String,
        #[serde(default)]
        details: Vec<Detail>,
    }
    /// `google.rpc.ErrorInfo` and its kin: the machine-readable reason of the status.
    #[derive(Deserialize, Default)]
    struct Detail {
        #[serde(default)]
        reason: String,
    }
    let parsed: Body = serde_json::from_slice(body).unwrap_or_default();
    // GKE refuses a change during a running operation with 400 FAILED_PRECONDITION naming the
    // operation; other FAILED_PRECONDITIONs are the request's own fault.
    let in_progress = status == 400
        && parsed.error.status == "FAILED_PRECONDITION"
        && parsed.error.message.to_ascii_lowercase().contains("operation");
    let kind = if in_progress { ErrorKind::ConflictInProgress } else { ProviderError::kind_of_status(status) };
    let message = if parsed.error.message.is_empty() { format!("HTTP {status}") } else { parsed.error.message };
    // Billing disabled or an account in a bad state answers 403 like a missing permission;
    // only the ErrorInfo's reason tells that a person must act on the account.
    let needs_human = parsed
        .error
        .details
        .iter()
        .any(|d| matches!(d.reason.as_str(), "BILLING_DISABLED" | "ACCOUNT_STATE_INVALID" | "SERVICE_DISABLED"))
        && status != 401;
    let mut error = ProviderError {
        status: Some(status),
        reason: parsed.error.status,
        ..ProviderError::new(kind, PROVIDER, message)
    };
    if needs_human {
        error.class_hint = Some(ErrorClass::NeedsHuman);
    }
    error
}

/// int64 fields as GKE sends them: JSON strings (it accepts numbers too).
mod int64_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<i64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => serializer.serialize_str(&v.to_string()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Text(String),
            Number(i64),
        }
        match Option::<Either>::deserialize(deserializer)? {
            None => Ok(None),
            Some(Either::Number(n)) => Ok(Some(n)),
            Some(Either::Text(text)) => text.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}

#[derive(Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct MaxPodsConstraint {
    #[serde(default, with = "int64_string", skip_serializing_if = "Option::is_none")]
    max_pods_per_node: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireOperation {
    name: String,
    operation_type: String,
    status: String,
    target_link: String,
    error: Option<WireStatus>,
    status_message: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireStatus {
    message: String,
}

impl From<WireOperation> for Operation {
    fn from(op: WireOperation) -> Self {
        let error = op.error.map(|e| e.message).or_else(|| {
            // Older operations carry the failure only in statusMessage.
            (op.status == "DONE" && !op.status_message.is_empty()).then(|| op.status_message.clone())
        });
        Operation {
            name: op.name,
            operation_type: op.operation_type,
            status: op.status,
            target_link: op.target_link,
            error,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireCluster {
    name: String,
    location: String,
    status: String,
    status_message: String,
    current_master_version: String,
    current_node_version: String,
    endpoint: String,
    master_auth: WireMasterAuth,
    resource_labels: BTreeMap<String, String>,
    release_channel: WireChannel,
    node_pools: Vec<WireNodePool>,
    master_authorized_networks_config: WireAuthorizedNetworks,
    locations: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireAuthorizedNetworks {
    enabled: bool,
    cidr_blocks: Vec<WireCidrBlock>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireCidrBlock {
    cidr_block: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireMasterAuth {
    cluster_ca_certificate: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireChannel {
    channel: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireNodePool {
    name: String,
    status: String,
    status_message: String,
    version: String,
    initial_node_count: u32,
    config: WireNodeConfig,
    autoscaling: Option<Autoscaling>,
    locations: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireNodeConfig {
    machine_type: String,
    labels: BTreeMap<String, String>,
    disk_size_gb: u32,
    disk_type: String,
    spot: bool,
    accelerators: Vec<WireAccelerator>,
    taints: Vec<WireTaint>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireAccelerator {
    accelerator_type: String,
    #[serde(with = "int64_string")]
    accelerator_count: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireTaint {
    key: String,
    value: String,
    effect: String,
}

impl From<WireNodePool> for NodePool {
    fn from(pool: WireNodePool) -> Self {
        NodePool {
            name: pool.name,
            status: pool.status,
            status_message: pool.status_message,
            version: pool.version,
            node_count: pool.initial_node_count,
            machine_type: pool.config.machine_type,
            node_labels: pool.config.labels,
            autoscaling: pool.autoscaling.filter(|a| a.enabled),
            locations: pool.locations,
            disk_size_gb: pool.config.disk_size_gb,
            disk_type: pool.config.disk_type,
            spot: pool.config.spot,
            accelerators: pool
                .config
                .accelerators
                .into_iter()
                .map(|a| (a.accelerator_type, a.accelerator_count.unwrap_or_default()))
                .collect(),
            taints: pool.config.taints.into_iter().map(|t| (t.key, t.value, kubernetes_effect(&t.effect))).collect(),
        }
    }
}

impl From<WireCluster> for Cluster {
    fn from(cluster: WireCluster) -> Self {
        // masterAuth.clusterCaCertificate is the base64 of the PEM.
        let ca = STANDARD
            .decode(cluster.master_auth.cluster_ca_certificate.trim())
            .ok()
            .and_then(|pem| String::from_utf8(pem).ok())
            .unwrap_or_default();
        Cluster {
            name: cluster.name,
            location: cluster.location,
            status: cluster.status,
            status_message: cluster.status_message,
            master_version: cluster.current_master_version,
            node_version: cluster.current_node_version,
            endpoint: cluster.endpoint,
            ca_certificate_pem: ca,
            labels: cluster.resource_labels,
            release_channel: cluster.release_channel.channel,
            authorized_networks: if cluster.master_authorized_networks_config.enabled {
                cluster.master_authorized_networks_config.cidr_blocks.into_iter().map(|b| b.cidr_block).collect()
            } else {
                Vec::new()
            },
            locations: cluster.locations,
            node_pools: cluster.node_pools.into_iter().map(NodePool::from).collect(),
        }
    }
}

fn node_pool_body(spec: &NodePoolSpec) -> Value {
    let mut pool = json!({
        "name": spec.name,
        "initialNodeCount": spec.node_count,
        "config": {"machineType": spec.machine_type, "diskSizeGb": spec.disk_size_gb, "labels": spec.node_labels},
    });
    if let Some(autoscaling) = &spec.autoscaling {
        pool["autoscaling"] = json!(autoscaling);
    }
    if spec.max_pods_per_node.is_some() {
        pool["maxPodsConstraint"] = json!(MaxPodsConstraint { max_pods_per_node: spec.max_pods_per_node });
    }
    if !spec.zones.is_empty() {
        pool["locations"] = json!(spec.zones);
    }
    if !spec.disk_type.is_empty() {
        pool["config"]["diskType"] = json!(spec.disk_type);
    }
    if spec.spot {
        pool["config"]["spot"] = json!(true);
    }
    if let Some(accelerator) = &spec.accelerators {
        pool["config"]["accelerators"] = accelerators(std::slice::from_ref(accelerator));
    }
    if !spec.taints.is_empty() {
        pool["config"]["taints"] = taints(&spec.taints);
    }
    pool
}

/// GKE's `AcceleratorConfig` list (counts are int64, so strings).
fn accelerators(list: &[(String, i64)]) -> Value {
    json!(
        list.iter()
            .map(|(kind, count)| json!({"acceleratorType": kind, "acceleratorCount": count.to_string()}))
            .collect::<Vec<_>>()
    )
}

/// GKE's `NodeTaint` list; GKE spells effects NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE.
fn taints(list: &[(String, String, String)]) -> Value {
    json!(
        list.iter()
            .map(|(key, value, effect)| json!({"key": key, "value": value, "effect": gke_effect(effect)}))
            .collect::<Vec<_>>()
    )
}

/// A GKE taint effect in Kubernetes' spelling (`NO_SCHEDULE` is `NoSchedule`).
fn kubernetes_effect(effect: &str) -> String {
    effect
        .split('_')
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// A Kubernetes taint effect in GKE's spelling.
fn gke_effect(effect: &str) -> String {
    let mut out = String::new();
    for (i, c) in effect.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// GKE's `masterAuthorizedNetworksConfig` for a list of CIDRs (empty: any address).
fn authorized_networks(cidrs: &[String]) -> Value {
    if cidrs.is_empty() {
        return json!({"enabled": false});
    }
    let blocks: Vec<Value> = cidrs.iter().map(|cidr| json!({"cidrBlock": cidr})).collect();
    json!({"enabled": true, "cidrBlocks": blocks})
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireServerConfig {
    default_cluster_version: String,
    valid_master_versions: Vec<String>,
    valid_node_versions: Vec<String>,
    channels: Vec<WireChannelConfig>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireChannelConfig {
    channel: String,
    default_version: String,
    valid_versions: Vec<String>,
}

#[async_trait::async_trait]
impl ManagedKubernetes for Gke {
    async fn cluster_create(&self, spec: &ClusterSpec) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "clusters.create", async {
            let mut cluster = json!({
                "name": spec.name,
                "description": spec.description,
                "resourceLabels": spec.labels,
                "masterAuthorizedNetworksConfig": authorized_networks(&spec.authorized_networks),
            });
            if spec.autopilot {
                cluster["autopilot"] = json!({"enabled": true});
            } else {
                cluster["nodePools"] = json!(spec.node_pools.iter().map(node_pool_body).collect::<Vec<_>>());
            }
            if spec.private_nodes {
                cluster["privateClusterConfig"] = json!({"enablePrivateNodes": true});
            }
            if !spec.subnetwork.is_empty() {
                cluster["subnetwork"] = json!(spec.subnetwork);
            }
            if !spec.version.is_empty() {
                cluster["initialClusterVersion"] = json!(spec.version);
            }
            if !spec.release_channel.is_empty() {
                cluster["releaseChannel"] = json!({"channel": spec.release_channel});
            }
            if !spec.network.is_empty() {
                cluster["network"] = json!(spec.network);
            }
            let path = format!("{}/clusters", self.parent());
            self.operation(Method::POST, &path, Some(json!({"cluster": cluster}))).await
        })
        .await
    }

    async fn cluster_get(&self, name: &str) -> ProviderResult<Cluster> {
        crate::measured::provider(PROVIDER, "clusters.get", async {
            let value = self.call(Method::GET, &self.cluster_path(name), None).await?;
            decode::<WireCluster>(value, "a cluster").map(Cluster::from)
        })
        .await
    }

    async fn cluster_list(&self) -> ProviderResult<Vec<Cluster>> {
        crate::measured::provider(PROVIDER, "clusters.list", async {
            #[derive(Deserialize, Default)]
            #[serde(default)]
            struct List {
                clusters: Vec<WireCluster>,
            }
            let value = self.call(Method::GET, &format!("{}/clusters", self.parent()), None).await?;
            Ok(decode::<List>(value, "the cluster list")?.clusters.into_iter().map(Cluster::from).collect())
        })
        .await
    }

    async fn cluster_update(&self, name: &str, change: &ClusterChange) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "clusters.update", async {
            let update = match change {
                ClusterChange::MasterVersion(version) => json!({"desiredMasterVersion": version}),
                ClusterChange::ReleaseChannel(channel) => json!({"desiredReleaseChannel": {"channel": channel}}),
                ClusterChange::AuthorizedNetworks(cidrs) => {
                    json!({"desiredMasterAuthorizedNetworksConfig": authorized_networks(cidrs)})
                }
            };
            self.operation(Method::PUT, &self.cluster_path(name), Some(json!({"update": update}))).await
        })
        .await
    }

    async fn cluster_delete(&self, name: &str) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "clusters.delete", async {
            self.operation(Method::DELETE, &self.cluster_path(name), None).await
        })
        .await
    }

    async fn node_pool_create(&self, cluster: &str, spec: &NodePoolSpec) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "nodePools.create", async {
            let path = format!("{}/nodePools", self.cluster_path(cluster));
            self.operation(Method::POST, &path, Some(json!({"nodePool": node_pool_body(spec)}))).await
        })
        .await
    }

    async fn node_pool_get(&self, cluster: &str, pool: &str) -> ProviderResult<NodePool> {
        crate::measured::provider(PROVIDER, "nodePools.get", async {
            let value = self.call(Method::GET, &self.pool_path(cluster, pool), None).await?;
            decode::<WireNodePool>(value, "a node pool").map(NodePool::from)
        })
        .await
    }

    async fn node_pool_update(&self, cluster: &str, pool: &str, change: &NodePoolChange) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "nodePools.update", async {
            let body = match change {
                NodePoolChange::Version(version) => json!({"nodeVersion": version, "imageType": "COS_CONTAINERD"}),
                NodePoolChange::NodeLabels(labels) => json!({"labels": {"labels": labels}}),
                NodePoolChange::Taints(list) => json!({"taints": {"taints": taints(list)}}),
                NodePoolChange::MachineType(machine_type) => json!({"machineType": machine_type}),
                NodePoolChange::DiskSizeGb(size) => json!({"diskSizeGb": size.to_string()}),
                NodePoolChange::DiskType(disk_type) => json!({"diskType": disk_type}),
                NodePoolChange::Accelerators(list) => json!({"accelerators": accelerators(list)}),
                NodePoolChange::Locations(zones) => json!({"locations": zones}),
            };
            self.operation(Method::PUT, &self.pool_path(cluster, pool), Some(body)).await
        })
        .await
    }

    async fn node_pool_set_size(&self, cluster: &str, pool: &str, node_count: u32) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "nodePools.setSize", async {
            let path = format!("{}:setSize", self.pool_path(cluster, pool));
            self.operation(Method::POST, &path, Some(json!({"nodeCount": node_count}))).await
        })
        .await
    }

    async fn node_pool_set_autoscaling(
        &self,
        cluster: &str,
        pool: &str,
        autoscaling: &Autoscaling,
    ) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "nodePools.setAutoscaling", async {
            let path = format!("{}:setAutoscaling", self.pool_path(cluster, pool));
            self.operation(Method::POST, &path, Some(json!({"autoscaling": autoscaling}))).await
        })
        .await
    }

    async fn node_pool_delete(&self, cluster: &str, pool: &str) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "nodePools.delete", async {
            self.operation(Method::DELETE, &self.pool_path(cluster, pool), None).await
        })
        .await
    }

    async fn operation_get(&self, name: &str) -> ProviderResult<Operation> {
        crate::measured::provider(PROVIDER, "operations.get", async {
            // Accepts the bare name an operation carries, or its full resource path.
            let path = if name.starts_with("projects/") {
                name.to_owned()
            } else {
                format!("{}/operations/{name}", self.parent())
            };
            self.operation(Method::GET, &path, None).await
        })
        .await
    }

    async fn server_config(&self) -> ProviderResult<ServerConfig> {
        crate::measured::provider(PROVIDER, "getServerConfig", async {
            let value = self.call(Method::GET, &format!("{}/serverConfig", self.parent()), None).await?;
            let wire: WireServerConfig = decode(value, "the server config")?;
            Ok(ServerConfig {
                default_version: wire.default_cluster_version,
                valid_master_versions: wire.valid_master_versions,
                valid_node_versions: wire.valid_node_versions,
                channels: wire
                    .channels
                    .into_iter()
                    .map(|c| ReleaseChannel {
                        channel: c.channel,
                        default_version: c.default_version,
                        valid_versions: c.valid_versions,
                    })
                    .collect(),
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billing_disabled_needs_a_person_and_a_missing_permission_does_not() {
        let body = |reason: &str| {
            json!({"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]}})
            .to_string()
        };
        assert_eq!(classify(403, body("BILLING_DISABLED").as_bytes()).class(), ErrorClass::NeedsHuman);
        assert_eq!(classify(403, body("IAM_PERMISSION_DENIED").as_bytes()).class(), ErrorClass::Permission);
        assert_eq!(classify(401, body("ACCOUNT_STATE_INVALID").as_bytes()).class(), ErrorClass::Permission);
    }

    #[test]
    fn failed_precondition_naming_an_operation_is_conflict_in_progress() {
        let body = br#"{"error":{"code":400,"message":"Cluster is running incompatible operation operation-1.","status":"FAILED_PRECONDITION"}}"#;
        let error = classify(400, body);
        assert_eq!(error.kind, ErrorKind::ConflictInProgress);
        assert_eq!(error.reason, "FAILED_PRECONDITION");
        let other = br#"{"error":{"code":400,"message":"Master version is lower","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(classify(400, other).kind, ErrorKind::Permanent);
        assert_eq!(classify(404, b"not json").kind, ErrorKind::NotFound);
    }

    #[test]
    fn taint_effects_travel_in_gke_spelling_and_come_back_in_kubernetes_spelling() {
        for effect in ["NoSchedule", "PreferNoSchedule", "NoExecute"] {
            assert_eq!(kubernetes_effect(&gke_effect(effect)), effect);
        }
        assert_eq!(gke_effect("PreferNoSchedule"), "PREFER_NO_SCHEDULE");
        let pool: WireNodePool = serde_json::from_value(json!({
            "name": "p", "locations": ["europe-west1-b"],
            "config": {"taints": [{"key": "k", "value": "v", "effect": "NO_EXECUTE"}],
                       "accelerators": [{"acceleratorType": "nvidia-l4", "acceleratorCount": "2"}], "diskSizeGb": 50},
        }))
        .unwrap();
        let pool = NodePool::from(pool);
        assert_eq!(pool.taints, [("k".to_owned(), "v".to_owned(), "NoExecute".to_owned())]);
        assert_eq!(pool.accelerators, [("nvidia-l4".to_owned(), 2)]);
        assert_eq!((pool.disk_size_gb, pool.locations.len()), (50, 1));
    }

    #[test]
    fn int64_fields_go_out_as_strings_and_come_back_from_either() {
        let body =
            node_pool_body(&NodePoolSpec { name: "p".into(), max_pods_per_node: Some(110), ..Default::default() });
        assert_eq!(body["maxPodsConstraint"]["maxPodsPerNode"], "110");
        let back: MaxPodsConstraint = serde_json::from_value(json!({"maxPodsPerNode": "64"})).unwrap();
        assert_eq!(back.max_pods_per_node, Some(64));
        let number: MaxPodsConstraint = serde_json::from_value(json!({"maxPodsPerNode": 32})).unwrap();
        assert_eq!(number.max_pods_per_node, Some(32));
    }
}
