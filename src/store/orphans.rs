//! Orphans: the provider objects a forced delete may have left behind, one row each, and the
//! forced delete itself, which ends a resource the way its reconciler would (the kind's own
//! finish: children, billing, quota, the `deleted` event), drops its work and records its
//! objects, in one transaction. The orphan sweeper's work item is queued with them.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{ConvergedRow, Store};
use crate::error::{Error, Result};

/// The work kind of the orphan sweeper.
pub const ORPHAN_SWEEP_KIND: &str = "orphan-sweep";

/// The one object of that kind.
pub const ORPHAN_SWEEP_OBJECT: &str = "orphans";

/// Not tried yet.
pub const ORPHAN_PENDING: &str = "pending";
/// The provider confirmed it gone (a not-found counts).
pub const ORPHAN_REMOVED: &str = "removed";
/// The last try failed.
pub const ORPHAN_STILL_THERE: &str = "stillThere";
/// An operator stopped the retries.
pub const ORPHAN_DISMISSED: &str = "dismissed";

/// The columns of a row, in the order [`OrphanRow`] reads them.
const COLUMNS: &str = "id, tenant_id, resource_id, resource_kind, provider, account_id, location, kind, name, \
                       provider_id, reason, status, last_error, attempts, created_at, updated_at";

/// One provider object a forced delete may have left behind, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrphanRow {
    /// `orph_...`.
    pub id: String,
    /// The resource's tenant.
    pub tenant_id: String,
    /// The resource whose forced delete left it.
    pub resource_id: String,
    /// Its work kind (`kubernetes.clusters`).
    pub resource_kind: String,
    /// `gke`, `gce` or `digitalocean`.
    pub provider: String,
    /// The provider account.
    pub account_id: String,
    /// Where the provider's API finds it (location or region); empty where it needs none.
    pub location: String,
    /// The provider's kind of object (`cluster`).
    pub kind: String,
    /// Its name at the provider.
    pub name: String,
    /// Its id at the provider, where the resource had one.
    pub provider_id: String,
    /// Why it may remain.
    pub reason: String,
    /// [`ORPHAN_PENDING`], [`ORPHAN_REMOVED`], [`ORPHAN_STILL_THERE`] or [`ORPHAN_DISMISSED`].
    pub status: String,
    /// The last try's failure.
    pub last_error: String,
    /// Tries so far.
    pub attempts: i64,
    /// When it was recorded.
    pub created_at: i64,
    /// Its last change.
    pub updated_at: i64,
}

impl OrphanRow {
    fn from_row(row: &AnyRow) -> Result<OrphanRow> {
        Ok(read_columns!(
            row,
            OrphanRow {
                id,
                tenant_id,
                resource_id,
                resource_kind,
                provider,
                account_id,
                location,
                kind,
                name,
                provider_id,
                reason,
                status,
                last_error,
                attempts,
                created_at,
                updated_at
            }
        ))
    }
}

/// One provider object of a resource's delete plan, to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrphan {
    /// `gke`, `gce` or `digitalocean`.
    pub provider: String,
    /// Where the provider's API finds it.
    pub location: String,
    /// The provider's kind of object.
    pub kind: String,
    /// Its name at the provider.
    pub name: String,
    /// Its id at the provider, where known.
    pub provider_id: String,
}

/// A forced delete: the resource, its tenant and account, why, and what it may leave behind.
#[derive(Clone, Debug)]
pub struct ForcedDelete<'a> {
    /// The resource.
    pub resource_id: &'a str,
    /// Its tenant.
    pub tenant_id: &'a str,
    /// Its provider account.
    pub account_id: &'a str,
    /// Why its objects may remain (recorded on each).
    pub reason: &'a str,
    /// The objects of its delete plan.
    pub objects: &'a [NewOrphan],
}

/// Which orphans a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct OrphanFilter<'a> {
    /// Only this tenant's; every tenant's when `None`.
    pub tenant_id: Option<&'a str>,
    /// Only those this resource left.
    pub resource_id: Option<&'a str>,
    /// Only those in this status.
    pub status: Option<&'a str>,
    /// At most this many.
    pub limit: i64,
}

