//! Node pools of `standard` clusters added, resized and removed after creation. Each change
//! puts the cluster `updating` until the reconciler has converged it. The decision was taken on
//! the cluster (`compute:kubernetes:update`/`read @ compute-kubernetes-cluster`) by the API layer.

use super::create_once::CreateKey;
use super::findings::{beside_schema, refusal};
use super::kubernetes::region_of_zone;
use super::kubernetes_clusters::{check_pool_bounds, check_pool_zones, pool_spec};
use super::request_digest::{self, RequestDigest};
use super::update_mask::Named;
use super::{Context, Service};
use crate::domain::states::NodePoolState;
use crate::error::{Error, FieldViolation, Result};
use crate::ids::KubernetesNodePoolId;
use crate::proto::compute::{
    CreateKubernetesNodePoolRequest, DeleteKubernetesNodePoolRequest, GetKubernetesNodePoolRequest,
    KubernetesNodePoolSpec, ListKubernetesNodePoolsRequest, UpdateKubernetesNodePoolRequest,
};
use crate::store::{ClusterRow, NodePoolRow, NodePoolSpecRow, now_micros};

/// The create request's message, whose canonical form is the digest.
const CREATE_NODE_POOL_REQUEST: &str = "bettercompute.compute.v1.CreateKubernetesNodePoolRequest";

/// The most node pools a cluster has.
const MAX_POOLS: usize = 10;

