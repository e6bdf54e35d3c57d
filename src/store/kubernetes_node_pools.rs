//! Node pools of Kubernetes clusters in the store: the tenant's spec (one JSON column, since
//! nothing queries inside it) beside the state the reconciler last observed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, Row, Transaction};

use super::{NewEvent, Store, conflict_on_unique};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::NodePoolState;
use crate::error::{Error, Result};

/// What the tenant asked for of a node pool (the `spec` column).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodePoolSpecRow {
    /// The machine type.
    pub machine_type: String,
    /// Nodes per zone.
    pub node_count: i32,
    /// Autoscaling bounds (min, max), when it scales.
    pub autoscaling: Option<(i32, i32)>,
    /// Boot disk size; 0 for the provider's default.
    #[serde(rename = "diskGiB")]
    pub disk_gib: i32,
    /// Boot disk type; empty for the provider's default.
    pub disk_type: String,
    /// Spot nodes.
    pub spot: bool,
    /// Accelerator type and count per node.
    pub accelerators: Option<(String, i32)>,
    /// Zones the nodes run in; empty for the cluster's default.
    pub zones: Vec<String>,
    /// Kubernetes labels on the nodes.
    pub labels: BTreeMap<String, String>,
    /// Taints: key, value, effect.
    pub taints: Vec<(String, String, String)>,
}

/// A node pool as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePoolRow {
    /// `knp_...`.
    pub id: String,
    /// Its cluster.
    pub cluster_id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its name, also the provider-side name.
    pub name: String,
    /// What the tenant asked for.
    pub spec: NodePoolSpecRow,
    /// `pending`, `ready`, `updating`, `deleting`, `deleted` or `error`.
    pub state: NodePoolState,
    /// Why it is in `error`.
    pub message: String,
    /// The live node count last reported.
    pub current_node_count: i64,
    /// Bumped by every change the tenant makes.
    pub version: i64,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
    /// The idempotency key of the create that added it; empty for a pool made with its cluster.
    pub idempotency_key: String,
    /// Digest of that create request; empty with the key.
    pub request_digest: String,
}

/// What the reconciler observed of one pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePoolObserved {
    /// The pool.
    pub id: String,
    /// The pool's version the observation was made against: a newer one is left alone.
    pub version: i64,
    /// Its new state.
    pub state: NodePoolState,
    /// Its message.
    pub message: String,
    /// The live node count.
    pub current_node_count: i64,
    /// Whether the pool is now gone (deleted at the provider).
    pub deleted: bool,
}

pub(super) const POOL_COLUMNS: &str = "id, cluster_id, tenant_id, name, spec, state, message, current_node_count, \
                                      version, created_at, updated_at, deleted_at, idempotency_key, request_digest";

pub(super) fn pool_from_row(row: &AnyRow) -> Result<NodePoolRow> {
    let spec: String = row.try_get("spec")?;
    Ok(read_columns!(row, NodePoolRow {
        id, cluster_id, tenant_id, name, state, message, current_node_count, version, created_at, updated_at,
        deleted_at, idempotency_key, request_digest;
        spec: serde_json::from_str(&spec).map_err(|e| Error::internal(format!("a node pool spec is not JSON: {e}")))?,
    }))
}

