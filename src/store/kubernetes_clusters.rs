//! Kubernetes clusters in the store: the tenant's desired state beside what the provider last
//! reported. Every write that needs the reconciler enqueues its work item in the same
//! transaction; the reconciler's own writes are conditional on the row's `version`, so an
//! observation made before a tenant's change never overwrites that change.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::kubernetes_node_pools::{NodePoolObserved, POOL_COLUMNS, pool_from_row};
use super::resource::{
    Resource, ResourceFilter, ResourceMeta, ResourceTable, attach_children, name_taken, not_found, retried,
};
use super::{AuthzResourceRow, Backend, NewEvent, NodePoolRow, Store, conflict_on_unique};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ClusterState;
use crate::error::{Code, Error, Result};

/// The work kind of the clusters' reconciler.
pub const CLUSTER_KIND: &str = "kubernetes.clusters";

/// The meter a cluster bills.
pub const CLUSTER_METER: &str = "kubernetes.cluster.hours";

/// The authorization resource type of a cluster.
pub const CLUSTER_RESOURCE: &str = "compute-kubernetes-cluster";

/// A cluster as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterRow {
    /// Its common fields (`id` is `kcl_...`).
    pub meta: ResourceMeta<ClusterState>,
    /// The cloud project it lives in.
    pub provider_project: String,
    /// The pool's billing mode at creation.
    pub billing_mode: String,
    /// Free text.
    pub description: String,
    /// `standard` or `autopilot`.
    pub mode: String,
    /// Zone or region.
    pub location: String,
    /// The release channel.
    pub release_channel: String,
    /// The version pin; empty for the channel's default.
    pub requested_version: String,
    /// Whether the tenant asked for a control-plane version (by update) that has not been sent
    /// to the provider yet. Only then does the reconciler move the control plane: a version the
    /// provider moved to by itself (a release-channel upgrade) is followed, not undone.
    pub version_pending: bool,
    /// The tenant network, if any.
    pub network_id: Option<String>,
    /// CIDRs that may reach the endpoint.
    pub authorized_networks: Vec<String>,
    /// Nodes without public addresses.
    pub private_nodes: bool,
    /// The control-plane endpoint.
    pub endpoint: String,
    /// The control plane's CA (PEM).
    pub ca_certificate: String,
    /// Control-plane version last reported.
    pub kubernetes_version: String,
    /// Node version last reported.
    pub node_version: String,
    /// Whether it was ready once.
    pub ready_once: bool,
    /// When the provider first accepted it.
    pub accepted_at: Option<i64>,
    /// Its provider account's version when the row was read (a reconciler's adapter made at
    /// that version is still good); `None` when not read with it.
    pub account_version: Option<i64>,
    /// Its node pools (deleted ones only when asked for).
    pub node_pools: Vec<NodePoolRow>,
}

impl Resource for ClusterRow {
    type State = ClusterState;

    const TABLE: ResourceTable = ResourceTable {
        table: "kubernetes_clusters",
        columns: "provider_project, billing_mode, description, mode, location, release_channel, requested_version, \
                  network_id, authorized_networks, private_nodes, endpoint, ca_certificate, kubernetes_version, \
                  node_version, ready_once, accepted_at, version_pending, \
                  (SELECT version FROM provider_accounts a WHERE a.id = kubernetes_clusters.account_id) AS account_version",
        keeps_idempotency_key: false,
        noun: "cluster",
        not_found: "cluster",
        id_field: "clusterId",
        work_kind: CLUSTER_KIND,
        authz_type: CLUSTER_RESOURCE,
        event_source: "/compute/kubernetes",
        event_prefix: "kubernetes.cluster",
    };

