//! Node pools of `standard` clusters added, resized and removed after creation. Each change
//! puts the cluster `updating` until the reconciler has converged it. The decision was taken on
//! the cluster (`compute:kubernetes:update`/`read @ compute-kubernetes-cluster`) by the API layer.

use super::kubernetes::region_of_zone;
use super::kubernetes_clusters::{check_pool_spec, pool_spec};
use super::{Context, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::ids::KubernetesNodePoolId;
use crate::proto::compute::{
    CreateKubernetesNodePoolRequest, DeleteKubernetesNodePoolRequest, GetKubernetesNodePoolRequest,
    KubernetesNodePoolSpec, ListKubernetesNodePoolsRequest, UpdateKubernetesNodePoolRequest,
};
use crate::store::{ClusterRow, NodePoolRow, now_micros};

/// The most node pools a cluster has.
const MAX_POOLS: usize = 10;

/// What `update` changes (GKE changes all of them in place).
const UPDATABLE: &[&str] = &[
    "nodeCount",
    "autoscaling",
    "disableAutoscaling",
    "machineType",
    "diskGiB",
    "diskType",
    "accelerators",
    "removeAccelerators",
    "zones",
    "labels",
    "taints",
];

impl Service {
    /// A live cluster of the tenant that can take node-pool changes.
    async fn cluster_for_pools(&self, tenant: &str, cluster_id: &str) -> Result<ClusterRow> {
        let cluster = self.cluster_of_tenant(tenant, cluster_id).await?;
        if cluster.delete_requested_at.is_some() || cluster.deleted_at.is_some() {
            return Err(Error::invalid_state(format!(
                "cluster {:?} is {}; its node pools cannot change",
                cluster.id, cluster.state
            ))
            .with_detail("state", cluster.state.as_str()));
        }
        if cluster.mode != "standard" {
            return Err(Error::fields(vec![FieldViolation::new(
                "clusterId",
                "an autopilot cluster has no node pools: the provider runs its nodes",
            )]));
        }
        Ok(cluster)
    }

    /// A pool of a cluster of the tenant; `NOT_FOUND` otherwise.
    async fn pool_of_cluster(&self, tenant: &str, cluster_id: &str, pool_id: &str) -> Result<NodePoolRow> {
        match self.store.node_pool_fetch(pool_id).await? {
            Some(pool) if pool.tenant_id == tenant && pool.cluster_id == cluster_id => Ok(pool),
            _ => Err(Error::not_found("node pool", pool_id)),
        }
    }

    /// Adds a node pool to a `standard` cluster; it is `pending` and the cluster `updating`.
    pub async fn node_pool_create(
        &self,
        ctx: &Context,
        request: CreateKubernetesNodePoolRequest,
    ) -> Result<NodePoolRow> {
        let cluster = self.cluster_for_pools(&request.tenant_id, &request.cluster_id).await?;
        if cluster.node_pools.len() >= MAX_POOLS {
            return Err(Error::invalid_state(format!("cluster {:?} already has {MAX_POOLS} node pools", cluster.id))
                .with_detail("limit", MAX_POOLS as i64));
        }
        let spec = KubernetesNodePoolSpec {
            name: request.name.clone(),
            machine_type: request.machine_type,
            node_count: request.node_count,
            autoscaling: request.autoscaling,
            disk_gib: request.disk_gib,
            disk_type: request.disk_type,
            spot: request.spot,
            accelerators: request.accelerators,
            zones: request.zones,
            labels: request.labels,
            taints: request.taints,
        };
        let spec = pool_spec(&spec);
        let placement = self.kubernetes_placement(&cluster.tenant_id, &cluster.pool_id, &cluster.location).await?;
        let violations = check_pool_spec(&spec, &placement.zones, &placement.region, "");
        if !violations.is_empty() {
            return Err(Error::fields(violations));
        }
        let now = now_micros();
        let pool = NodePoolRow {
            id: KubernetesNodePoolId::random().to_string(),
            cluster_id: cluster.id.clone(),
            tenant_id: cluster.tenant_id.clone(),
            name: request.name,
            spec,
            state: "pending".to_owned(),
            message: String::new(),
            current_node_count: 0,
            version: 1,
            created_at: now,
            updated_at: now,
            deleted_at: None,
        };
        let pool = self.store.node_pool_create(&pool, self.cluster_deadline(now)).await?;
        tracing::info!(cluster = %cluster.id, pool = %pool.id, by = %ctx.caller.principal_id, "node pool created");
        Ok(pool)
    }

    /// The cluster's node pools, oldest first.
    pub async fn node_pool_list(
        &self,
        _ctx: &Context,
        request: ListKubernetesNodePoolsRequest,
    ) -> Result<Vec<NodePoolRow>> {
        let cluster = self.cluster_of_tenant(&request.tenant_id, &request.cluster_id).await?;
        self.store.node_pool_list(&cluster.id, request.include_deleted).await
    }

    /// One node pool.
    pub async fn node_pool_get(&self, _ctx: &Context, request: GetKubernetesNodePoolRequest) -> Result<NodePoolRow> {
        self.pool_of_cluster(&request.tenant_id, &request.cluster_id, &request.node_pool_id).await
    }

    /// Changes a pool in place: what GKE changes on a running pool (size, autoscaling, machine
    /// type, boot disk, accelerators, zones, labels, taints). Spot nodes and the name cannot
    /// change in place: asking for another value is refused, saying to make a new pool. The
    /// changes queue in the pool's spec; the reconciler sends them one GKE operation at a time.
    pub async fn node_pool_update(
        &self,
        ctx: &Context,
        request: UpdateKubernetesNodePoolRequest,
    ) -> Result<NodePoolRow> {
        let labels_named = request.set_labels || !request.labels.is_empty();
        let zones_named = request.set_zones || !request.zones.is_empty();
        let taints_named = request.set_taints || !request.taints.is_empty();
        let named = request.node_count.is_some()
            || request.autoscaling.is_some()
            || request.disable_autoscaling
            || labels_named
            || request.machine_type.is_some()
            || request.disk_gib.is_some()
            || request.disk_type.is_some()
            || request.accelerators.is_some()
            || request.remove_accelerators
            || zones_named
            || taints_named
            || request.spot.is_some()
            || request.name.is_some();
        if !named {
            return Err(Error::invalid_input(format!("name at least one field to change: {}", UPDATABLE.join(", ")))
                .with_detail("accepted", serde_json::json!(UPDATABLE)));
        }
        let cluster = self.cluster_for_pools(&request.tenant_id, &request.cluster_id).await?;
        let pool = self.pool_of_cluster(&request.tenant_id, &request.cluster_id, &request.node_pool_id).await?;
        if pool.deleted_at.is_some() || pool.state == "deleting" {
            return Err(Error::invalid_state(format!("node pool {:?} is {} and cannot change", pool.id, pool.state))
                .with_detail("state", pool.state.as_str()));
        }
        let mut violations = Vec::new();
        let mut exclusive = |a: bool, b: bool, field: &str, other: &str| {
            if a && b {
                violations
                    .push(FieldViolation::new(field, format!("{field} and {other} exclude each other; name one")));
            }
        };
        exclusive(request.autoscaling.is_some(), request.disable_autoscaling, "autoscaling", "disableAutoscaling");
        exclusive(request.accelerators.is_some(), request.remove_accelerators, "accelerators", "removeAccelerators");
        if let Some(spot) = request.spot
            && spot != pool.spec.spot
        {
            violations.push(FieldViolation::new(
                "spot",
                format!(
                    "the provider cannot change a node pool's spot nodes in place (the pool has spot: {}); create a \
                     new node pool with spot: {spot}, move the workloads, then delete this one",
                    pool.spec.spot
                ),
            ));
        }
        if let Some(name) = &request.name
            && *name != pool.name
        {
            violations.push(FieldViolation::new(
                "name",
                format!(
                    "a node pool's name is its provider-side name and cannot change ({:?}); create a new node pool \
                     named {name:?}, move the workloads, then delete this one",
                    pool.name
                ),
            ));
        }
        let mut spec = pool.spec.clone();
        if let Some(count) = request.node_count {
            spec.node_count = count;
        }
        if let Some(autoscaling) = &request.autoscaling {
            spec.autoscaling =
                Some((autoscaling.min_nodes.unwrap_or_default(), autoscaling.max_nodes.unwrap_or_default()));
        }
        if request.disable_autoscaling {
            spec.autoscaling = None;
        }
        if labels_named {
            spec.labels = request.labels.into_iter().collect();
        }
        if let Some(machine_type) = request.machine_type {
            spec.machine_type = machine_type;
        }
        if let Some(disk_gib) = request.disk_gib {
            spec.disk_gib = disk_gib;
        }
        if let Some(disk_type) = request.disk_type {
            spec.disk_type = disk_type;
        }
        if let Some(accelerators) = &request.accelerators {
            spec.accelerators = Some((accelerators.r#type.clone(), accelerators.count));
        }
        if request.remove_accelerators {
            spec.accelerators = None;
        }
        if zones_named {
            spec.zones = request.zones;
        }
        if taints_named {
            spec.taints = request.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.clone())).collect();
        }
        // The bounds, and new zones against the account's zones of the cluster's region.
        let (zones, region) =
            if zones_named { self.cluster_zones(&cluster).await? } else { (spec.zones.clone(), String::new()) };
        violations.extend(
            check_pool_spec(&spec, &zones, &region, "")
                .into_iter()
                .filter(|v| v.field == "autoscaling" || (zones_named && v.field.starts_with("zones"))),
        );
        if !violations.is_empty() {
            return Err(Error::fields(violations));
        }
        let now = now_micros();
        let updated = self.store.node_pool_update(&pool, &spec, now, self.cluster_deadline(now)).await?;
        tracing::info!(pool = %updated.id, version = updated.version, by = %ctx.caller.principal_id, "node pool updated");
        Ok(updated)
    }

    /// The zones of the cluster's account and the region of its location: where its pools may
    /// run. Read from the account, so a pool changes even if the pool's offer changed since.
    async fn cluster_zones(&self, cluster: &ClusterRow) -> Result<(Vec<String>, String)> {
        let account = self.store.account_fetch(&cluster.account_id).await?;
        let region = if account.locations.contains(&cluster.location) {
            region_of_zone(&cluster.location).to_owned()
        } else {
            cluster.location.clone()
        };
        Ok((account.locations, region))
    }

    /// Marks a pool for deletion; one being deleted is returned as it is.
    pub async fn node_pool_delete(
        &self,
        ctx: &Context,
        request: DeleteKubernetesNodePoolRequest,
    ) -> Result<NodePoolRow> {
        let pool = self.pool_of_cluster(&request.tenant_id, &request.cluster_id, &request.node_pool_id).await?;
        if pool.deleted_at.is_some() || pool.state == "deleting" {
            return Ok(pool);
        }
        self.cluster_for_pools(&request.tenant_id, &request.cluster_id).await?;
        let now = now_micros();
        let deleting = self.store.node_pool_delete(&pool, now, self.cluster_deadline(now)).await?;
        tracing::info!(pool = %deleting.id, by = %ctx.caller.principal_id, "node pool deleting");
        Ok(deleting)
    }
}
