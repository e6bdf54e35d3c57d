//! Nodes in the store: the join (one use of the token consumed in the transaction that records
//! the node, which joins a machine's node again only as the service decided from the node it
//! read), heartbeats, cordons, leaving and deletion, the worker's sweep that finds silent nodes,
//! the pool's summed capacity (saturating, never wrapping) and their events on the pool's
//! subject. Only the SHA-256 of a node's credential is kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::value_from_json;
use super::record::{Announced, Record, pool_event};
use super::resource::AnyQuery;
use super::{JoinTokenRow, NewEvent, Store};
use crate::domain::states::PoolNodeState;
use crate::error::{Error, Result};

/// What a machine has, or what of it pods may use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeCapacityRow {
    /// Thousandths of a CPU.
    pub cpu_millis: i64,
    /// Bytes of memory.
    pub memory_bytes: i64,
    /// Bytes of local disk for pods.
    pub ephemeral_storage_bytes: i64,
    /// GPUs: model and count.
    pub gpus: Vec<(String, i32)>,
}

impl NodeCapacityRow {
    /// Adds `other` to this sum (GPUs by model, in model order). The sum stops at the largest
    /// figure rather than wrapping: rows recorded before reports were bounded may hold anything.
    fn add(&mut self, other: &NodeCapacityRow) {
        self.cpu_millis = self.cpu_millis.saturating_add(other.cpu_millis.max(0));
        self.memory_bytes = self.memory_bytes.saturating_add(other.memory_bytes.max(0));
        self.ephemeral_storage_bytes =
            self.ephemeral_storage_bytes.saturating_add(other.ephemeral_storage_bytes.max(0));
        let mut gpus: BTreeMap<String, i32> = self.gpus.drain(..).collect();
        for (model, count) in &other.gpus {
            let sum = gpus.entry(model.clone()).or_default();
            *sum = sum.saturating_add((*count).max(0));
        }
        self.gpus = gpus.into_iter().collect();
    }
}

/// A pool's nodes counted by state, and what the live ones (`ready`, `notReady`) have in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSummaryRow {
    /// Nodes by state.
    pub states: BTreeMap<PoolNodeState, i64>,
    /// Live nodes that are cordoned.
    pub cordoned: i64,
    /// The live nodes' summed capacity.
    pub capacity: NodeCapacityRow,
    /// The live nodes' summed allocatable.
    pub allocatable: NodeCapacityRow,
    /// Live nodes under remediation (unhealthy as the pool's policy says).
    pub unhealthy: i64,
    /// Why the pool's remediation stopped; empty while it runs (or the pool has none).
    pub remediation_paused: String,
}

/// A node as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    /// `node_...`.
    pub id: String,
    /// The pool it joined.
    pub pool_id: String,
    /// The tenant whose account the pool is on; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// The machine's id.
    pub machine_id: String,
    /// Its host name.
    pub hostname: String,
    /// Its architecture.
    pub architecture: String,
    /// Its operating system.
    pub os: String,
    /// Its kernel release.
    pub kernel: String,
    /// Its daemon's version.
    pub bcd_version: String,
    /// What it has.
    pub capacity: NodeCapacityRow,
    /// What of it pods may use.
    pub allocatable: NodeCapacityRow,
    /// Its conditions: type, status, message.
    pub conditions: Vec<(String, String, String)>,
    /// The token's labels and its own.
    pub labels: BTreeMap<String, String>,
    /// The token's taints: key, value, effect.
    pub taints: Vec<(String, String, String)>,
    /// `ready`, `notReady`, `left` or `deleted` (`enrolled` for a machine's node).
    pub state: PoolNodeState,
    /// Whether nothing new may be scheduled on it.
    pub cordoned: bool,
    /// The token it last joined with.
    pub join_token_id: String,
    /// The SHA-256 of its credential, hex.
    pub credential_sha256: String,
    /// The address its last join came from.
    pub address: String,
    /// How often it heartbeats (ms).
    pub heartbeat_interval_ms: i64,
    /// Bumped by every change of its state or cordon.
    pub version: i64,
    /// When it first joined.
    pub joined_at: i64,
    /// When it last heartbeat or joined.
    pub last_heartbeat_at: i64,
    /// When it left.
    pub left_at: Option<i64>,
    /// When it was deleted.
    pub deleted_at: Option<i64>,
    /// Last change.
    pub updated_at: i64,
    /// The last remediation step taken on it while it is unhealthy (`marked`, `powerCycle`,
    /// `redeploy`, `recreate`); empty while it is healthy.
    pub remediation: String,
    /// When that step was taken.
    pub remediated_at: Option<i64>,
}