/// What `update` changes (GKE changes all of them in place).
const UPDATABLE: &[&str] =
    &["nodeCount", "autoscaling", "machineType", "diskGiB", "diskType", "accelerators", "zones", "labels", "taints"];

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
    pub(super) async fn pool_of_cluster(&self, tenant: &str, cluster_id: &str, pool_id: &str) -> Result<NodePoolRow> {
        match self.store.node_pool_fetch(pool_id).await? {
            Some(pool) if pool.tenant_id == tenant && pool.cluster_id == cluster_id => Ok(pool),
            _ => Err(Error::not_found("node pool", pool_id)),
        }
    }

    /// Adds a node pool to a `standard` cluster; it is `pending` and the cluster `updating`.
    /// The pool's id derives from the tenant, the caller and the idempotency key: a retry returns
    /// the pool the first call made, and the key reused with another request is `CONFLICT`.
    pub async fn node_pool_create(
        &self,
        ctx: &Context,
        request: CreateKubernetesNodePoolRequest,
    ) -> Result<NodePoolRow> {
        let id = KubernetesNodePoolId::derived(&request.tenant_id, &ctx.caller.principal_id, &request.idempotency_key);
        let id = id.to_string();
        let digest = RequestDigest { current: request_digest::of(CREATE_NODE_POOL_REQUEST, &request), legacy: None };
        let key = CreateKey { what: "node pool", id_field: "nodePoolId", id: &id, digest: &digest };
        let fetch = || self.store.node_pool_fetch(&id);
        let create = async { Ok((self.node_pool_create_new(ctx, request, &id, &digest.current).await?, true)) };
        self.create_once(ctx, key, fetch, create).await
    }

    /// The checks and the insert of a node pool no earlier call with its key made. Every violated
    /// field is named at once: the schema stage's (in `ctx.schema`), the bounds and, once the
    /// cluster is known, the zones; nothing is written while there is one.
    async fn node_pool_create_new(
        &self,
        ctx: &Context,
        request: CreateKubernetesNodePoolRequest,
        id: &str,
        digest: &str,
    ) -> Result<NodePoolRow> {
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
        let mut rules = check_pool_bounds(&spec, "");
        let cluster = self
            .cluster_for_pools(&request.tenant_id, &request.cluster_id)
            .await
            .map_err(|error| refusal(ctx, error, rules.clone()))?;
        if cluster.node_pools.len() >= MAX_POOLS {
            let full = Error::invalid_state(format!("cluster {:?} already has {MAX_POOLS} node pools", cluster.id))
                .with_detail("limit", MAX_POOLS as i64);
            return Err(refusal(ctx, full, rules));
        }
        let placement = self
            .kubernetes_placement(&cluster.tenant_id, &cluster.pool_id, &cluster.location)
            .await
            .map_err(|error| refusal(ctx, error, rules.clone()))?;
        rules.extend(check_pool_zones(&spec, &placement.zones, &placement.region, ""));
        ctx.report(beside_schema(ctx, rules))?;
        let now = now_micros();
        let pool = NodePoolRow {
            id: id.to_owned(),
            cluster_id: cluster.id.clone(),
            tenant_id: cluster.tenant_id.clone(),
            name: request.name,
            spec,
            state: NodePoolState::Pending,
            message: String::new(),
            current_node_count: 0,
            version: 1,
            created_at: now,
            updated_at: now,
            deleted_at: None,
            idempotency_key: request.idempotency_key,
            request_digest: digest.to_owned(),
        };
        self.store.node_pool_create(&pool, self.cluster_deadline(now)).await
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

    /// Changes a pool in place: what the update's mask names of what GKE changes on a running
    /// pool (size, autoscaling, machine type, boot disk, accelerators, zones, labels, taints).
    /// Named without a value, autoscaling goes off and the accelerators come off; an empty list
    /// or map clears the labels and taints, and empty zones are the cluster's default zones. Spot
    /// nodes and the name cannot change in place: asking for another value is refused, saying to
    /// make a new pool. Every violated field is named at once (the schema stage's with these
    /// rules), and nothing is written while there is one. The changes queue in the pool's spec;
    /// the reconciler sends them one GKE operation at a time.
    pub async fn node_pool_update(
        &self,
        ctx: &Context,
        request: UpdateKubernetesNodePoolRequest,
    ) -> Result<NodePoolRow> {
        let named = Named::of(&request.update_mask);
        // The deprecated flags name their field until the next release.
        let autoscaling_named = named.has("autoscaling") || request.disable_autoscaling;
        let accelerators_named = named.has("accelerators") || request.remove_accelerators;
        let labels_named = named.has("labels") || request.set_labels;
        let zones_named = named.has("zones") || request.set_zones;
        let taints_named = named.has("taints") || request.set_taints;
        let anything_named = autoscaling_named
            || accelerators_named
            || labels_named
            || zones_named
            || taints_named
            || ["node_count", "machine_type", "disk_gib", "disk_type", "spot", "name"].iter().any(|f| named.has(f));
        if !anything_named {
            let nothing = Error::invalid_input(format!(
                "name at least one field to change: {} (an empty list or map clears zones, labels or taints; \
                 null turns autoscaling off or removes the accelerators)",
                UPDATABLE.join(", ")
            ))
            .with_detail("accepted", serde_json::json!(UPDATABLE));
            return Err(ctx.schema_first(nothing));
        }
        let mut rules = Vec::new();
        let mut exclusive = |value: bool, flag: bool, field: &str, other: &str| {
            if value && flag {
                rules.push(FieldViolation::new(
                    field,
                    format!("a new {field} and {other} exclude each other; give one (or name {field} without a value)"),
                ));
            }
        };
        exclusive(request.autoscaling.is_some(), request.disable_autoscaling, "autoscaling", "disableAutoscaling");
        exclusive(request.accelerators.is_some(), request.remove_accelerators, "accelerators", "removeAccelerators");
        // What a pool always has cannot be named without a value (that would be no value at all).
        let kept = [
            (named.has("node_count") && request.node_count.is_none(), "nodeCount", "0 to 1000 nodes per zone"),
            (named.has("machine_type") && request.machine_type.is_none(), "machineType", "one such as e2-standard-4"),
            (named.has("disk_gib") && request.disk_gib.is_none(), "diskGiB", "10 to 65536"),
            (named.has("disk_type") && request.disk_type.is_none(), "diskType", "one such as pd-balanced"),
        ];
        for (_, field, accepted) in kept.iter().filter(|(emptied, _, _)| *emptied) {
            rules.push(FieldViolation::new(
                *field,
                format!("is named without a value, and a node pool always has one: give {accepted}, or leave it out"),
            ));
        }
        let spec_change = |spec: &mut NodePoolSpecRow| {
            if let Some(count) = request.node_count {
                spec.node_count = count;
            }
            if autoscaling_named {
                spec.autoscaling = request
                    .autoscaling
                    .as_ref()
                    .filter(|_| !request.disable_autoscaling)
                    .map(|a| (a.min_nodes.unwrap_or_default(), a.max_nodes.unwrap_or_default()));
            }
            if labels_named {
                spec.labels = request.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            }
            if let Some(machine_type) = &request.machine_type {
                spec.machine_type = machine_type.clone();
            }
            if let Some(disk_gib) = request.disk_gib {
                spec.disk_gib = disk_gib;
            }
            if let Some(disk_type) = &request.disk_type {
                spec.disk_type = disk_type.clone();
            }
            if accelerators_named {
                spec.accelerators = request
                    .accelerators
                    .as_ref()
                    .filter(|_| !request.remove_accelerators)
                    .map(|a| (a.r#type.clone(), a.count));
            }
            if zones_named {
                spec.zones = request.zones.clone();
            }
            if taints_named {
                spec.taints =
                    request.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.clone())).collect();
            }
        };
        // The bounds as asked, before the pool is looked up, so that they are named with the
        // schema stage's violations whatever the lookup finds.
        let mut asked = NodePoolSpecRow::default();
        spec_change(&mut asked);
        if autoscaling_named {
            rules.extend(check_pool_bounds(&asked, ""));
        }
        let found = async {
            let cluster = self.cluster_for_pools(&request.tenant_id, &request.cluster_id).await?;
            let pool = self.pool_of_cluster(&request.tenant_id, &request.cluster_id, &request.node_pool_id).await?;
            if pool.deleted_at.is_some() || pool.state == NodePoolState::Deleting {
                return Err(Error::invalid_state(format!(
                    "node pool {:?} is {} and cannot change",
                    pool.id, pool.state
                ))
                .with_detail("state", pool.state.as_str()));
            }
            // New zones are checked against the account's zones of the cluster's region.
            let zones = if zones_named { Some(self.cluster_zones(&cluster).await?) } else { None };
            Ok((pool, zones))
        };
        let (pool, zones) = found.await.map_err(|error| refusal(ctx, error, rules.clone()))?;
        if let Some(spot) = request.spot
            && spot != pool.spec.spot
        {
            rules.push(FieldViolation::new(
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
            rules.push(FieldViolation::new(
                "name",
                format!(
                    "a node pool's name is its provider-side name and cannot change ({:?}); create a new node pool \
                     named {name:?}, move the workloads, then delete this one",
                    pool.name
                ),
            ));
        }
        if let Some((zones, region)) = &zones {
            rules.extend(check_pool_zones(&asked, zones, region, ""));
        }
        ctx.report(beside_schema(ctx, rules))?;
        let mut spec = pool.spec.clone();
        spec_change(&mut spec);
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
        if pool.deleted_at.is_some() || pool.state == NodePoolState::Deleting {
            return Ok(pool);
        }
        self.cluster_for_pools(&request.tenant_id, &request.cluster_id).await?;
        let now = now_micros();
        let deleting = self.store.node_pool_delete(&pool, now, self.cluster_deadline(now)).await?;
        tracing::info!(pool = %deleting.id, by = %ctx.caller.principal_id, "node pool deleting");
        Ok(deleting)
    }
}
