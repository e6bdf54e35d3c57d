//! Kubernetes clusters: the rules of create, list, get, update, delete, credentials and
//! versions. The primary decision (`compute:kubernetes:* @ compute-kubernetes-cluster`) was
//! taken by the API layer before any of this runs; what is here are the checks no annotation
//! can express, one transaction per change, and the two calls that must answer from the
//! provider at once (credentials, versions).

use sha2::{Digest, Sha256};

use super::findings::{beside_schema, refusal};
use super::kubernetes::{authorized_networks, provider_failure, region_of_zone};
use super::page_tokens::TokenScope;
use super::paging::Page;
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::update_mask::Named;
use super::{Context, Service};
use crate::authz::Target;
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::{ClusterState, NodePoolState};
use crate::error::{Error, FieldViolation, Result};
use crate::ids::KubernetesNodePoolId;
use crate::proto::compute::{
    CreateKubernetesClusterRequest, DeleteKubernetesClusterRequest, GetKubernetesClusterRequest,
    KubernetesCredentialsRequest, KubernetesNodePoolSpec, KubernetesVersionsRequest, ListKubernetesClustersRequest,
    UpdateKubernetesClusterRequest,
};
use crate::provider::cluster_api::MIN_TOKEN_SECONDS;
use crate::provider::kube::{KubeAuth, KubeClient, kubeconfig};
use crate::provider::{ClusterApi, ClusterRole, ManagedKubernetes, ServerConfig};
use crate::secrets::SecretKey;
use crate::store::{
    AccessGrant, CLUSTER_RESOURCE, ClusterRow, NewCluster, NodePoolRow, NodePoolSpecRow, ResourceFilter, cluster_event,
    now_micros,
};

/// The most clusters a page of `list` returns when the request names no `pageSize`.
const LIST_LIMIT: i64 = 500;

/// What a page token of the cluster list is bound to: the list and every filter of the request.
fn cluster_list_scope(key: &SecretKey, request: &ListKubernetesClustersRequest) -> TokenScope {
    let include_deleted = if request.include_deleted { "deleted too" } else { "live" };
    TokenScope::of(
        key,
        &["kubernetesClusters.list", &request.tenant_id, &request.pool_id, &request.project_id, include_deleted],
    )
}

/// The release channel of a cluster that names none.
const DEFAULT_CHANNEL: &str = "regular";

/// The namespace of the service accounts credentials are minted for.
pub const CREDENTIAL_NAMESPACE: &str = crate::provider::cluster_api::CREDENTIAL_NAMESPACE;

/// What `credentials` returns: the kubeconfig holds a bearer token, so `Debug` hides it.
pub struct IssuedCredentials {
    /// The kubeconfig (YAML).
    pub kubeconfig: String,
    /// When its token expires (µs).
    pub expires_at: i64,
    /// `view`, `edit` or `admin`.
    pub role: String,
}

impl std::fmt::Debug for IssuedCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedCredentials").field("expires_at", &self.expires_at).field("role", &self.role).finish()
    }
}

/// The Kubernetes service account of `identity` with `role`: `bc-u-`, 16 hex digits of a hash
/// of the identity, `-view`/`-edit`/`-admin`. Each role keeps its own account, so a later
/// `view` kubeconfig never narrows an `admin` one.
pub fn credential_account(identity: &str, role: &str) -> String {
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{}{hex}-{role}", crate::provider::cluster_api::CREDENTIAL_PREFIX)
}

/// A node pool's spec from the request's fields.
pub(super) fn pool_spec(spec: &KubernetesNodePoolSpec) -> NodePoolSpecRow {
    NodePoolSpecRow {
        machine_type: spec.machine_type.clone(),
        node_count: spec.node_count.unwrap_or_default(),
        autoscaling: spec
            .autoscaling
            .as_ref()
            .map(|a| (a.min_nodes.unwrap_or_default(), a.max_nodes.unwrap_or_default())),
        disk_gib: spec.disk_gib,
        disk_type: spec.disk_type.clone(),
        spot: spec.spot,
        accelerators: spec.accelerators.as_ref().map(|a| (a.r#type.clone(), a.count)),
        zones: spec.zones.clone(),
        labels: spec.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        taints: spec.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.clone())).collect(),
    }
}