/// What a join does to the node its machine id has in the pool, as the service decided from the
/// node it read; the join's transaction reads it again and answers `CONFLICT` when it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinOver {
    /// The machine id has no node in the pool: a new one.
    Nothing,
    /// The machine proved it is its node, read with this credential digest: that node joins
    /// again, under its id.
    Rejoin {
        /// The node's credential digest as read (empty for an enrolled machine's node).
        credential_sha256: String,
    },
    /// The machine's node left (no daemon speaks for it): kept as it is but taken out of the
    /// pool's live nodes (`deletedAt`), and a new node joins.
    ReplaceLeft {
        /// The node that left.
        node_id: String,
    },
}

/// The answer of a join: the node, or the token as it was when it could not be used.
#[derive(Clone, Debug)]
pub enum JoinOutcome {
    /// The node joined (`rejoined`: its machine had a node in the pool already).
    Joined {
        /// The node as recorded.
        node: Box<NodeRow>,
        /// Whether an existing node of the machine was joined again.
        rejoined: bool,
    },
    /// The token was expired, revoked or exhausted when the join came to it.
    Refused(Box<JoinTokenRow>),
}

/// Binds what a join writes of the machine, in the order both the first join's insert and a
/// rejoin's update number it, after their own leading parameters.
fn bind_joined<'q>(query: AnyQuery<'q>, node: &'q NodeRow, token_id: &'q str, now: i64) -> AnyQuery<'q> {
    query
        .bind(&node.hostname)
        .bind(&node.architecture)
        .bind(&node.os)
        .bind(&node.kernel)
        .bind(&node.bcd_version)
        .bind(json(&node.capacity))
        .bind(json(&node.labels))
        .bind(json(&node.taints))
        .bind(token_id)
        .bind(&node.credential_sha256)
        .bind(&node.address)
        .bind(node.heartbeat_interval_ms)
        .bind(now)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("a node's fields serialize")
}

/// A node's columns, as its row is read and as the join inserts it.
macro_rules! columns {
    () => {
        "id, pool_id, tenant_id, machine_id, hostname, architecture, os, kernel, bcd_version, capacity, allocatable, \
         conditions, labels, taints, state, cordoned, join_token_id, credential_sha256, address, \
         heartbeat_interval_ms, version, joined_at, last_heartbeat_at, left_at, deleted_at, updated_at"
    };
}

impl Record for NodeRow {
    const SELECT: &'static str = concat!("SELECT ", columns!(), ", remediation, remediated_at FROM nodes");
    const NOUN: &'static str = "node";

    fn from_row(row: &AnyRow) -> Result<NodeRow> {
        let text = |column: &str| row.try_get::<String, _>(column);
        Ok(read_columns!(row, NodeRow {
            id, pool_id, tenant_id, machine_id, hostname, architecture, os, kernel, bcd_version, state,
            join_token_id, credential_sha256, address, heartbeat_interval_ms, version, joined_at, last_heartbeat_at,
            left_at, deleted_at, updated_at, remediation, remediated_at;
            capacity: value_from_json(&text("capacity")?)?,
            allocatable: value_from_json(&text("allocatable")?)?,
            conditions: value_from_json(&text("conditions")?)?,
            labels: value_from_json(&text("labels")?)?,
            taints: value_from_json(&text("taints")?)?,
            cordoned: row.try_get::<i64, _>("cordoned")? != 0,
        }))
    }
}

impl Announced for NodeRow {
    const TABLE: &'static str = "nodes";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    /// `compute.node.<change>` on the pool's subject. It never holds the credential.
    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({
            "nodeId": self.id, "poolId": self.pool_id, "machineId": self.machine_id, "hostname": self.hostname,
            "state": self.state, "cordoned": self.cordoned, "joinTokenId": self.join_token_id, "version": self.version,
        });
        let tenant = self.tenant_id.as_deref();
        pool_event("/compute/nodes", "compute.node", change, &self.pool_id, tenant, self.updated_at, data)
    }
}