impl Store {
    /// Inserts a node pool inside the caller's transaction with its `kubernetes.nodepool.created`
    /// event; `CONFLICT` if the cluster already has a live pool of that name.
    pub(super) async fn node_pool_insert_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        pool: &NodePoolRow,
    ) -> Result<()> {
        crate::measured::store("node_pool_insert_in", async {
            let spec = serde_json::to_string(&pool.spec).expect("a spec serializes");
            conflict_on_unique(
                sqlx::query(
                    "INSERT INTO kubernetes_node_pools (id, cluster_id, tenant_id, name, spec, state, message, \
                     current_node_count, version, created_at, updated_at, idempotency_key, request_digest) VALUES ($1, $2, \
                     $3, $4, $5, $6, '', 0, 1, $7, $7, $8, $9)",
                )
                .bind(&pool.id)
                .bind(&pool.cluster_id)
                .bind(&pool.tenant_id)
                .bind(&pool.name)
                .bind(spec)
                .bind(pool.state)
                .bind(pool.created_at)
                .bind(&pool.idempotency_key)
                .bind(&pool.request_digest)
                .execute(&mut **txn)
                .await,
                || {
                    Error::conflict(format!("the cluster already has a node pool named {:?}", pool.name))
                        .with_detail("name", pool.name.as_str())
                },
            )?;
            self.event_append_in(txn, &node_pool_event(LifecycleEvent::Created, pool, pool.created_at, "")).await
        })
        .await
    }

    /// The pools of `cluster_id`, oldest first; deleted ones only with `include_deleted`.
    pub async fn node_pool_list(&self, cluster_id: &str, include_deleted: bool) -> Result<Vec<NodePoolRow>> {
        crate::measured::store("node_pool_list", async {
            node_pools_on(&mut *self.pool.acquire().await?, cluster_id, include_deleted).await
        })
        .await
    }

    /// The pools a cluster shows: its live ones, and every one once the cluster is deleted.
    pub(super) async fn node_pool_list_of_cluster(&self, cluster_id: &str) -> Result<Vec<NodePoolRow>> {
        let sql = format!(
            "SELECT {POOL_COLUMNS} FROM kubernetes_node_pools WHERE cluster_id = $1 AND (deleted_at IS NULL \
             OR EXISTS (SELECT 1 FROM kubernetes_clusters c WHERE c.id = $1 AND c.deleted_at IS NOT NULL)) \
             ORDER BY created_at, id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(cluster_id).fetch_all(&self.pool).await?;
        rows.iter().map(pool_from_row).collect()
    }

    /// [`Store::node_pool_list`] inside the caller's transaction.
    pub(super) async fn node_pool_list_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        cluster_id: &str,
        include_deleted: bool,
    ) -> Result<Vec<NodePoolRow>> {
        node_pools_on(txn, cluster_id, include_deleted).await
    }

    /// One pool by id.
    pub async fn node_pool_fetch(&self, id: &str) -> Result<Option<NodePoolRow>> {
        crate::measured::store("node_pool_fetch", async { node_pool_on(&mut *self.pool.acquire().await?, id).await })
            .await
    }

    /// One pool by id, read inside the transaction that wrote it: what a write answers, so that
    /// a rehearsal (whose transaction rolls back) answers what the write would have.
    async fn node_pool_written_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<NodePoolRow> {
        node_pool_on(txn, id).await?.ok_or_else(|| Error::not_found("node pool", id))
    }

    /// Adds a pool to a live cluster: the pool `pending`, the cluster `updating`, the reconciler
    /// woken, in one transaction.
    pub async fn node_pool_create(&self, pool: &NodePoolRow, cluster_deadline: Option<i64>) -> Result<NodePoolRow> {
        crate::measured::store("node_pool_create", async {
            let mut txn = self.begin_write().await?;
            self.node_pool_insert_in(&mut txn, pool).await?;
            self.cluster_touch_in(&mut txn, &pool.cluster_id, pool.created_at, cluster_deadline).await?;
            let written = self.node_pool_written_in(&mut txn, &pool.id).await?;
            self.commit_and_signal(txn).await?;
            Ok(written)
        })
        .await
    }

    /// Replaces a pool's spec, bumps its version, puts it (and its cluster) `updating`.
    pub async fn node_pool_update(
        &self,
        pool: &NodePoolRow,
        spec: &NodePoolSpecRow,
        now: i64,
        cluster_deadline: Option<i64>,
    ) -> Result<NodePoolRow> {
        crate::measured::store("node_pool_update", async {
            let mut txn = self.begin_write().await?;
            self.cluster_lock_in(&mut txn, &pool.cluster_id).await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_node_pools SET spec = $2, state = 'updating', message = '', version = version + 1, \
                 updated_at = $3 WHERE id = $1 AND version = $4 AND deleted_at IS NULL AND state <> 'deleting'",
            )
            .bind(&pool.id)
            .bind(serde_json::to_string(spec).expect("a spec serializes"))
            .bind(now)
            .bind(pool.version)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::conflict(format!(
                    "node pool {:?} changed meanwhile; read it and try again",
                    pool.id
                )));
            }
            self.cluster_touch_in(&mut txn, &pool.cluster_id, now, cluster_deadline).await?;
            let written = self.node_pool_written_in(&mut txn, &pool.id).await?;
            self.commit_and_signal(txn).await?;
            Ok(written)
        })
        .await
    }

    /// Marks a pool for deletion and publishes `kubernetes.nodepool.deleting` (a pool being
    /// deleted is left as it is).
    pub async fn node_pool_delete(
        &self,
        pool: &NodePoolRow,
        now: i64,
        cluster_deadline: Option<i64>,
    ) -> Result<NodePoolRow> {
        crate::measured::store("node_pool_delete", async {
            let mut txn = self.begin_write().await?;
            self.cluster_lock_in(&mut txn, &pool.cluster_id).await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_node_pools SET state = 'deleting', message = '', version = version + 1, \
                 updated_at = $2 WHERE id = $1 AND deleted_at IS NULL AND state <> 'deleting'",
            )
            .bind(&pool.id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() > 0 {
                self.cluster_touch_in(&mut txn, &pool.cluster_id, now, cluster_deadline).await?;
                self.event_append_in(&mut txn, &node_pool_event(LifecycleEvent::Deleting, pool, now, "")).await?;
            }
            let written = self.node_pool_written_in(&mut txn, &pool.id).await?;
            self.commit_and_signal(txn).await?;
            Ok(written)
        })
        .await
    }

    /// Records what the reconciler observed of a pool, unless the tenant changed it meanwhile.
    pub(super) async fn node_pool_observe_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        observed: &NodePoolObserved,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("node_pool_observe_in", async {
            let done = sqlx::query(
                "UPDATE kubernetes_node_pools SET state = $3, message = $4, current_node_count = $5, updated_at = $6, \
                 deleted_at = CASE WHEN $7 = 1 THEN $6 ELSE deleted_at END \
                 WHERE id = $1 AND version = $2 AND deleted_at IS NULL",
            )
            .bind(&observed.id)
            .bind(observed.version)
            .bind(observed.state)
            .bind(&observed.message)
            .bind(observed.current_node_count)
            .bind(now)
            .bind(observed.deleted as i64)
            .execute(&mut **txn)
            .await?;
            Ok(done.rows_affected() > 0)
        })
        .await
    }
}