    fn from_row(row: &AnyRow) -> Result<ClusterRow> {
        let networks: String = row.try_get("authorized_networks")?;
        Ok(read_columns!(row, ClusterRow {
            provider_project, billing_mode, description, mode, location, release_channel, requested_version,
            network_id, endpoint, ca_certificate, kubernetes_version, node_version, accepted_at;
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
            version_pending: row.try_get::<i64, _>("version_pending")? != 0,
            authorized_networks: serde_json::from_str(&networks).unwrap_or_default(),
            private_nodes: row.try_get::<i64, _>("private_nodes")? != 0,
            ready_once: row.try_get::<i64, _>("ready_once")? != 0,
            // Only the table's own `SELECT` reads it; a write's `RETURNING` does not.
            account_version: row.try_get::<Option<i64>, _>("account_version").ok().flatten(),
            node_pools: Vec::new(),
        }))
    }
}

impl ClusterRow {
    /// The provider-side name: `bc-k-` and 24 characters of the id.
    pub fn provider_name(&self) -> String {
        provider_name(&self.id)
    }
}

/// `bc-k-` and 24 characters of the id (after its prefix).
pub fn provider_name(id: &str) -> String {
    let body = id.split_once('_').map_or(id, |(_, body)| body);
    format!("bc-k-{}", &body[..body.len().min(24)])
}

/// A cluster to create, with its first pools.
#[derive(Clone, Debug)]
pub struct NewCluster {
    /// The row (state `pending`; observed fields empty).
    pub row: ClusterRow,
    /// The tenant's cap on clusters that are not deleted.
    pub max_per_tenant: i64,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

/// What the reconciler observed of a cluster and its pools, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct ClusterObserved {
    /// The cluster's version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: ClusterState,
    /// Its message.
    pub message: String,
    /// Endpoint, CA and versions, as reported.
    pub endpoint: String,
    /// The CA (PEM).
    pub ca_certificate: String,
    /// Control-plane version.
    pub kubernetes_version: String,
    /// Node version.
    pub node_version: String,
    /// The tenant's version request is still to be sent (cleared once the provider took it).
    pub version_pending: bool,
    /// Ready once.
    pub ready_once: bool,
    /// First accepted by the provider at (starts billing when newly set).
    pub accepted_at: Option<i64>,
    /// The tenant its usage is billed to, when billing applies (pool billing mode `metered` or
    /// `platform-fee`) and has not started yet.
    pub billed_tenant: Option<String>,
    /// The pools' observations.
    pub pools: Vec<NodePoolObserved>,
    /// The drift the pass found (see [`crate::domain::drift`]); empty for none.
    pub drift: Vec<crate::domain::drift::Drift>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// A cluster event (`kubernetes.cluster.<kind>`) on the cluster's subject.
pub fn cluster_event(kind: LifecycleEvent, cluster: &ClusterRow, now: i64, extra: serde_json::Value) -> NewEvent {
    cluster.event(kind, now, extra)
}

impl Store {
    async fn cluster_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<ClusterRow>> {
        crate::measured::store("cluster_fetch_in", self.resource_fetch_in(txn, id)).await
    }

    /// A live cluster with its live pools, read inside the transaction that wrote it: what a
    /// write answers, so that a rehearsal (whose transaction rolls back) answers what the write
    /// would have.
    async fn cluster_written_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<ClusterRow> {
        let mut cluster = self.cluster_fetch_in(txn, id).await?.ok_or_else(|| Error::not_found("cluster", id))?;
        cluster.node_pools = self.node_pool_list_in(txn, id, false).await?;
        Ok(cluster)
    }

    /// One cluster by id with its live pools (all pools if it is deleted).
    pub async fn cluster_fetch(&self, id: &str) -> Result<Option<ClusterRow>> {
        crate::measured::store("cluster_fetch", async {
            // Asked at once, on two connections: the pools' query knows by itself whether the
            // cluster was deleted (then it answers the deleted pools too).
            let (cluster, pools) =
                tokio::try_join!(self.resource_fetch::<ClusterRow>(id), self.node_pool_list_of_cluster(id))?;
            let Some(mut cluster) = cluster else { return Ok(None) };
            cluster.node_pools = pools;
            Ok(Some(cluster))
        })
        .await
    }