impl Store {
    /// Joins `node` (its id, pool, machine, credential and the rest as the join gives them) with
    /// token `token_id` at `now`: consumes one use of the token, records the node (or, as `over`
    /// says, joins the machine's node again under its old id with the new credential, or replaces
    /// its node that left), the use and the events (`node.joined`, and `joinToken.exhausted` with
    /// the last use), in one transaction. A token that is expired, revoked or exhausted by then
    /// refuses the join; a machine's node that changed since the service read it is `CONFLICT`.
    pub async fn node_join(&self, node: &NodeRow, token_id: &str, over: &JoinOver, now: i64) -> Result<JoinOutcome> {
        crate::measured::store("node_join", async {
            let mut txn = self.begin_write().await?;
            let used = sqlx::query(
                "UPDATE join_tokens SET uses = uses + 1, last_used_at = $2 \
                 WHERE id = $1 AND revoked_at IS NULL AND uses < max_uses AND expires_at > $2",
            )
            .bind(token_id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if used.rows_affected() == 0 {
                drop(txn);
                let token =
                    self.join_token_fetch(token_id).await?.ok_or_else(|| Error::not_found("joinToken", token_id))?;
                return Ok(JoinOutcome::Refused(Box::new(token)));
            }
            let live: Option<(String, String, String)> = sqlx::query_as(
                "SELECT id, credential_sha256, state FROM nodes \
                 WHERE pool_id = $1 AND machine_id = $2 AND deleted_at IS NULL",
            )
            .bind(&node.pool_id)
            .bind(&node.machine_id)
            .fetch_optional(&mut *txn)
            .await?;
            let as_read = match (over, &live) {
                (JoinOver::Nothing, None) => true,
                (JoinOver::Rejoin { credential_sha256 }, Some((id, digest, _))) => {
                    *id == node.id && digest == credential_sha256
                }
                (JoinOver::ReplaceLeft { node_id }, Some((id, _, state))) => id == node_id && state == "left",
                _ => false,
            };
            if !as_read {
                return Err(Error::conflict(format!(
                    "machine {:?} is joining the pool in another call; try again",
                    node.machine_id
                ))
                .with_detail("machineId", node.machine_id.as_str()));
            }
            if let JoinOver::ReplaceLeft { node_id } = over {
                sqlx::query(
                    "UPDATE nodes SET deleted_at = $2, version = version + 1, updated_at = $2 \
                     WHERE id = $1 AND state = 'left' AND deleted_at IS NULL",
                )
                .bind(node_id)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            }
            let rejoined = matches!(over, JoinOver::Rejoin { .. });
            let id = node.id.clone();
            if rejoined {
                let update = sqlx::query(
                    "UPDATE nodes SET hostname = $2, architecture = $3, os = $4, kernel = $5, bcd_version = $6, \
                     capacity = $7, allocatable = $7, labels = $8, taints = $9, state = 'ready', join_token_id = $10, \
                     credential_sha256 = $11, address = $12, heartbeat_interval_ms = $13, version = version + 1, \
                     last_heartbeat_at = $14, left_at = NULL, updated_at = $14, remediation = '', remediated_at = NULL \
                     WHERE id = $1",
                )
                .bind(&id);
                bind_joined(update, node, token_id, now).execute(&mut *txn).await?;
            } else {
                let insert = sqlx::query(concat!(
                    "INSERT INTO nodes (",
                    columns!(),
                    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, '[]', $11, \
                     $12, 'ready', 0, $13, $14, $15, $16, 1, $17, $17, NULL, NULL, $17)"
                ))
                .bind(&id)
                .bind(&node.pool_id)
                .bind(&node.tenant_id)
                .bind(&node.machine_id);
                let inserted = bind_joined(insert, node, token_id, now).execute(&mut *txn).await;
                super::conflict_on_unique(inserted, || {
                    Error::conflict(format!("machine {:?} is joining the pool in another call", node.machine_id))
                        .with_detail("machineId", node.machine_id.as_str())
                })?;
            }
            sqlx::query("INSERT INTO join_token_uses (token_id, node_id, used_at, address) VALUES ($1, $2, $3, $4)")
                .bind(token_id)
                .bind(&id)
                .bind(now)
                .bind(&node.address)
                .execute(&mut *txn)
                .await?;
            let joined: NodeRow = self.record_fetch_in(&mut txn, &id).await?;
            let mut event = joined.event("joined");
            event.data["rejoined"] = rejoined.into();
            self.event_append_in(&mut txn, &event).await?;
            let (uses, max_uses): (i64, i64) = sqlx::query_as("SELECT uses, max_uses FROM join_tokens WHERE id = $1")
                .bind(token_id)
                .fetch_one(&mut *txn)
                .await?;
            if uses >= max_uses {
                self.record_changed_in::<JoinTokenRow>(&mut txn, token_id, "exhausted").await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(JoinOutcome::Joined { node: Box::new(joined), rejoined })
        })
        .await
    }

    /// The node of `machine_id` in the pool that is not deleted, if there is one.
    pub async fn node_live(&self, pool_id: &str, machine_id: &str) -> Result<Option<NodeRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(pool_id.to_owned()).bind(machine_id.to_owned());
        let live = "pool_id = $1 AND machine_id = $2 AND deleted_at IS NULL";
        let found = crate::measured::store("node_live", self.record_list(live, "id LIMIT 1", bind)).await?;
        Ok(found.into_iter().next())
    }