/// A node-pool event, on the cluster's subject.
pub fn node_pool_event(kind: LifecycleEvent, pool: &NodePoolRow, now: i64, message: &str) -> NewEvent {
    let mut data = serde_json::json!({
        "clusterId": pool.cluster_id,
        "nodePoolId": pool.id,
        "name": pool.name,
    });
    if !message.is_empty() {
        data["message"] = serde_json::Value::from(message);
    }
    NewEvent {
        source: "/compute/kubernetes".to_owned(),
        event_type: format!("kubernetes.nodepool.{kind}"),
        subject: pool.cluster_id.clone(),
        tenant_id: pool.tenant_id.clone(),
        time: now,
        data,
    }
}

/// The pools of `cluster_id` on `connection`, oldest first; deleted ones only with
/// `include_deleted`.
async fn node_pools_on(
    connection: &mut AnyConnection,
    cluster_id: &str,
    include_deleted: bool,
) -> Result<Vec<NodePoolRow>> {
    let sql = format!(
        "SELECT {POOL_COLUMNS} FROM kubernetes_node_pools WHERE cluster_id = $1 AND ($2 = 1 \
         OR deleted_at IS NULL) ORDER BY created_at, id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(cluster_id)
        .bind(include_deleted as i64)
        .fetch_all(connection)
        .await?;
    rows.iter().map(pool_from_row).collect()
}

/// One pool by id on `connection`.
async fn node_pool_on(connection: &mut AnyConnection, id: &str) -> Result<Option<NodePoolRow>> {
    let sql = format!("SELECT {POOL_COLUMNS} FROM kubernetes_node_pools WHERE id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(connection).await?;
    row.as_ref().map(pool_from_row).transpose()
}