impl Store {
    /// Ends resource `forced.resource_id` of kind `R` `deleted` now, whatever its provider says:
    /// the kind's own finish, its work item dropped, each object recorded `pending` and the
    /// sweeper queued, in one transaction. `false` (nothing written) when it is already deleted
    /// or no delete was asked for (the caller marks it `deleting` first).
    pub async fn force_delete<R: ConvergedRow>(&self, forced: &ForcedDelete<'_>, now: i64) -> Result<bool> {
        crate::measured::store("force_delete", async {
            let mut txn = self.begin_write().await?;
            if !R::finish_delete_in(self, &mut txn, forced.resource_id, now).await? {
                return Ok(false);
            }
            sqlx::query("DELETE FROM work_items WHERE kind = $1 AND object_id = $2")
                .bind(R::KIND)
                .bind(forced.resource_id)
                .execute(&mut *txn)
                .await?;
            for object in forced.objects {
                sqlx::query(
                    "INSERT INTO orphans (id, tenant_id, resource_id, resource_kind, provider, account_id, location, \
                     kind, name, provider_id, reason, status, last_error, attempts, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', '', 0, $12, $12)",
                )
                .bind(crate::ids::random("orph"))
                .bind(forced.tenant_id)
                .bind(forced.resource_id)
                .bind(R::KIND)
                .bind(&object.provider)
                .bind(forced.account_id)
                .bind(&object.location)
                .bind(&object.kind)
                .bind(&object.name)
                .bind(&object.provider_id)
                .bind(forced.reason)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            }
            if !forced.objects.is_empty() {
                self.work_enqueue_in(&mut txn, ORPHAN_SWEEP_KIND, ORPHAN_SWEEP_OBJECT, "sweeping", None, now).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// The failed passes in a row of the reconciler of `kind` on `object_id`, and the last
    /// failure's message; `None` when it has no work item.
    pub async fn work_failures(&self, kind: &str, object_id: &str) -> Result<Option<(i64, Option<String>)>> {
        crate::measured::store("work_failures", async {
            let row = sqlx::query("SELECT attempts, last_error FROM work_items WHERE kind = $1 AND object_id = $2")
                .bind(kind)
                .bind(object_id)
                .fetch_optional(&self.pool)
                .await?;
            row.map(|row| Ok((row.try_get("attempts")?, row.try_get("last_error")?))).transpose()
        })
        .await
    }

    /// The orphans `filter` asks for, newest first.
    pub async fn orphan_list(&self, filter: &OrphanFilter<'_>) -> Result<Vec<OrphanRow>> {
        crate::measured::store("orphan_list", async {
            let sql = format!(
                "SELECT {COLUMNS} FROM orphans WHERE ($1 IS NULL OR tenant_id = $1) \
                 AND ($2 IS NULL OR resource_id = $2) AND ($3 IS NULL OR status = $3) \
                 ORDER BY created_at DESC, id DESC LIMIT $4"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(filter.tenant_id)
                .bind(filter.resource_id)
                .bind(filter.status)
                .bind(filter.limit)
                .fetch_all(&self.pool)
                .await?;
            rows.iter().map(OrphanRow::from_row).collect()
        })
        .await
    }

    /// The orphans the sweeper still tries (`pending` or `stillThere`), oldest first, at most
    /// `limit`.
    pub async fn orphan_due(&self, limit: i64) -> Result<Vec<OrphanRow>> {
        crate::measured::store("orphan_due", async {
            let sql = format!(
                "SELECT {COLUMNS} FROM orphans WHERE status IN ('pending', 'stillThere') \
                 ORDER BY created_at, id LIMIT $1"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(limit).fetch_all(&self.pool).await?;
            rows.iter().map(OrphanRow::from_row).collect()
        })
        .await
    }

    /// Records a try of the sweeper on orphan `id`: `removed`, or `stillThere` with `error`;
    /// nothing if an operator dismissed it meanwhile.
    pub async fn orphan_tried(&self, id: &str, error: Option<&str>, now: i64) -> Result<()> {
        crate::measured::store("orphan_tried", async {
            let status = if error.is_some() { ORPHAN_STILL_THERE } else { ORPHAN_REMOVED };
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "UPDATE orphans SET status = $2, last_error = $3, attempts = attempts + 1, updated_at = $4 \
                 WHERE id = $1 AND status IN ('pending', 'stillThere')",
            )
            .bind(id)
            .bind(status)
            .bind(error.unwrap_or_default())
            .bind(now)
            .execute(&mut *txn)
            .await?;
            self.commit(txn).await
        })
        .await
    }

    /// Orphan `id`, `NOT_FOUND` if there is none.
    pub async fn orphan_fetch(&self, id: &str) -> Result<OrphanRow> {
        crate::measured::store("orphan_fetch", async {
            let sql = format!("SELECT {COLUMNS} FROM orphans WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
            row.as_ref().map(OrphanRow::from_row).transpose()?.ok_or_else(|| Error::not_found("orphan", id))
        })
        .await
    }

    /// Stops the sweeper retrying orphan `id`: `dismissed`, unless it is already removed (then
    /// it stays as it is). Returns it as it is now.
    pub async fn orphan_dismiss(&self, id: &str, now: i64) -> Result<OrphanRow> {
        crate::measured::store("orphan_dismiss", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "UPDATE orphans SET status = 'dismissed', updated_at = $2 \
                 WHERE id = $1 AND status IN ('pending', 'stillThere')",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            self.commit(txn).await?;
            self.orphan_fetch(id).await
        })
        .await
    }
}
