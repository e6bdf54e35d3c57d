//! Kubernetes clusters in the store: the tenant's desired state beside what the provider last
//! reported. Every write that needs the reconciler enqueues its work item in the same
//! transaction; the reconciler's own writes are conditional on the row's `version`, so an
//! observation made before a tenant's change never overwrites that change.

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::kubernetes_node_pools::{NodePoolObserved, POOL_COLUMNS, pool_from_row};
use super::{AuthzResourceRow, Backend, NewEvent, NodePoolRow, Store, conflict_on_unique};
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
    /// `kcl_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its project.
    pub project_id: Option<String>,
    /// Its provider pool.
    pub pool_id: String,
    /// The pool's account.
    pub account_id: String,
    /// The cloud project it lives in.
    pub provider_project: String,
    /// The pool's billing mode at creation.
    pub billing_mode: String,
    /// Who created it.
    pub owner_id: String,
    /// Its name.
    pub name: String,
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
    /// Digest of the create request.
    pub request_digest: String,
    /// The state.
    pub state: String,
    /// Why it is in `error`.
    pub message: String,
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
    /// When deletion was asked for.
    pub delete_requested_at: Option<i64>,
    /// Bumped by every tenant change.
    pub version: i64,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
    /// Its node pools (deleted ones only when asked for).
    pub node_pools: Vec<NodePoolRow>,
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
    pub state: String,
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
    /// Whether billing applies (pool billing mode `metered` or `platform-fee`).
    pub billable: bool,
    /// The pools' observations.
    pub pools: Vec<NodePoolObserved>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

const COLUMNS: &str = "id, tenant_id, project_id, pool_id, account_id, provider_project, billing_mode, owner_id, name, \
                       description, mode, location, release_channel, requested_version, network_id, authorized_networks, \
                       private_nodes, request_digest, state, message, endpoint, ca_certificate, kubernetes_version, \
                       node_version, ready_once, accepted_at, delete_requested_at, version, created_at, updated_at, \
                       deleted_at, version_pending";