    /// Creates a cluster with its pools, its authorization row, its work item and its
    /// `created` event, in one transaction. A cluster with the same id (a retry) is returned
    /// as it is when its request digest matches (`Ok((row, false))`), else `CONFLICT`.
    pub async fn cluster_create(&self, new: &NewCluster, authz: &AuthzResourceRow) -> Result<(ClusterRow, bool)> {
        crate::measured::store("cluster_create", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            if let Some(existing) = self.cluster_fetch_in(&mut txn, &row.id).await? {
                drop(txn);
                retried(existing, row)?;
                let existing = self.cluster_fetch(&row.id).await?.ok_or_else(|| not_found::<ClusterRow>(&row.id))?;
                return Ok((existing, false));
            }
            if self.backend == Backend::Postgres {
                // Serializes creates of one tenant, so that two cannot both pass the cap.
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
                    .bind(&row.tenant_id)
                    .execute(&mut *txn)
                    .await?;
            }
            let live: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM kubernetes_clusters WHERE tenant_id = $1 AND deleted_at IS NULL",
            )
            .bind(&row.tenant_id)
            .fetch_one(&mut *txn)
            .await?;
            if let Some(network) = &row.network_id {
                // Holds the network, so that a delete of it waits for this cluster and then sees it.
                self.network_hold_in(&mut txn, network).await?;
            }
            if live >= new.max_per_tenant {
                return Err(Error::new(
                    Code::QuotaExceeded,
                    format!(
                        "tenant {:?} already has {live} clusters that are not deleted, the most it may have",
                        row.tenant_id
                    ),
                )
                .with_detail("limit", new.max_per_tenant));
            }
            let insert = self
                .resource_insert_in(
                    &mut txn,
                    row,
                    "provider_project, billing_mode, description, mode, location, release_channel, \
                     requested_version, network_id, authorized_networks, private_nodes, endpoint, ca_certificate, \
                     kubernetes_version, node_version, ready_once",
                    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', '', '', 0",
                    |query| {
                        query
                            .bind(&row.provider_project)
                            .bind(&row.billing_mode)
                            .bind(&row.description)
                            .bind(&row.mode)
                            .bind(&row.location)
                            .bind(&row.release_channel)
                            .bind(&row.requested_version)
                            .bind(&row.network_id)
                            .bind(serde_json::to_string(&row.authorized_networks).expect("strings serialize"))
                            .bind(row.private_nodes as i64)
                    },
                )
                .await;
            conflict_on_unique(insert, || name_taken(row))?;
            for pool in &row.node_pools {
                self.node_pool_insert_in(&mut txn, pool).await?;
            }
            let extra = serde_json::json!({"mode": row.mode, "location": row.location, "poolId": row.pool_id});
            self.resource_created(txn, row, authz, new.deadline, extra).await?;
            let created = self.cluster_fetch(&row.id).await?.ok_or_else(|| not_found::<ClusterRow>(&row.id))?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's clusters with their pools, oldest first, at most `limit` (after `after`).
    pub async fn cluster_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<ClusterRow>> {
        crate::measured::store("cluster_list", async {
            let mut clusters: Vec<ClusterRow> = self.resource_list(filter).await?;
            if clusters.is_empty() {
                return Ok(clusters);
            }
            // One query for the pools of the listed clusters alone: a page of a large tenant
            // must not read every pool the tenant has. The ids are the tenant's (the list read
            // them by tenant), so the tenant is no condition here, and neither store's planner
            // is tempted by the index on it.
            let listed: Vec<String> = (0..clusters.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT {POOL_COLUMNS} FROM kubernetes_node_pools WHERE ($1 = 1 OR deleted_at IS NULL) \
                 AND cluster_id IN ({}) ORDER BY created_at, id",
                listed.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(filter.include_deleted as i64);
            for cluster in &clusters {
                query = query.bind(cluster.id.clone());
            }
            let pools = query.fetch_all(&self.pool).await?;
            let pools = pools.iter().map(pool_from_row);
            attach_children(&mut clusters, pools, |p| &p.cluster_id, |c, p| c.node_pools.push(p))?;
            Ok(clusters)
        })
        .await
    }

    /// Applies a tenant's change: new desired fields, `version` bumped, the state `updating` when
    /// the provider has something to do, the reconciler woken.
    pub async fn cluster_update(
        &self,
        cluster: &ClusterRow,
        provider_change: bool,
        now: i64,
        deadline: Option<i64>,
    ) -> Result<ClusterRow> {
        crate::measured::store("cluster_update", async {
            let mut txn = self.begin_write().await?;
            let state = if provider_change && matches!(cluster.state, ClusterState::Ready | ClusterState::Error) {
                ClusterState::Updating
            } else {
                cluster.state
            };
            let updated = sqlx::query(
                "UPDATE kubernetes_clusters SET description = $2, release_channel = $3, requested_version = $4, \
                 authorized_networks = $5, state = $6, message = CASE WHEN $6 = 'updating' THEN '' ELSE message END, \
                 version_pending = $8, version = version + 1, updated_at = $7 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NULL",
            )
            .bind(&cluster.id)
            .bind(&cluster.description)
            .bind(&cluster.release_channel)
            .bind(&cluster.requested_version)
            .bind(serde_json::to_string(&cluster.authorized_networks).expect("strings serialize"))
            .bind(state)
            .bind(now)
            .bind(cluster.version_pending as i64)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::invalid_state(format!(
                    "cluster {:?} is being deleted and cannot change",
                    cluster.id
                ))
                .with_detail("clusterId", cluster.id.as_str()));
            }
            if provider_change {
                self.work_enqueue_in(&mut txn, CLUSTER_KIND, &cluster.id, state.as_str(), deadline, now).await?;
            }
            let written = self.cluster_written_in(&mut txn, &cluster.id).await?;
            self.commit_and_signal(txn).await?;
            Ok(written)
        })
        .await
    }

