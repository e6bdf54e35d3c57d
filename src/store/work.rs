//! Reconcile work items: one row per (kind, object), claimed by workers with a lease.
//!
//! A resource module writes its row and calls [`Store::work_enqueue_in`] in the same
//! transaction, then commits with `commit_and_signal`, which wakes the worker. Claims use
//! `FOR UPDATE SKIP LOCKED` on Postgres, so concurrent workers never take the same row; on SQLite
//! the single writer (`BEGIN IMMEDIATE`) serialises claims. A lease that is not renewed expires
//! and the row becomes claimable again.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::signals::NOTIFY_CHANNEL;
use super::{Backend, Store};
use crate::error::Result;

/// A claimed work item: what a pass needs to know of its object's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkItem {
    /// The reconciler kind.
    pub kind: String,
    /// The object's id.
    pub object_id: String,
    /// The write generation the pass saw when it was claimed.
    pub generation: i64,
    /// Failed passes in a row before this one.
    pub attempts: i64,
    /// The last failure's message.
    pub last_error: Option<String>,
    /// The object's state as last recorded.
    pub state: String,
    /// Since when it is in that state (µs).
    pub state_since: i64,
    /// When the pass was due (µs).
    pub due_at: i64,
    /// The tenant of the object, when it has one: its provider calls wait their turn among
    /// that tenant's.
    pub tenant_id: Option<String>,
}

/// What a finished pass records.
#[derive(Clone, Debug)]
pub struct WorkResult {
    /// When the next pass is due (µs); ignored when `remove`.
    pub next_due: i64,
    /// Failed passes in a row, this one included.
    pub attempts: i64,
    /// The failure's message, if the pass failed.
    pub last_error: Option<String>,
    /// The failure's class (`permission`, `unreachable`...), if the pass failed.
    pub problem_class: Option<String>,
    /// The object's state after the pass.
    pub state: String,
    /// When that state counts as stuck, if it is new (µs).
    pub state_deadline: Option<i64>,
    /// The object is gone: drop its row.
    pub remove: bool,
    /// How long the pass took (µs).
    pub pass_micros: i64,
    /// The pass's end (µs).
    pub now: i64,
}

/// The figures of one kind, for the status API and `/metrics`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindStatus {
    /// The reconciler kind.
    pub kind: String,
    /// Objects of the kind.
    pub objects: i64,
    /// Objects due now and not leased: the queue.
    pub queue_depth: i64,
    /// Objects under a live lease.
    pub leased: i64,
    /// Objects whose last pass failed.
    pub failing: i64,
    /// Mean and largest duration of the objects' last passes (µs).
    pub pass_mean_micros: i64,
    /// See above.
    pub pass_max_micros: i64,
}

/// An object past its state's deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckItem {
    /// The reconciler kind.
    pub kind: String,
    /// The object's id.
    pub object_id: String,
    /// The state it is stuck in.
    pub state: String,
    /// Since when (µs).
    pub since: i64,
    /// Failed passes in a row.
    pub attempts: i64,
    /// The last failure's message.
    pub last_error: Option<String>,
}

fn item_from_row(kind: &str, row: &AnyRow) -> Result<WorkItem> {
    Ok(read_columns!(row, WorkItem {
        object_id, generation, attempts, last_error, state, state_since, due_at, tenant_id;
        kind: kind.to_owned(),
    }))
}