fn cluster_from_row(row: &AnyRow) -> Result<ClusterRow> {
    let networks: String = row.try_get("authorized_networks")?;
    Ok(ClusterRow {
        id: row.try_get("id")?,
        tenant_id: row.try_get("tenant_id")?,
        project_id: row.try_get("project_id")?,
        pool_id: row.try_get("pool_id")?,
        account_id: row.try_get("account_id")?,
        provider_project: row.try_get("provider_project")?,
        billing_mode: row.try_get("billing_mode")?,
        owner_id: row.try_get("owner_id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        mode: row.try_get("mode")?,
        location: row.try_get("location")?,
        release_channel: row.try_get("release_channel")?,
        requested_version: row.try_get("requested_version")?,
        version_pending: row.try_get::<i64, _>("version_pending")? != 0,
        network_id: row.try_get("network_id")?,
        authorized_networks: serde_json::from_str(&networks).unwrap_or_default(),
        private_nodes: row.try_get::<i64, _>("private_nodes")? != 0,
        request_digest: row.try_get("request_digest")?,
        state: row.try_get("state")?,
        message: row.try_get("message")?,
        endpoint: row.try_get("endpoint")?,
        ca_certificate: row.try_get("ca_certificate")?,
        kubernetes_version: row.try_get("kubernetes_version")?,
        node_version: row.try_get("node_version")?,
        ready_once: row.try_get::<i64, _>("ready_once")? != 0,
        accepted_at: row.try_get("accepted_at")?,
        delete_requested_at: row.try_get("delete_requested_at")?,
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
        node_pools: Vec::new(),
    })
}

/// A cluster event on the cluster's subject.
pub fn cluster_event(kind: &str, cluster: &ClusterRow, now: i64, extra: serde_json::Value) -> NewEvent {
    let mut data = serde_json::json!({
        "clusterId": cluster.id,
        "name": cluster.name,
        "state": cluster.state,
        "version": cluster.version,
    });
    if let (Some(data), serde_json::Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    NewEvent {
        source: "/compute/kubernetes".to_owned(),
        event_type: format!("kubernetes.cluster.{kind}"),
        subject: cluster.id.clone(),
        tenant_id: cluster.tenant_id.clone(),
        time: now,
        data,
    }
}

impl Store {
    async fn cluster_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<ClusterRow>> {
        crate::measured::store("cluster_fetch_in", async {
            let sql = format!("SELECT {COLUMNS} FROM kubernetes_clusters WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut **txn).await?;
            row.as_ref().map(cluster_from_row).transpose()
        })
        .await
    }

    /// One cluster by id with its live pools (all pools if it is deleted).
    pub async fn cluster_fetch(&self, id: &str) -> Result<Option<ClusterRow>> {
        crate::measured::store("cluster_fetch", async {
            let sql = format!("SELECT {COLUMNS} FROM kubernetes_clusters WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
            let Some(mut cluster) = row.as_ref().map(cluster_from_row).transpose()? else { return Ok(None) };
            cluster.node_pools = self.node_pool_list(id, cluster.deleted_at.is_some()).await?;
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
                if existing.request_digest != row.request_digest {
                    return Err(Error::conflict(format!(
                        "idempotency key already used for cluster {:?} with a different request",
                        existing.id
                    ))
                    .with_detail("clusterId", existing.id.as_str()));
                }
                let existing =
                    self.cluster_fetch(&row.id).await?.ok_or_else(|| Error::not_found("cluster", &row.id))?;
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
            let insert = sqlx::query(
                "INSERT INTO kubernetes_clusters (id, tenant_id, project_id, pool_id, account_id, provider_project, \
                 billing_mode, owner_id, name, description, mode, location, release_channel, requested_version, \
                 network_id, authorized_networks, private_nodes, request_digest, state, message, endpoint, \
                 ca_certificate, kubernetes_version, node_version, ready_once, version, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 'pending', \
                 '', '', '', '', '', 0, 1, $19, $19)",
            )
            .bind(&row.id)
            .bind(&row.tenant_id)
            .bind(&row.project_id)
            .bind(&row.pool_id)
            .bind(&row.account_id)
            .bind(&row.provider_project)
            .bind(&row.billing_mode)
            .bind(&row.owner_id)
            .bind(&row.name)
            .bind(&row.description)
            .bind(&row.mode)
            .bind(&row.location)
            .bind(&row.release_channel)
            .bind(&row.requested_version)
            .bind(&row.network_id)
            .bind(serde_json::to_string(&row.authorized_networks).expect("strings serialize"))
            .bind(row.private_nodes as i64)
            .bind(&row.request_digest)
            .bind(row.created_at)
            .execute(&mut *txn)
            .await;
            conflict_on_unique(insert, || {
                Error::conflict(format!("tenant {:?} already has a cluster named {:?}", row.tenant_id, row.name))
                    .with_detail("name", row.name.as_str())
            })?;
            for pool in &row.node_pools {
                self.node_pool_insert_in(&mut txn, pool).await?;
            }
            self.authz_resource_insert_in(&mut txn, authz).await?;
            self.work_enqueue_in(&mut txn, CLUSTER_KIND, &row.id, "pending", new.deadline, row.created_at).await?;
            let created = self.cluster_fetch_in(&mut txn, &row.id).await?.expect("just inserted");
            let event = cluster_event(
                "created",
                &created,
                row.created_at,
                serde_json::json!({"mode": row.mode, "location": row.location, "poolId": row.pool_id}),
            );
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            let created = self.cluster_fetch(&row.id).await?.ok_or_else(|| Error::not_found("cluster", &row.id))?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's clusters with their pools, oldest first, at most `limit`.
    pub async fn cluster_list(
        &self,
        tenant_id: &str,
        pool_id: Option<&str>,
        project_id: Option<&str>,
        include_deleted: bool,
        limit: i64,
    ) -> Result<Vec<ClusterRow>> {
        crate::measured::store("cluster_list", async {
            let sql = format!(
                "SELECT {COLUMNS} FROM kubernetes_clusters WHERE tenant_id = $1 AND ($2 IS NULL OR pool_id = $2) \
                 AND ($3 IS NULL OR project_id = $3) AND ($4 = 1 OR deleted_at IS NULL) ORDER BY created_at, id \
                 LIMIT $5"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(tenant_id)
                .bind(pool_id)
                .bind(project_id)
                .bind(include_deleted as i64)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
            let mut clusters: Vec<ClusterRow> = rows.iter().map(cluster_from_row).collect::<Result<_>>()?;
            if clusters.is_empty() {
                return Ok(clusters);
            }
            // One query for every pool of the tenant's listed clusters.
            let sql = format!(
                "SELECT {POOL_COLUMNS} FROM kubernetes_node_pools WHERE tenant_id = $1 AND ($2 = 1 \
                 OR deleted_at IS NULL) ORDER BY created_at, id"
            );
            let pools = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(tenant_id)
                .bind(include_deleted as i64)
                .fetch_all(&self.pool)
                .await?;
            let position: HashMap<String, usize> =
                clusters.iter().enumerate().map(|(i, c)| (c.id.clone(), i)).collect();
            for pool in pools.iter().map(pool_from_row) {
                let pool = pool?;
                if let Some(&i) = position.get(&pool.cluster_id) {
                    clusters[i].node_pools.push(pool);
                }
            }
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
            let state = if provider_change && matches!(cluster.state.as_str(), "ready" | "error") {
                "updating"
            } else {
                cluster.state.as_str()
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
                self.work_enqueue_in(&mut txn, CLUSTER_KIND, &cluster.id, state, deadline, now).await?;
            }
            self.commit_and_signal(txn).await?;
            self.cluster_fetch(&cluster.id).await?.ok_or_else(|| Error::not_found("cluster", &cluster.id))
        })
        .await
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

    /// Marks the cluster and its pools for deletion and wakes the reconciler; publishes
    /// `deleting`. A cluster already `deleting` is returned unchanged; one whose delete failed
    /// (`error` after a delete) is retried at once.
    pub async fn cluster_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<ClusterRow> {
        crate::measured::store("cluster_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_clusters SET state = 'deleting', message = '', version = version + 1, \
                 updated_at = $2, delete_requested_at = COALESCE(delete_requested_at, $2) \
                 WHERE id = $1 AND deleted_at IS NULL AND state <> 'deleting'",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() > 0 {
                sqlx::query(
                    "UPDATE kubernetes_node_pools SET state = 'deleting', message = '', version = version + 1, \
                     updated_at = $2 WHERE cluster_id = $1 AND deleted_at IS NULL",
                )
                .bind(id)
                .bind(now)
                .execute(&mut *txn)
                .await?;
                // A fresh item: the delete backoff starts over, and the first try is now.
                sqlx::query("UPDATE work_items SET attempts = 0 WHERE kind = $1 AND object_id = $2")
                    .bind(CLUSTER_KIND)
                    .bind(id)
                    .execute(&mut *txn)
                    .await?;
                self.work_enqueue_in(&mut txn, CLUSTER_KIND, id, "deleting", deadline, now).await?;
                let cluster =
                    self.cluster_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("cluster", id))?;
                self.event_append_in(&mut txn, &cluster_event("deleting", &cluster, now, serde_json::json!({})))
                    .await?;
                self.commit_and_signal(txn).await?;
            } else {
                drop(txn);
            }
            self.cluster_fetch(id).await?.ok_or_else(|| Error::not_found("cluster", id))
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// cluster meanwhile (then nothing is written and `false` is returned: the change has
    /// already queued the next pass). Starts billing when the provider first accepted it.
    pub async fn cluster_observe(&self, id: &str, observed: &ClusterObserved, now: i64) -> Result<bool> {
        crate::measured::store("cluster_observe", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_clusters SET state = $3, message = $4, endpoint = $5, ca_certificate = $6, \
                 kubernetes_version = $7, node_version = $8, ready_once = $9, \
                 accepted_at = COALESCE(accepted_at, $10), updated_at = $11, version_pending = $12 WHERE id = $1 \
                 AND version = $2 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(observed.version)
            .bind(&observed.state)
            .bind(&observed.message)
            .bind(&observed.endpoint)
            .bind(&observed.ca_certificate)
            .bind(&observed.kubernetes_version)
            .bind(&observed.node_version)
            .bind(observed.ready_once as i64)
            .bind(observed.accepted_at)
            .bind(now)
            .bind(observed.version_pending as i64)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
            for pool in &observed.pools {
                self.node_pool_observe_in(&mut txn, pool, now).await?;
            }
            if let (Some(accepted), true) = (observed.accepted_at, observed.billable) {
                let tenant: String = sqlx::query_scalar("SELECT tenant_id FROM kubernetes_clusters WHERE id = $1")
                    .bind(id)
                    .fetch_one(&mut *txn)
                    .await?;
                self.usage_billable_start_in(&mut txn, CLUSTER_METER, id, &tenant, accepted).await?;
            }
            for event in &observed.events {
                self.event_append_in(&mut txn, event).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// The cluster is gone at the provider: marks it and its pools deleted, removes its
    /// authorization row, ends its billing and publishes `deleted`, in one transaction.
    pub async fn cluster_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("cluster_finish_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_clusters SET state = 'deleted', message = '', deleted_at = $2, updated_at = $2 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NOT NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(());
            }
            sqlx::query(
                "UPDATE kubernetes_node_pools SET state = 'deleted', deleted_at = $2, updated_at = $2 \
                 WHERE cluster_id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            self.authz_resource_delete_in(&mut txn, CLUSTER_RESOURCE, id).await?;
            self.usage_billable_end_in(&mut txn, CLUSTER_METER, id, now).await?;
            let cluster = self.cluster_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("cluster", id))?;
            self.event_append_in(&mut txn, &cluster_event("deleted", &cluster, now, serde_json::json!({}))).await?;
            self.commit_and_signal(txn).await?;
            Ok(())
        })
        .await
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