    /// Locks cluster `id`'s row for the rest of `txn`. A writer of a cluster's node pools takes
    /// it before theirs, the order of a reconciler's observation (the cluster, then its pools):
    /// the other order deadlocked the two on Postgres.
    pub(super) async fn cluster_lock_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<()> {
        let lock = sqlx::query("UPDATE kubernetes_clusters SET updated_at = updated_at WHERE id = $1");
        crate::measured::store("cluster_lock_in", lock.bind(id).execute(&mut **txn)).await?;
        Ok(())
    }

    /// A change to one of the cluster's pools: bumps the cluster's version, puts a ready or
    /// failed cluster `updating` and wakes the reconciler, inside the pool's transaction.
    pub(super) async fn cluster_touch_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
        deadline: Option<i64>,
    ) -> Result<()> {
        crate::measured::store("cluster_touch_in", async {
            let updated = sqlx::query(
                "UPDATE kubernetes_clusters SET state = CASE WHEN state IN ('ready', 'error') THEN 'updating' \
                 ELSE state END, message = CASE WHEN state IN ('ready', 'error') THEN '' ELSE message END, \
                 version = version + 1, updated_at = $2 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut **txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::invalid_state(format!(
                    "cluster {id:?} is being deleted and its node pools cannot change"
                )));
            }
            let state: String = sqlx::query_scalar("SELECT state FROM kubernetes_clusters WHERE id = $1")
                .bind(id)
                .fetch_one(&mut **txn)
                .await?;
            self.work_enqueue_in(txn, CLUSTER_KIND, id, &state, deadline, now).await
        })
        .await
    }

    /// Marks the cluster and its pools for deletion and wakes the reconciler, through the shared
    /// delete ([`Store::resource_delete`]).
    pub async fn cluster_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<ClusterRow> {
        crate::measured::store("cluster_delete", async {
            // The row with its pools as the delete's transaction left them: a rehearsal's
            // transaction rolls back, and answers what it wrote.
            let written = std::sync::Arc::new(std::sync::Mutex::new(None));
            let slot = written.clone();
            self.resource_delete::<ClusterRow>(id, now, deadline, |store, txn, id| {
                Box::pin(async move {
                    sqlx::query(
                        "UPDATE kubernetes_node_pools SET state = 'deleting', message = '', version = version + 1, \
                         updated_at = $2 WHERE cluster_id = $1 AND deleted_at IS NULL",
                    )
                    .bind(id)
                    .bind(now)
                    .execute(&mut **txn)
                    .await?;
                    *slot.lock().expect("not poisoned") = store.cluster_fetch_in(txn, id).await?;
                    Ok(())
                })
            })
            .await?;
            let written = written.lock().expect("not poisoned").take();
            match written {
                Some(row) => Ok(row),
                None => self.cluster_fetch(id).await?.ok_or_else(|| Error::not_found("cluster", id)),
            }
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// cluster meanwhile (then nothing is written and `false` is returned: the change has
    /// already queued the next pass). Starts billing when the provider first accepted it.
    pub async fn cluster_observe(&self, id: &str, observed: &ClusterObserved, now: i64) -> Result<bool> {
        crate::measured::store("cluster_observe", async {
            let mut txn = self.begin_write().await?;
            let common = (observed.version, observed.state, observed.message.as_str());
            let set = "endpoint = ?, ca_certificate = ?, kubernetes_version = ?, node_version = ?, ready_once = ?, \
                       accepted_at = COALESCE(accepted_at, ?), version_pending = ?, drift = ?";
            let written = self
                .resource_observe_in::<ClusterRow>(&mut txn, id, common, now, set, |query| {
                    query
                        .bind(&observed.endpoint)
                        .bind(&observed.ca_certificate)
                        .bind(&observed.kubernetes_version)
                        .bind(&observed.node_version)
                        .bind(observed.ready_once as i64)
                        .bind(observed.accepted_at)
                        .bind(observed.version_pending as i64)
                        .bind(crate::domain::drift::to_column(&observed.drift))
                })
                .await?;
            if !written {
                return Ok(false);
            }
            for pool in &observed.pools {
                self.node_pool_observe_in(&mut txn, pool, now).await?;
            }
            if let (Some(accepted), Some(tenant)) = (observed.accepted_at, &observed.billed_tenant) {
                self.usage_billable_start_in(&mut txn, CLUSTER_METER, id, tenant, accepted).await?;
            }
            self.commit_with_events(txn, &observed.events).await?;
            Ok(true)
        })
        .await
    }

    /// The cluster is gone at the provider: marks it and its pools deleted, removes its
    /// authorization row, ends its billing and publishes `deleted`, in one transaction.
    pub async fn cluster_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("cluster_finish_delete", async {
            let mut txn = self.begin_write().await?;
            if self.cluster_finish_delete_in(&mut txn, id, now).await? {
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// [`Store::cluster_finish_delete`] inside the caller's transaction (its kubeconfig grants
    /// forgotten too): whether it wrote.
    pub(super) async fn cluster_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        if !self.resource_mark_deleted_in::<ClusterRow>(txn, id, now, "").await? {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE kubernetes_node_pools SET state = 'deleted', deleted_at = $2, updated_at = $2 \
             WHERE cluster_id = $1 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        sqlx::query("DELETE FROM cluster_access_grants WHERE cluster_id = $1").bind(id).execute(&mut **txn).await?;
        self.usage_billable_end_in(txn, CLUSTER_METER, id, now).await?;
        self.resource_deleted_in::<ClusterRow>(txn, id, now).await?;
        Ok(true)
    }

    /// Publishes one event about a cluster on its own (credentials issued).
    pub async fn cluster_event_append(&self, event: &NewEvent) -> Result<()> {
        crate::measured::store("cluster_event_append", async {
            let mut txn = self.begin_write().await?;
            self.event_append_in(&mut txn, event).await?;
            self.commit_and_signal(txn).await
        })
        .await
    }
}
