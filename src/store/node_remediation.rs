//! The store's side of what a pool's node policy does to silent nodes: each remediation step
//! recorded on the node with its `compute.node.remediation` event (the step and why), the pool's
//! remediation stopped and resumed with `compute.pool.remediationPaused` / `remediationResumed`
//! (why, on the pool's subject), and a node forgotten: `deleted`, which voids its credential.
//! Every write is guarded by what the sweep read (still `notReady`, still silent since the
//! cutoff, still at the step it was), so a heartbeat that came in between wins. A step the
//! control plane can carry out (a machine's power cycle or redeploy, a substrate node's
//! recreation) is marked done by the reconciler that did it, so it is done once per request.

use sqlx::{Any, Transaction};

use super::record::{Announced, pool_event};
use super::{NodeRow, Store};
use crate::error::Result;

/// Where a pool's remediation events come from.
const POOL_SOURCE: &str = "/compute/pools";

impl Store {
    /// The pools that have a live `notReady` node, or whose remediation is stopped.
    pub async fn node_pools_with_silent_nodes(&self) -> Result<Vec<String>> {
        crate::measured::store("node_pools_with_silent_nodes", async {
            Ok(sqlx::query_scalar(
                "SELECT pool_id FROM nodes WHERE state = 'notReady' AND deleted_at IS NULL \
                 UNION SELECT pool_id FROM pool_remediation_pauses",
            )
            .fetch_all(&self.pool)
            .await?)
        })
        .await
    }