impl Store {
    /// Records that `kind` must look at `object_id` now, in `state` (stuck after
    /// `state_deadline`, when the state is new), inside the caller's transaction; commit with
    /// `commit_and_signal`. A pass running meanwhile is followed by another at once.
    pub async fn work_enqueue_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        kind: &str,
        object_id: &str,
        state: &str,
        state_deadline: Option<i64>,
        now: i64,
    ) -> Result<()> {
        crate::measured::store("work_enqueue_in", async {
            sqlx::query(
                "INSERT INTO work_items (kind, object_id, due_at, generation, attempts, state, state_since, \
                 state_deadline) VALUES ($1, $2, $3, 1, 0, $4, $3, $5) \
                 ON CONFLICT (kind, object_id) DO UPDATE SET due_at = $3, generation = work_items.generation + 1, \
                 state_since = CASE WHEN work_items.state = $4 THEN work_items.state_since ELSE $3 END, \
                 state_deadline = CASE WHEN work_items.state = $4 THEN work_items.state_deadline ELSE $5 END, \
                 state = $4",
            )
            .bind(kind)
            .bind(object_id)
            .bind(now)
            .bind(state)
            .bind(state_deadline)
            .execute(&mut **txn)
            .await?;
            self.work_notify_in(txn, kind).await
        })
        .await
    }

    /// Announces new work to other processes when the transaction commits (Postgres only;
    /// SQLite has one process, woken by the in-process signal; CockroachDB relies on the tick).
    pub(super) async fn work_notify_in(&self, txn: &mut Transaction<'static, Any>, kind: &str) -> Result<()> {
        crate::measured::store("work_notify_in", async {
            if self.signals.notifies() {
                sqlx::query("SELECT pg_notify($1, $2)").bind(NOTIFY_CHANNEL).bind(kind).execute(&mut **txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// Enqueues many objects in one transaction (tests, benchmarks, and bulk imports).
    pub async fn work_enqueue_many(&self, kind: &str, object_ids: &[String], state: &str, now: i64) -> Result<()> {
        crate::measured::store("work_enqueue_many", async {
            for chunk in object_ids.chunks(500) {
                let mut txn = self.begin_write().await?;
                for id in chunk {
                    self.work_enqueue_in(&mut txn, kind, id, state, None, now).await?;
                }
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// Makes sure `kind` has a row for `object_id`, due now if new; an existing row is left as it
    /// is (singleton passes such as metering).
    pub async fn work_ensure(&self, kind: &str, object_id: &str, now: i64) -> Result<()> {
        crate::measured::store("work_ensure", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO work_items (kind, object_id, due_at, generation, attempts, state, state_since) \
                 VALUES ($1, $2, $3, 1, 0, 'active', $3) ON CONFLICT (kind, object_id) DO NOTHING",
            )
            .bind(kind)
            .bind(object_id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            self.work_notify_in(&mut txn, kind).await?;
            self.commit_and_signal(txn).await
        })
        .await
    }

    /// Makes an object due now (a new delete call retries at once, whatever its backoff).
    pub async fn work_wake(&self, kind: &str, object_id: &str, now: i64) -> Result<bool> {
        crate::measured::store("work_wake", async {
            let mut txn = self.begin_write().await?;
            let woken = sqlx::query(
                "UPDATE work_items SET due_at = $3, generation = generation + 1 WHERE kind = $1 AND object_id = $2",
            )
            .bind(kind)
            .bind(object_id)
            .bind(now)
            .execute(&mut *txn)
            .await?
            .rows_affected();
            self.work_notify_in(&mut txn, kind).await?;
            self.commit_and_signal(txn).await?;
            Ok(woken > 0)
        })
        .await
    }

    /// Claims up to `limit` due objects of `kind` for `owner` until `lease_until`. Rows leased
    /// by a live worker are skipped; rows whose lease expired are taken over. Tenants share the
    /// passes: a tenant's due objects rank by how many of its objects are in passes already plus
    /// their place in its queue, so one tenant's thousand due objects do not keep another's one
    /// waiting.
    pub async fn work_claim_due(
        &self,
        kind: &str,
        owner: &str,
        limit: i64,
        now: i64,
        lease_until: i64,
    ) -> Result<Vec<WorkItem>> {
        crate::measured::store("work_claim_due", async {
            let lock = match self.backend {
                Backend::Postgres => " FOR UPDATE SKIP LOCKED",
                Backend::Sqlite => "",
            };
            const FREE: &str = "due_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4)";
            const TENANT: &str =
                "(SELECT tenant_id FROM authz_resources WHERE resource_id = work_items.object_id LIMIT 1)";
            // The CTE runs once (a subquery in `IN` may be rescanned, taking more rows than asked).
            let sql = format!(
                "WITH live AS (SELECT object_id, due_at, lease_expires_at, COALESCE({TENANT}, '') AS tenant \
                   FROM work_items WHERE kind = $3 AND ({FREE} OR lease_expires_at > $4)), \
                 busy AS (SELECT tenant, COUNT(*) AS passes FROM live WHERE lease_expires_at > $4 GROUP BY tenant), \
                 ranked AS (SELECT live.object_id, live.due_at, COALESCE(busy.passes, 0) \
                   + ROW_NUMBER() OVER (PARTITION BY live.tenant ORDER BY live.due_at, live.object_id) AS turn \
                   FROM live LEFT JOIN busy ON busy.tenant = live.tenant \
                   WHERE live.due_at <= $4 AND (live.lease_expires_at IS NULL OR live.lease_expires_at <= $4)), \
                 due AS (SELECT object_id FROM work_items WHERE kind = $3 AND {FREE} AND object_id IN \
                   (SELECT object_id FROM ranked ORDER BY turn, due_at LIMIT $5){lock}) \
                 UPDATE work_items SET lease_owner = $1, lease_expires_at = $2 FROM due \
                 WHERE work_items.kind = $3 AND work_items.object_id = due.object_id \
                 RETURNING work_items.object_id, work_items.generation, work_items.attempts, work_items.last_error, \
                 work_items.state, work_items.state_since, work_items.due_at, {TENANT} AS tenant_id"
            );
            let mut writer = self.begin_statements().await?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(owner)
                .bind(lease_until)
                .bind(kind)
                .bind(now)
                .bind(limit)
                .fetch_all(writer.connection())
                .await?;
            writer.finish().await?;
            rows.iter().map(|row| item_from_row(kind, row)).collect()
        })
        .await
    }

    /// Extends every lease `owner` holds; returns how many it still holds.
    pub async fn work_renew_leases(&self, owner: &str, lease_until: i64) -> Result<u64> {
        crate::measured::store("work_renew_leases", async {
            let mut txn = self.begin_write().await?;
            let renewed = sqlx::query("UPDATE work_items SET lease_expires_at = $2 WHERE lease_owner = $1")
                .bind(owner)
                .bind(lease_until)
                .execute(&mut *txn)
                .await?
                .rows_affected();
            self.commit(txn).await?;
            Ok(renewed)
        })
        .await
    }

    /// Gives back `owner`'s lease of one object, leaving it due as it was (a pass that could not
    /// record its result); a lease another worker took meanwhile is left alone.
    pub async fn work_release_lease(&self, kind: &str, object_id: &str, owner: &str) -> Result<()> {
        crate::measured::store("work_release_lease", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "UPDATE work_items SET lease_owner = NULL, lease_expires_at = NULL \
                 WHERE kind = $1 AND object_id = $2 AND lease_owner = $3",
            )
            .bind(kind)
            .bind(object_id)
            .bind(owner)
            .execute(&mut *txn)
            .await?;
            self.work_notify_in(&mut txn, kind).await?;
            self.commit_and_signal(txn).await
        })
        .await
    }

    /// Gives back every lease `owner` holds, leaving the rows due as they were, so that another
    /// worker takes them at once (graceful shutdown).
    pub async fn work_release_leases(&self, owner: &str) -> Result<u64> {
        crate::measured::store("work_release_leases", async {
            let mut txn = self.begin_write().await?;
            let released =
                sqlx::query("UPDATE work_items SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1")
                    .bind(owner)
                    .execute(&mut *txn)
                    .await?
                    .rows_affected();
            self.work_notify_in(&mut txn, "*").await?;
            self.commit_and_signal(txn).await?;
            Ok(released)
        })
        .await
    }

    /// Records a pass's result and ends its lease. Returns false, recording nothing, when the
    /// lease was lost (it expired and another worker took the object). A write during the pass
    /// (a newer generation) makes the object due again at once and keeps the written state.
    pub async fn work_complete(&self, item: &WorkItem, owner: &str, result: &WorkResult) -> Result<bool> {
        crate::measured::store("work_complete", async {
            let mut writer = self.begin_statements().await?;
            if result.remove {
                let removed = sqlx::query(
                    "DELETE FROM work_items WHERE kind = $1 AND object_id = $2 AND lease_owner = $3 \
                     AND generation = $4",
                )
                .bind(&item.kind)
                .bind(&item.object_id)
                .bind(owner)
                .bind(item.generation)
                .execute(writer.connection())
                .await?
                .rows_affected();
                if removed > 0 {
                    writer.finish().await?;
                    return Ok(true);
                }
            }
            let updated = sqlx::query(
                "UPDATE work_items SET lease_owner = NULL, lease_expires_at = NULL, \
                 due_at = CASE WHEN generation = $4 THEN $5 ELSE $6 END, \
                 attempts = $7, last_error = $8, \
                 problem_class = COALESCE($12, ''), \
                 problem_since = CASE WHEN $12 IS NULL THEN NULL ELSE COALESCE(problem_since, $6) END, \
                 state_since = CASE WHEN generation <> $4 OR state = $9 THEN state_since ELSE $6 END, \
                 state_deadline = CASE WHEN generation <> $4 OR state = $9 THEN state_deadline ELSE $10 END, \
                 state = CASE WHEN generation <> $4 THEN state ELSE $9 END, \
                 last_pass_at = $6, last_pass_micros = $11 \
                 WHERE kind = $1 AND object_id = $2 AND lease_owner = $3",
            )
            .bind(&item.kind)
            .bind(&item.object_id)
            .bind(owner)
            .bind(item.generation)
            .bind(if result.remove { result.now } else { result.next_due })
            .bind(result.now)
            .bind(result.attempts)
            .bind(&result.last_error)
            .bind(&result.state)
            .bind(result.state_deadline)
            .bind(result.pass_micros)
            .bind(&result.problem_class)
            .execute(writer.connection())
            .await?
            .rows_affected();
            writer.finish().await?;
            Ok(updated > 0)
        })
        .await
    }

    /// The earliest time a row of `kind` becomes claimable (due, and its lease over), if any.
    pub async fn work_next_due(&self, kind: &str) -> Result<Option<i64>> {
        crate::measured::store("work_next_due", async {
            let next: Option<i64> = sqlx::query_scalar(
                "SELECT MIN(CASE WHEN lease_expires_at IS NOT NULL AND lease_expires_at > due_at \
                 THEN lease_expires_at ELSE due_at END) FROM work_items WHERE kind = $1",
            )
            .bind(kind)
            .fetch_one(&self.pool)
            .await?;
            Ok(next)
        })
        .await
    }

    /// Per kind: objects, queue depth, leases, failures and pass durations.
    pub async fn work_status(&self, now: i64) -> Result<Vec<KindStatus>> {
        crate::measured::store("work_status", async {
            let rows = sqlx::query(
                "SELECT kind, COUNT(*) AS objects, \
                 SUM(CASE WHEN due_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1) THEN 1 \
                 ELSE 0 END) AS queue_depth, SUM(CASE WHEN lease_expires_at > $1 THEN 1 ELSE 0 END) AS leased, \
                 SUM(CASE WHEN attempts > 0 THEN 1 ELSE 0 END) AS failing, \
                 CAST(COALESCE(AVG(last_pass_micros), 0) AS BIGINT) AS pass_mean, \
                 COALESCE(MAX(last_pass_micros), 0) AS pass_max \
                 FROM work_items GROUP BY kind ORDER BY kind",
            )
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(read_columns!(row, KindStatus {
                        kind, objects, queue_depth, leased, failing;
                        pass_mean_micros: row.try_get("pass_mean")?,
                        pass_max_micros: row.try_get("pass_max")?,
                    }))
                })
                .collect()
        })
        .await
    }

    /// Objects past their state's deadline, the longest overdue first, at most `limit`.
    pub async fn work_list_stuck(&self, now: i64, limit: i64) -> Result<Vec<StuckItem>> {
        crate::measured::store("work_list_stuck", async {
            let rows = sqlx::query(
                "SELECT kind, object_id, state, state_since, attempts, last_error FROM work_items \
                 WHERE state_deadline IS NOT NULL AND state_deadline < $1 ORDER BY state_deadline, kind, object_id \
                 LIMIT $2",
            )
            .bind(now)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(read_columns!(row, StuckItem {
                        kind, object_id, state, attempts, last_error;
                        since: row.try_get("state_since")?,
                    }))
                })
                .collect()
        })
        .await
    }

    /// Records a pass of the built-in `noop` kind (tests and benchmarks).
    pub async fn work_noop_record(&self, object_id: &str, worker: &str, started_at: i64, ended_at: i64) -> Result<()> {
        crate::measured::store("work_noop_record", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO work_noop_passes (object_id, worker, started_at, ended_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(object_id)
            .bind(worker)
            .bind(started_at)
            .bind(ended_at)
            .execute(&mut *txn)
            .await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// Every recorded `noop` pass: (object, worker, start, end), by object then start.
    pub async fn work_noop_passes(&self) -> Result<Vec<(String, String, i64, i64)>> {
        crate::measured::store("work_noop_passes", async {
            let rows = sqlx::query(
                "SELECT object_id, worker, started_at, ended_at FROM work_noop_passes ORDER BY object_id, started_at",
            )
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?))).collect()
        })
        .await
    }
}
