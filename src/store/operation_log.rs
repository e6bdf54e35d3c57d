//! The operation log: the provider and BMC calls each pass made for a resource, kept a bounded
//! count per resource and a bounded time, read newest first.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Backend, Store};
use crate::error::Result;

/// The most calls kept per resource; older ones go as new ones come.
pub const OPERATIONS_KEPT_PER_RESOURCE: i64 = 200;

/// How long a call is kept at most (µs): 14 days.
pub const OPERATIONS_KEPT_MICROS: i64 = 14 * 24 * 3600 * 1_000_000;

/// One recorded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationRow {
    /// Its id (`opl_...`).
    pub id: String,
    /// The resource the pass was for.
    pub resource_id: String,
    /// The reconciler kind of the pass.
    pub work_kind: String,
    /// When the call began (µs).
    pub at_micros: i64,
    /// How long it took (µs).
    pub duration_micros: i64,
    /// `gke.nodePools.update`.
    pub call: String,
    /// The provider's operation or request id; empty when it gave none.
    pub provider_operation_id: String,
    /// `ok`, `error` or `cancelled`.
    pub outcome: String,
    /// The failure's class; empty unless it failed.
    pub error_class: String,
    /// The failure's words; empty unless it failed.
    pub message: String,
}

fn operation_row(row: &AnyRow) -> Result<OperationRow> {
    Ok(read_columns!(row, OperationRow {
        id, resource_id, work_kind, at_micros, duration_micros, call, provider_operation_id, outcome, error_class,
        message;
    }))
}

impl Store {
    /// Appends the calls of one pass for `resource_id`, then drops its calls beyond the newest
    /// [`OPERATIONS_KEPT_PER_RESOURCE`].
    pub async fn operation_log_append(&self, resource_id: &str, work_kind: &str, calls: &[OperationRow]) -> Result<()> {
        if calls.is_empty() {
            return Ok(());
        }
        crate::measured::store("operation_log_append", async {
            if self.backend == Backend::Postgres && !self.rehearsal {
                return self.operation_log_append_in_one(resource_id, work_kind, calls).await;
            }
            let mut txn = self.begin_write().await?;
            for call in calls {
                sqlx::query(
                    "INSERT INTO operation_log (id, resource_id, work_kind, at_micros, duration_micros, call, \
                     provider_operation_id, outcome, error_class, message) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&call.id)
                .bind(resource_id)
                .bind(work_kind)
                .bind(call.at_micros)
                .bind(call.duration_micros)
                .bind(&call.call)
                .bind(&call.provider_operation_id)
                .bind(&call.outcome)
                .bind(&call.error_class)
                .bind(&call.message)
                .execute(&mut *txn)
                .await?;
            }
            let oldest_kept: Option<i64> = sqlx::query_scalar(
                "SELECT at_micros FROM operation_log WHERE resource_id = $1 \
                 ORDER BY at_micros DESC, id DESC LIMIT 1 OFFSET $2",
            )
            .bind(resource_id)
            .bind(OPERATIONS_KEPT_PER_RESOURCE - 1)
            .fetch_optional(&mut *txn)
            .await?;
            if let Some(oldest_kept) = oldest_kept {
                sqlx::query("DELETE FROM operation_log WHERE resource_id = $1 AND at_micros < $2")
                    .bind(resource_id)
                    .bind(oldest_kept)
                    .execute(&mut *txn)
                    .await?;
            }
            self.commit(txn).await
        })
        .await
    }

    /// [`Store::operation_log_append`] as one Postgres statement: the inserts and the drop of
    /// what is past the bound, with no transaction around them (a pass's record is a round trip,
    /// not five). The drop sees the rows as they were before the insert (one statement, one
    /// snapshot), so it keeps the newest of them the new calls leave room for; a pass of more
    /// calls than the bound keeps its newest.
    async fn operation_log_append_in_one(
        &self,
        resource_id: &str,
        work_kind: &str,
        calls: &[OperationRow],
    ) -> Result<()> {
        let room = OPERATIONS_KEPT_PER_RESOURCE as usize;
        let calls = &calls[calls.len().saturating_sub(room)..];
        let values: Vec<String> = (0..calls.len())
            .map(|i| {
                let n = 4 + i * 8;
                format!(
                    "(${n}, $1, $3, ${}, ${}, ${}, ${}, ${}, ${}, ${})",
                    n + 1,
                    n + 2,
                    n + 3,
                    n + 4,
                    n + 5,
                    n + 6,
                    n + 7
                )
            })
            .collect();
        let sql = format!(
            "WITH inserted AS (INSERT INTO operation_log (id, resource_id, work_kind, at_micros, duration_micros, \
             call, provider_operation_id, outcome, error_class, message) VALUES {} RETURNING 1) \
             DELETE FROM operation_log WHERE resource_id = $1 AND id NOT IN (SELECT id FROM operation_log \
             WHERE resource_id = $1 ORDER BY at_micros DESC, id DESC LIMIT $2)",
            values.join(", ")
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(resource_id)
            .bind(OPERATIONS_KEPT_PER_RESOURCE - calls.len() as i64)
            .bind(work_kind);
        for call in calls {
            query = query
                .bind(&call.id)
                .bind(call.at_micros)
                .bind(call.duration_micros)
                .bind(&call.call)
                .bind(&call.provider_operation_id)
                .bind(&call.outcome)
                .bind(&call.error_class)
                .bind(&call.message);
        }
        query.execute(&self.pool).await?;
        Ok(())
    }

    /// The calls recorded for `resource_id`, newest first, at most `limit`, those older than
    /// `before` (a call's time and id, the last of the previous page) when given.
    pub async fn operation_log_list(
        &self,
        resource_id: &str,
        before: Option<(i64, &str)>,
        limit: i64,
    ) -> Result<Vec<OperationRow>> {
        crate::measured::store("operation_log_list", async {
            let (at, id) = before.unwrap_or((i64::MAX, ""));
            let rows = sqlx::query(
                "SELECT id, resource_id, work_kind, at_micros, duration_micros, call, provider_operation_id, outcome, \
                 error_class, message FROM operation_log \
                 WHERE resource_id = $1 AND (at_micros < $2 OR (at_micros = $2 AND id < $3)) \
                 ORDER BY at_micros DESC, id DESC LIMIT $4",
            )
            .bind(resource_id)
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(operation_row).collect()
        })
        .await
    }

    /// Drops every call older than `before` (µs); returns how many.
    pub async fn operation_log_prune(&self, before: i64) -> Result<u64> {
        crate::measured::store("operation_log_prune", async {
            let mut txn = self.begin_write().await?;
            let pruned = sqlx::query("DELETE FROM operation_log WHERE at_micros < $1")
                .bind(before)
                .execute(&mut *txn)
                .await?
                .rows_affected();
            self.commit(txn).await?;
            Ok(pruned)
        })
        .await
    }
}