/// The checks of one pool's spec that need nothing but the spec: autoscaling bounds in order.
pub(super) fn check_pool_bounds(spec: &NodePoolSpecRow, path: &str) -> Vec<FieldViolation> {
    match spec.autoscaling {
        Some((min, max)) if min > max => vec![FieldViolation::new(
            format!("{path}autoscaling"),
            format!("minNodes ({min}) must not exceed maxNodes ({max}); give a minimum at most the maximum"),
        )],
        _ => Vec::new(),
    }
}

/// The checks of one pool's zones, which need the cluster's placement: zones of the cluster's
/// region and of the account.
pub(super) fn check_pool_zones(
    spec: &NodePoolSpecRow,
    placement_zones: &[String],
    region: &str,
    path: &str,
) -> Vec<FieldViolation> {
    let mut violations = Vec::new();
    for (i, zone) in spec.zones.iter().enumerate() {
        if region_of_zone(zone) != region || !placement_zones.contains(zone) {
            violations.push(FieldViolation::new(
                format!("{path}zones[{i}]"),
                format!(
                    "{zone:?} is not a zone of the cluster's region {region:?} on this account; use one of {}",
                    placement_zones
                        .iter()
                        .filter(|z| region_of_zone(z) == region)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    violations
}

/// The digest earlier releases kept of a create request (its fields listed by hand), with
/// which the clusters they made are still recognised on a retry.
pub fn legacy_request_digest(request: &CreateKubernetesClusterRequest) -> String {
    let pools: Vec<(String, NodePoolSpecRow)> =
        request.node_pools.iter().map(|p| (p.name.clone(), pool_spec(p))).collect();
    let canonical = serde_json::json!({
        "projectId": request.project_id, "poolId": request.pool_id, "name": request.name, "mode": request.mode,
        "location": request.location, "releaseChannel": request.release_channel, "version": request.version,
        "networkId": request.network_id, "authorizedNetworks": request.authorized_networks,
        "privateNodes": request.private_nodes, "description": request.description, "nodePools": pools,
    });
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The create rules that need nothing but the request: node pools by mode, their names unique,
/// their autoscaling bounds, and the authorized networks (returned as the cluster keeps them).
fn cluster_request_rules(request: &CreateKubernetesClusterRequest) -> (Vec<String>, Vec<FieldViolation>) {
    let mut violations = Vec::new();
    let pools = request.node_pools.len();
    match request.mode.as_str() {
        "standard" if pools == 0 => violations
            .push(FieldViolation::new("nodePools", "a standard cluster takes 1 to 10 node pools; none were given")),
        "autopilot" if pools > 0 => violations.push(FieldViolation::new(
            "nodePools",
            format!("an autopilot cluster takes no node pools (the provider runs its nodes); {pools} were given"),
        )),
        _ => {}
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, spec) in request.node_pools.iter().enumerate() {
        let path = format!("nodePools[{i}].");
        if names.contains(&spec.name.as_str()) {
            violations.push(FieldViolation::new(
                format!("{path}name"),
                format!("{:?} names another node pool of this request; node pool names must be unique", spec.name),
            ));
        }
        names.push(&spec.name);
        violations.extend(check_pool_bounds(&pool_spec(spec), &path));
    }
    let (networks, network_violations) = authorized_networks(&request.authorized_networks);
    violations.extend(network_violations);
    (networks, violations)
}

resource_requests!(create: CreateKubernetesClusterRequest, list: ListKubernetesClustersRequest);

impl Service {
    /// A cluster of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub(super) async fn cluster_of_tenant(&self, tenant: &str, id: &str) -> Result<ClusterRow> {
        super::checks::of_tenant(tenant, "cluster", id, self.store.cluster_fetch(id).await?, |row| &row.tenant_id)
    }

    /// When a cluster that enters a transient state now counts as stuck.
    pub(super) fn cluster_deadline(&self, now: i64) -> Option<i64> {
        Some(now + self.kubernetes.state_deadline.as_micros() as i64)
    }

    /// Records a cluster and its first pools and returns it `pending`. Every violated field is
    /// named at once: the schema stage's (in `ctx.schema`), the request's own rules (node pools
    /// by mode, unique pool names, autoscaling bounds, authorized networks) and, once the pool
    /// and location are known, the pools' zones; nothing is written while there is one.
    pub async fn cluster_create(&self, ctx: &Context, request: CreateKubernetesClusterRequest) -> Result<ClusterRow> {
        // The older digest read the authorized networks as the request's rules wrote them.
        let legacy_digest = |request: &CreateKubernetesClusterRequest| {
            let mut legacy = request.clone();
            legacy.authorized_networks = cluster_request_rules(request).0;
            legacy_request_digest(&legacy)
        };
        self.create_resource(ctx, request, legacy_digest, |request, id, digest| async move {
            self.cluster_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a cluster no earlier call with its key made.
    async fn cluster_create_new(
        &self,
        ctx: &Context,
        mut request: CreateKubernetesClusterRequest,
        id: &str,
        digest: &str,
    ) -> Result<(ClusterRow, bool)> {
        let tenant = request.tenant_id.clone();
        let (networks, mut rules) = cluster_request_rules(&request);
        let placement = async {
            self.check_project(&tenant, &request.project_id).await?;
            self.kubernetes_placement(&tenant, &request.pool_id, &request.location).await
        };
        let placement = placement.await.map_err(|error| refusal(ctx, error, rules.clone()))?;
        for (i, spec) in request.node_pools.iter().enumerate() {
            let path = format!("nodePools[{i}].");
            rules.extend(check_pool_zones(&pool_spec(spec), &placement.zones, &placement.region, &path));
        }
        if !request.network_id.is_empty()
            && let Err(error) =
                self.network_for_cluster(&tenant, &request.network_id, &placement.account_id, &placement.region).await
        {
            return Err(refusal(ctx, error, rules));
        }
        ctx.report(beside_schema(ctx, rules))?;
        request.authorized_networks = networks;
        let now = now_micros();
        // Pools keep the request's order: each is a microsecond younger than the one before.
        let node_pools = request
            .node_pools
            .iter()
            .zip(0..)
            .map(|(spec, i)| NodePoolRow {
                id: KubernetesNodePoolId::random().to_string(),
                cluster_id: id.to_string(),
                tenant_id: tenant.clone(),
                name: spec.name.clone(),
                spec: pool_spec(spec),
                state: NodePoolState::Pending,
                message: String::new(),
                current_node_count: 0,
                version: 1,
                created_at: now + i,
                updated_at: now + i,
                deleted_at: None,
                idempotency_key: String::new(),
                request_digest: String::new(),
            })
            .collect();
        let row = ClusterRow {
            meta: request.meta(ctx, id, &placement.account_id, digest, now),
            provider_project: placement.provider_project.clone(),
            billing_mode: placement.billing_mode.clone(),
            description: request.description.clone(),
            mode: request.mode.clone(),
            location: request.location.clone(),
            release_channel: if request.release_channel.is_empty() {
                DEFAULT_CHANNEL.to_owned()
            } else {
                request.release_channel.clone()
            },
            requested_version: request.version.clone(),
            // The provider creates the cluster at the pin: nothing is left to send.
            version_pending: false,
            network_id: (!request.network_id.is_empty()).then(|| request.network_id.clone()),
            authorized_networks: request.authorized_networks.clone(),
            private_nodes: request.private_nodes,
            endpoint: String::new(),
            ca_certificate: String::new(),
            kubernetes_version: String::new(),
            node_version: String::new(),
            ready_once: false,
            accepted_at: None,
            account_version: None,
            node_pools,
        };
        let mut attributes = request.authz_attributes(&placement.account_id);
        attributes.insert("mode".into(), request.mode.clone().into());
        attributes.insert("location".into(), request.location.clone().into());
        let authz = row.meta.authz(CLUSTER_RESOURCE, attributes);
        let new = NewCluster {
            row,
            max_per_tenant: self.kubernetes.max_clusters_per_tenant,
            deadline: self.cluster_deadline(now),
        };
        self.store.cluster_create(&new, &authz).await
    }

    /// A page of the tenant's clusters (those the caller may read), oldest first, and the next
    /// page's token. The token is made from the rows as read, before those the caller may not
    /// read are left out, so a page of hidden clusters still moves the walk on.
    pub async fn cluster_list(
        &self,
        ctx: &Context,
        request: ListKubernetesClustersRequest,
    ) -> Result<(Vec<ClusterRow>, String)> {
        let scope = cluster_list_scope(&self.page_token_key(), &request);
        let page = Page::of_scoped(request.page_size, &request.page_token, LIST_LIMIT, &scope)?;
        let filter = ResourceFilter { after: page.resumes_after(), ..request.filter(page.limit()) };
        let mut clusters = self.store.cluster_list(&filter).await?;
        let next_page_token = page.finish_scoped(&mut clusters, |c| (c.created_at, c.id.as_str()), &scope);
        let readable = self
            .readable_resources(ctx, "compute:kubernetes:read", CLUSTER_RESOURCE, &request.tenant_id, clusters)
            .await?;
        Ok((readable, next_page_token))
    }

    /// One cluster with its pools.
    pub async fn cluster_get(&self, _ctx: &Context, request: GetKubernetesClusterRequest) -> Result<ClusterRow> {
        self.cluster_of_tenant(&request.tenant_id, &request.cluster_id).await
    }

    /// Changes what the update's mask names: the version pin, the channel, the authorized
    /// networks or the description. A field named without a value goes back to what a create
    /// without it gives: no pin (the channel's default applies), no authorized networks (any
    /// address), no description. The release channel is refused without a value: a `null` that
    /// moved an `extended` cluster to the default `regular` would change its upgrades unasked.
    pub async fn cluster_update(&self, ctx: &Context, request: UpdateKubernetesClusterRequest) -> Result<ClusterRow> {
        const ACCEPTED: [&str; 4] = ["version", "releaseChannel", "authorizedNetworks", "description"];
        let named = Named::of(&request.update_mask);
        let version_named = named.has("version");
        let channel_named = named.has("release_channel");
        // The deprecated `setAuthorizedNetworks` names them too, until the next release.
        let networks_named = named.has("authorized_networks") || request.set_authorized_networks;
        let description_named = named.has("description");
        if !(version_named || channel_named || networks_named || description_named) {
            return Err(Error::invalid_input(format!(
                "name at least one field to change: {} (an empty list clears authorizedNetworks)",
                ACCEPTED.join(", ")
            ))
            .with_detail("accepted", serde_json::json!(ACCEPTED)));
        }
        let channel = named.required("release_channel", "releaseChannel", request.release_channel)?;
        let (networks, violations) = authorized_networks(&request.authorized_networks);
        if networks_named && !violations.is_empty() {
            return Err(Error::fields(violations));
        }
        let mut cluster = self.cluster_of_tenant(&request.tenant_id, &request.cluster_id).await?;
        if cluster.delete_requested_at.is_some() || cluster.deleted_at.is_some() {
            return Err(Error::invalid_state(format!(
                "cluster {:?} is {} and cannot change",
                cluster.id, cluster.state
            ))
            .with_detail("state", cluster.state.as_str()));
        }
        let provider_change = version_named || channel_named || networks_named;
        if version_named {
            // Without a pin nothing is sent: the control plane stays where it is and follows
            // its channel from there (the provider never downgrades).
            cluster.version_pending = request.version.is_some();
            cluster.requested_version = request.version.unwrap_or_default();
        }
        if let Some(channel) = channel {
            cluster.release_channel = channel;
        }
        if networks_named {
            cluster.authorized_networks = networks;
        }
        if description_named {
            cluster.description = request.description.unwrap_or_default();
        }
        let now = now_micros();
        let updated = self.store.cluster_update(&cluster, provider_change, now, self.cluster_deadline(now)).await?;
        tracing::info!(cluster = %updated.id, version = updated.version, by = %ctx.caller.principal_id, "cluster updated");
        Ok(updated)
    }

    /// Marks a cluster and its pools for deletion; a cluster being deleted is returned as it is.
    pub async fn cluster_delete(&self, ctx: &Context, request: DeleteKubernetesClusterRequest) -> Result<ClusterRow> {
        let cluster = self.cluster_of_tenant(&request.tenant_id, &request.cluster_id).await?;
        let delete =
            |id: String, now| async move { self.store.cluster_delete(&id, now, self.cluster_deadline(now)).await };
        self.delete_resource(ctx, "cluster", cluster, request.force, delete).await
    }

    /// A short-lived kubeconfig for the caller with `role`. The token goes into the answer only:
    /// never into a log, an event or the store.
    pub async fn cluster_credentials(
        &self,
        ctx: &Context,
        request: KubernetesCredentialsRequest,
    ) -> Result<IssuedCredentials> {
        const METHOD: &str = "bettercompute.compute.v1.KubernetesClusters/Credentials";
        let role = if request.role.is_empty() { "view" } else { request.role.as_str() };
        let (cluster_role, needs) = match role {
            "edit" => (ClusterRole::Edit, Some("compute:kubernetes:update")),
            "admin" => (ClusterRole::ClusterAdmin, Some("compute:kubernetes:delete")),
            _ => (ClusterRole::View, None),
        };
        if let Some(permission) = needs {
            let target = Target {
                resource_type: CLUSTER_RESOURCE.to_owned(),
                id: request.cluster_id.clone(),
                tenant_id: Some(request.tenant_id.clone()),
                ..Default::default()
            };
            self.authorize(ctx, METHOD, permission, target).await?;
        }
        let cluster = self.cluster_of_tenant(&request.tenant_id, &request.cluster_id).await?;
        let usable =
            cluster.state == ClusterState::Ready || (cluster.state == ClusterState::Updating && cluster.ready_once);
        if !usable || cluster.endpoint.is_empty() {
            return Err(Error::invalid_state(format!(
                "cluster {:?} is {}; credentials are issued once it is ready",
                cluster.id, cluster.state
            ))
            .with_detail("state", cluster.state.as_str()));
        }
        let ttl = if request.ttl_seconds == 0 { self.kubernetes.credential_ttl_seconds } else { request.ttl_seconds };
        let gke = self.gke_accounts()?.gke(&cluster.account_id, &cluster.location).await.map_err(provider_failure)?;
        let api = KubeClient::new(&cluster.endpoint, &cluster.ca_certificate, KubeAuth::Google(gke.tokens().clone()))
            .map_err(provider_failure)?;
        let identity = ctx.caller.principal_id.as_str();
        let account = credential_account(identity, role);
        // Recorded before the account exists, so that a sweep that finds the account also finds
        // its grant; a revocation of the principal or its role revokes the grant.
        let issued_at = now_micros();
        let grant = AccessGrant {
            cluster_id: cluster.id.clone(),
            account: account.clone(),
            principal_id: identity.to_owned(),
            tenant_id: cluster.tenant_id.clone(),
            role: role.to_owned(),
            issued_at,
            expires_at: issued_at + i64::from(ttl.max(MIN_TOKEN_SECONDS as i32)) * 1_000_000,
        };
        self.store.cluster_access_grant(&grant).await?;
        api.service_account_ensure(CREDENTIAL_NAMESPACE, &account).await.map_err(provider_failure)?;
        api.cluster_role_binding_ensure(&account, cluster_role, CREDENTIAL_NAMESPACE, &account)
            .await
            .map_err(provider_failure)?;
        let issued = api.token_request(CREDENTIAL_NAMESPACE, &account, ttl as u32).await.map_err(provider_failure)?;
        let now = now_micros();
        let expires_at = now + i64::from(ttl) * 1_000_000;
        let config =
            kubeconfig(&cluster.provider_name(), &cluster.endpoint, &cluster.ca_certificate, &account, &issued.token);
        let service_account = format!("system:serviceaccount:{CREDENTIAL_NAMESPACE}:{account}");
        // RFC 3339, as the answer's `expiresAt` and every timestamp the API shows.
        let expires = prost_types::Timestamp {
            seconds: expires_at.div_euclid(1_000_000),
            nanos: (expires_at.rem_euclid(1_000_000) * 1_000) as i32,
        };
        let event = cluster_event(
            LifecycleEvent::CredentialsIssued,
            &cluster,
            now,
            serde_json::json!({
                "role": role, "subject": identity, "identity": service_account, "ttlSeconds": ttl,
                "expiresAt": expires.to_string(),
            }),
        );
        self.store.cluster_event_append(&event).await?;
        tracing::info!(cluster = %cluster.id, role, identity = %service_account, ttl, "credentials issued");
        Ok(IssuedCredentials { kubeconfig: config, expires_at, role: role.to_owned() })
    }

    /// The versions the provider offers in a location of a pool: a read, so only the pool and
    /// the location are checked, not what refuses new resources (the offer, the budgets).
    pub async fn cluster_versions(&self, _ctx: &Context, request: KubernetesVersionsRequest) -> Result<ServerConfig> {
        let account = self.kubernetes_location(&request.tenant_id, &request.pool_id, &request.location).await?;
        let gke = self.gke_accounts()?.gke(&account, &request.location).await.map_err(provider_failure)?;
        gke.server_config().await.map_err(provider_failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_accounts_are_per_identity_and_role() {
        let view = credential_account("prn_1", "view");
        assert!(view.starts_with("bc-u-") && view.ends_with("-view"), "{view}");
        assert_eq!(view.len(), "bc-u-".len() + 16 + "-view".len());
        assert_ne!(
            credential_account("prn_1", "admin").trim_end_matches("-admin"),
            credential_account("prn_2", "admin").trim_end_matches("-admin")
        );
        assert_eq!(credential_account("prn_1", "admin").trim_end_matches("-admin"), view.trim_end_matches("-view"));
    }
}