    /// Records remediation `step` on node `id`, which was at step `from` (empty: none yet), with
    /// its `compute.node.remediation` event saying `reason`, when the node is still `notReady`
    /// with no heartbeat since `silent_since`. `None` when it is not (nothing written).
    pub async fn node_remediation_step(
        &self,
        id: &str,
        from: &str,
        step: &str,
        reason: &str,
        silent_since: i64,
        now: i64,
    ) -> Result<Option<NodeRow>> {
        crate::measured::store("node_remediation_step", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE nodes SET remediation = $3, remediated_at = $4, version = version + 1, updated_at = $4 \
                 WHERE id = $1 AND remediation = $2 AND state = 'notReady' AND deleted_at IS NULL \
                 AND last_heartbeat_at < $5",
            )
            .bind(id)
            .bind(from)
            .bind(step)
            .bind(now)
            .bind(silent_since)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(None);
            }
            let node: NodeRow = self.record_fetch_in(&mut txn, id).await?;
            let mut event = node.event("remediation");
            event.data["step"] = step.into();
            event.data["reason"] = reason.into();
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(Some(node))
        })
        .await
    }

    /// The remediation step requested on node `id` and not carried out yet, with the time it
    /// was requested; `None` when the node is healthy or its last step is done.
    pub async fn node_remediation_pending(&self, id: &str) -> Result<Option<(String, i64)>> {
        crate::measured::store("node_remediation_pending", async {
            Ok(sqlx::query_as(
                "SELECT remediation, remediated_at FROM nodes WHERE id = $1 AND state = 'notReady' \
                 AND deleted_at IS NULL AND remediation <> '' AND remediated_at IS NOT NULL \
                 AND (remediation_done_at IS NULL OR remediation_done_at <> remediated_at)",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?)
        })
        .await
    }

    /// Marks remediation `step` of node `id`, requested at `requested_at`, carried out, in the
    /// transaction `txn` of what carried it out. False when the node is no longer at that
    /// request (a heartbeat cleared it, or a later step replaced it) or it was done already.
    pub(super) async fn node_remediation_done_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        step: &str,
        requested_at: i64,
    ) -> Result<bool> {
        let updated = sqlx::query(
            "UPDATE nodes SET remediation_done_at = $3 WHERE id = $1 AND remediation = $2 AND remediated_at = $3 \
             AND (remediation_done_at IS NULL OR remediation_done_at <> $3)",
        )
        .bind(id)
        .bind(step)
        .bind(requested_at)
        .execute(&mut **txn)
        .await?;
        Ok(updated.rows_affected() == 1)
    }

    /// Records that the provider made node `id`'s machine again for its remediation `step`
    /// requested at `requested_at`: the step done and the node `deleted` (the new machine joins
    /// as a new node), with its `compute.node.deleted` event saying `reason`. `None` when the
    /// step is no longer to be done (nothing written).
    pub async fn node_recreated(
        &self,
        id: &str,
        step: &str,
        requested_at: i64,
        reason: &str,
        now: i64,
    ) -> Result<Option<NodeRow>> {
        crate::measured::store("node_recreated", async {
            let mut txn = self.begin_write().await?;
            if !self.node_remediation_done_in(&mut txn, id, step, requested_at).await? {
                return Ok(None);
            }
            sqlx::query(
                "UPDATE nodes SET state = 'deleted', deleted_at = $2, version = version + 1, updated_at = $2 \
                 WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            self.deleted_saying_in(txn, id, reason).await.map(Some)
        })
        .await
    }

    /// Forgets node `id`: `deleted` (its credential void from now on) with its `deleted` event
    /// saying `reason`, when it is still `notReady` with no heartbeat since `silent_since` and is
    /// no bare-metal machine's (a machine and its node end together). `None` when it is not.
    pub async fn node_forget(&self, id: &str, reason: &str, silent_since: i64, now: i64) -> Result<Option<NodeRow>> {
        crate::measured::store("node_forget", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE nodes SET state = 'deleted', deleted_at = $2, version = version + 1, updated_at = $2 \
                 WHERE id = $1 AND state = 'notReady' AND deleted_at IS NULL AND last_heartbeat_at < $3 \
                 AND id NOT IN (SELECT node_id FROM metal_machines WHERE deleted_at IS NULL)",
            )
            .bind(id)
            .bind(now)
            .bind(silent_since)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(None);
            }
            self.deleted_saying_in(txn, id, reason).await.map(Some)
        })
        .await
    }

    /// Commits the transaction `txn` that marked node `id` `deleted`, with its `deleted` event
    /// saying `reason`; the node as it is now.
    async fn deleted_saying_in(&self, mut txn: Transaction<'static, Any>, id: &str, reason: &str) -> Result<NodeRow> {
        let node: NodeRow = self.record_fetch_in(&mut txn, id).await?;
        let mut event = node.event("deleted");
        event.data["reason"] = reason.into();
        self.event_append_in(&mut txn, &event).await?;
        self.commit_and_signal(txn).await?;
        Ok(node)
    }

    /// Stops the pool's remediation for `reason`: the first time with its
    /// `compute.pool.remediationPaused` event; after that only the reason is kept up to date.
    /// Whether it was newly stopped.
    pub async fn pool_remediation_pause(
        &self,
        pool_id: &str,
        tenant: Option<&str>,
        reason: &str,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("pool_remediation_pause", async {
            let mut txn = self.begin_write().await?;
            let known: Option<String> =
                sqlx::query_scalar("SELECT reason FROM pool_remediation_pauses WHERE pool_id = $1")
                    .bind(pool_id)
                    .fetch_optional(&mut *txn)
                    .await?;
            match known {
                Some(known) if known == reason => return Ok(false),
                Some(_) => {
                    sqlx::query("UPDATE pool_remediation_pauses SET reason = $2 WHERE pool_id = $1")
                        .bind(pool_id)
                        .bind(reason)
                        .execute(&mut *txn)
                        .await?;
                    txn.commit().await?;
                    return Ok(false);
                }
                None => {}
            }
            sqlx::query("INSERT INTO pool_remediation_pauses (pool_id, reason, since) VALUES ($1, $2, $3)")
                .bind(pool_id)
                .bind(reason)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            let data = serde_json::json!({"poolId": pool_id, "reason": reason});
            let event = pool_event(POOL_SOURCE, "compute.pool", "remediationPaused", pool_id, tenant, now, data);
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Lets the pool's remediation run again, with its `compute.pool.remediationResumed` event
    /// saying `reason`, when it was stopped. Whether it was.
    pub async fn pool_remediation_resume(
        &self,
        pool_id: &str,
        tenant: Option<&str>,
        reason: &str,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("pool_remediation_resume", async {
            let mut txn = self.begin_write().await?;
            let removed = sqlx::query("DELETE FROM pool_remediation_pauses WHERE pool_id = $1")
                .bind(pool_id)
                .execute(&mut *txn)
                .await?;
            if removed.rows_affected() == 0 {
                return Ok(false);
            }
            let data = serde_json::json!({"poolId": pool_id, "reason": reason});
            let event = pool_event(POOL_SOURCE, "compute.pool", "remediationResumed", pool_id, tenant, now, data);
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Why the pool's remediation is stopped; `None` while it runs.
    pub async fn pool_remediation_paused(&self, pool_id: &str) -> Result<Option<String>> {
        crate::measured::store("pool_remediation_paused", async {
            Ok(sqlx::query_scalar("SELECT reason FROM pool_remediation_pauses WHERE pool_id = $1")
                .bind(pool_id)
                .fetch_optional(&self.pool)
                .await?)
        })
        .await
    }
}