    /// One node, whatever its pool: callers check.
    pub async fn node_fetch(&self, id: &str) -> Result<Option<NodeRow>> {
        crate::measured::store("node_fetch", self.record_find(id)).await
    }

    /// The pool's nodes, oldest first, at most `limit`.
    pub async fn node_list(&self, pool_id: &str, limit: i64) -> Result<Vec<NodeRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(pool_id.to_owned()).bind(limit);
        crate::measured::store("node_list", self.record_list("pool_id = $1", "joined_at, id LIMIT $2", bind)).await
    }

    /// The pool's nodes counted by state, with the live ones' summed capacity.
    pub async fn node_summary(&self, pool_id: &str) -> Result<NodeSummaryRow> {
        crate::measured::store("node_summary", async {
            let rows =
                sqlx::query("SELECT state, cordoned, capacity, allocatable, remediation FROM nodes WHERE pool_id = $1")
                    .bind(pool_id)
                    .fetch_all(&self.pool)
                    .await?;
            let mut summary = NodeSummaryRow::default();
            for row in &rows {
                let state: PoolNodeState = row.try_get("state")?;
                *summary.states.entry(state).or_default() += 1;
                if matches!(state, PoolNodeState::Ready | PoolNodeState::NotReady) {
                    summary.cordoned += i64::from(row.try_get::<i64, _>("cordoned")? != 0);
                    summary.unhealthy += i64::from(!row.try_get::<String, _>("remediation")?.is_empty());
                    summary.capacity.add(&value_from_json(&row.try_get::<String, _>("capacity")?)?);
                    summary.allocatable.add(&value_from_json(&row.try_get::<String, _>("allocatable")?)?);
                }
            }
            summary.remediation_paused = self.pool_remediation_paused(pool_id).await?.unwrap_or_default();
            Ok(summary)
        })
        .await
    }

    /// Records a heartbeat of a node that is `ready` or `notReady` at `now`; a `notReady` one is
    /// `ready` again (with its event), and a node under remediation is healthy again.
    pub async fn node_heartbeat(
        &self,
        id: &str,
        capacity: &NodeCapacityRow,
        allocatable: &NodeCapacityRow,
        conditions: &[(String, String, String)],
        now: i64,
    ) -> Result<NodeRow> {
        crate::measured::store("node_heartbeat", async {
            let mut txn = self.begin_write().await?;
            let before: NodeRow = self.record_fetch_in(&mut txn, id).await?;
            let back = before.state == PoolNodeState::NotReady;
            sqlx::query(
                "UPDATE nodes SET capacity = $2, allocatable = $3, conditions = $4, last_heartbeat_at = $5, \
                 state = 'ready', version = version + $6, updated_at = $5, remediation = '', remediated_at = NULL \
                 WHERE id = $1 AND deleted_at IS NULL AND state IN ('ready', 'notReady')",
            )
            .bind(id)
            .bind(json(capacity))
            .bind(json(allocatable))
            .bind(json(&conditions))
            .bind(now)
            .bind(back as i64)
            .execute(&mut *txn)
            .await?;
            let node: NodeRow = self.record_fetch_in(&mut txn, id).await?;
            if back {
                self.event_append_in(&mut txn, &node.event("ready")).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(node)
        })
        .await
    }

    /// Sets `assignments` (a `SET` list) on a node that is not deleted when `condition` holds
    /// too, and appends its `change` event; otherwise the node is returned as it is.
    async fn node_change(
        &self,
        id: &str,
        assignments: &str,
        condition: &str,
        change: &str,
        now: i64,
    ) -> Result<NodeRow> {
        let mut txn = self.begin_write().await?;
        let sql = format!(
            "UPDATE nodes SET {assignments}, version = version + 1, updated_at = $2 \
             WHERE id = $1 AND deleted_at IS NULL AND {condition}"
        );
        let updated = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(now).execute(&mut *txn).await?;
        let node: NodeRow = self.record_fetch_in(&mut txn, id).await?;
        if updated.rows_affected() > 0 {
            self.event_append_in(&mut txn, &node.event(change)).await?;
            self.commit_and_signal(txn).await?;
        }
        Ok(node)
    }

    /// Cordons (`true`) or uncordons a node; one already so is returned as it is.
    pub async fn node_set_cordoned(&self, id: &str, cordoned: bool, now: i64) -> Result<NodeRow> {
        crate::measured::store("node_set_cordoned", async {
            let (value, change) = if cordoned { (1, "cordoned") } else { (0, "uncordoned") };
            self.node_change(id, &format!("cordoned = {value}"), &format!("cordoned <> {value}"), change, now).await
        })
        .await
    }

    /// The node leaves: `left`, its credential void.
    pub async fn node_leave(&self, id: &str, now: i64) -> Result<NodeRow> {
        crate::measured::store("node_leave", async {
            self.node_change(id, "state = 'left', left_at = $2, credential_sha256 = ''", "state <> 'left'", "left", now)
                .await
        })
        .await
    }

    /// Deletes a node: `deleted`, its credential kept only to tell its daemon why it is void.
    /// `INVALID_STATE` for the node of a live bare-metal machine: a machine and its node are one
    /// record, ended by the machine's own delete, from the states that allow it.
    pub async fn node_delete(&self, id: &str, now: i64) -> Result<NodeRow> {
        crate::measured::store("node_delete", async {
            let mut txn = self.begin_write().await?;
            let machine: Option<String> = sqlx::query_scalar(
                "SELECT provision_state FROM metal_machines WHERE node_id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .fetch_optional(&mut *txn)
            .await?;
            if let Some(state) = machine {
                return Err(Error::invalid_state(format!(
                    "node {id} is bare-metal machine {id} ({state}): delete it with metal delete, which is \
                     allowed from manageable, enrollFailed or retired"
                ))
                .with_detail("nodeId", id)
                .with_detail("state", state));
            }
            self.record_delete(txn, id, now).await
        })
        .await
    }

    /// Marks `notReady` every `ready` node whose last heartbeat is older than three of its
    /// intervals at `now`, with their events; returns how many.
    pub async fn node_mark_silent(&self, now: i64) -> Result<usize> {
        crate::measured::store("node_mark_silent", async {
            let mut txn = self.begin_write().await?;
            let silent = "state = 'ready' AND deleted_at IS NULL AND last_heartbeat_at + 3 * heartbeat_interval_ms * 1000 < $1";
            let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT id FROM nodes WHERE {silent}")))
                .bind(now)
                .fetch_all(&mut *txn)
                .await?;
            if ids.is_empty() {
                return Ok(0);
            }
            for id in &ids {
                let sql = format!("UPDATE nodes SET state = 'notReady', version = version + 1, updated_at = $1 WHERE id = $2 AND {silent}");
                sqlx::query(sqlx::AssertSqlSafe(sql)).bind(now).bind(id).execute(&mut *txn).await?;
                self.record_changed_in::<NodeRow>(&mut txn, id, "notReady").await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(ids.len())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_of_capacities_stops_at_the_largest_figure_rather_than_wrapping() {
        let huge = NodeCapacityRow {
            cpu_millis: 1 << 62,
            memory_bytes: i64::MAX,
            ephemeral_storage_bytes: -5,
            gpus: vec![("NVIDIA L4".into(), i32::MAX)],
        };
        let mut sum = NodeCapacityRow::default();
        for _ in 0..3 {
            sum.add(&huge);
        }
        assert_eq!((sum.cpu_millis, sum.memory_bytes, sum.ephemeral_storage_bytes), (i64::MAX, i64::MAX, 0));
        assert_eq!(sum.gpus, vec![("NVIDIA L4".to_owned(), i32::MAX)]);
    }
}
