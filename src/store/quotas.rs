//! Quotas in the store, and booking them inside a resource's own transaction.
//!
//! A booking is one conditional `UPDATE ... SET used = used + n WHERE used + n <= quota_limit`:
//! the row lock serializes concurrent bookings and each re-reads `used` before it adds, so no
//! number of parallel creates books past the limit (Postgres re-evaluates the condition on the
//! row it waited for; SQLite has one writer; CockroachDB's serializable transactions retry).

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::catalog::{catalog_event, tenant_require_active_in};
use super::{Store, conflict_on_unique};
use crate::error::{Code, Error, Result};

/// A quota as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaRow {
    /// The pool.
    pub pool_id: String,
    /// The tenant.
    pub tenant_id: String,
    /// The kind of resource counted.
    pub resource_kind: String,
    /// How many the tenant may have.
    pub limit: i64,
    /// How many are booked.
    pub used: i64,
    /// Bumped by every change of the limit.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
}

/// A quota to create.
#[derive(Clone, Debug)]
pub struct NewQuota {
    /// The pool.
    pub pool_id: String,
    /// The tenant.
    pub tenant_id: String,
    /// The kind of resource counted.
    pub resource_kind: String,
    /// The limit.
    pub limit: i64,
    /// The creation time.
    pub now: i64,
}

const COLUMNS: &str = "pool_id, tenant_id, resource_kind, quota_limit, used, version, created_at, updated_at";
const KEY: &str = "pool_id = $1 AND tenant_id = $2 AND resource_kind = $3";

fn quota_from_row(row: &AnyRow) -> Result<QuotaRow> {
    Ok(read_columns!(row, QuotaRow {
        pool_id, tenant_id, resource_kind, used, version, created_at, updated_at;
        limit: row.try_get("quota_limit")?,
    }))
}

fn quota_not_found(pool: &str, tenant: &str, kind: &str) -> Error {
    Error::new(Code::NotFound, format!("tenant {tenant:?} has no {kind} quota on pool {pool:?}"))
        .with_detail("resource", "quota")
        .with_detail("poolId", pool)
        .with_detail("tenantId", tenant)
        .with_detail("resourceKind", kind)
}

/// `QUOTA_EXCEEDED` for booking `n` more `kind` when `used` of `limit` are booked (no row: a
/// limit of 0, "no quota row grants none").
pub fn quota_exceeded(pool: &str, tenant: &str, kind: &str, n: i64, quota: Option<(i64, i64)>) -> Error {
    let (limit, used) = quota.unwrap_or((0, 0));
    let message = match quota {
        None => format!("tenant {tenant:?} has no {kind} quota on pool {pool:?}; no quota row grants none"),
        Some(_) => {
            format!("tenant {tenant:?} has {used} of its {limit} {kind} on pool {pool:?} booked; {n} more do not fit")
        }
    };
    Error::new(Code::QuotaExceeded, message)
        .with_detail("limit", limit)
        .with_detail("used", used)
        .with_detail("poolId", pool)
        .with_detail("resourceKind", kind)
}

/// The `kind` quota of `tenant` on `pool`, read through `db` (the pool or a transaction).
async fn quota_find<'c>(
    db: impl sqlx::Executor<'c, Database = Any>,
    pool: &str,
    tenant: &str,
    kind: &str,
) -> Result<Option<QuotaRow>> {
    let select = format!("SELECT {COLUMNS} FROM quotas WHERE {KEY}");
    let row = sqlx::query(sqlx::AssertSqlSafe(select)).bind(pool).bind(tenant).bind(kind).fetch_optional(db).await?;
    row.as_ref().map(quota_from_row).transpose()
}

/// Which way a change to a quota's bookings goes.
#[derive(Clone, Copy)]
enum Booking {
    Book,
    Refund,
}

/// Sets the bookings of the `kind` quota of `tenant` on `pool` to `used` (an expression of
/// `used` and `$4`, bound to `n`) where `and` (a further condition, or empty) holds: the one
/// statement of a booking and of a refund. Returns how many rows it changed.
async fn quota_used_set<'c>(
    db: impl sqlx::Executor<'c, Database = Any>,
    (used, and): (&str, &str),
    pool: &str,
    tenant: &str,
    kind: &str,
    n: i64,
) -> Result<u64> {
    let update = format!("UPDATE quotas SET used = {used} WHERE {KEY}{and}");
    let query = sqlx::query(sqlx::AssertSqlSafe(update)).bind(pool).bind(tenant).bind(kind).bind(n);
    Ok(query.execute(db).await?.rows_affected())
}

impl Store {
    /// Creates a quota; `CONFLICT` when one of the same pool, tenant and kind exists.
    pub async fn quota_create(&self, new: &NewQuota) -> Result<QuotaRow> {
        crate::measured::store("quota_create", async {
            let mut txn = self.begin_write().await?;
            tenant_require_active_in(&mut txn, &new.tenant_id).await?;
            let row = conflict_on_unique(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO quotas ({COLUMNS}) VALUES ($1, $2, $3, $4, 0, 1, $5, $5) RETURNING {COLUMNS}"
                )))
                .bind(&new.pool_id)
                .bind(&new.tenant_id)
                .bind(&new.resource_kind)
                .bind(new.limit)
                .bind(new.now)
                .fetch_one(&mut *txn)
                .await,
                || {
                    Error::conflict(format!(
                        "tenant {:?} already has a {} quota on pool {:?}",
                        new.tenant_id, new.resource_kind, new.pool_id
                    ))
                    .with_detail("resourceKind", new.resource_kind.as_str())
                },
            )?;
            let quota = quota_from_row(&row)?;
            self.event_append_in(&mut txn, &quota_event("created", &quota)).await?;
            self.commit_and_signal(txn).await?;
            Ok(quota)
        })
        .await
    }

    /// One quota.
    pub async fn quota_fetch(&self, pool: &str, tenant: &str, kind: &str) -> Result<QuotaRow> {
        crate::measured::store("quota_fetch", async {
            quota_find(&self.pool, pool, tenant, kind).await?.ok_or_else(|| quota_not_found(pool, tenant, kind))
        })
        .await
    }

    /// Quotas, oldest first, narrowed to a pool and a tenant when those are not empty.
    pub async fn quota_list(&self, pool: &str, tenant: &str) -> Result<Vec<QuotaRow>> {
        crate::measured::store("quota_list", async {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COLUMNS} FROM quotas WHERE ($1 = '' OR pool_id = $1) AND ($2 = '' OR tenant_id = $2) \
                 ORDER BY created_at, pool_id, tenant_id, resource_kind"
            )))
            .bind(pool)
            .bind(tenant)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(quota_from_row).collect()
        })
        .await
    }

    /// Sets a quota's limit and bumps its version.
    pub async fn quota_update(&self, pool: &str, tenant: &str, kind: &str, limit: i64, now: i64) -> Result<QuotaRow> {
        crate::measured::store("quota_update", async {
            let mut txn = self.begin_write().await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE quotas SET quota_limit = $4, version = version + 1, updated_at = $5 WHERE {KEY} \
                 RETURNING {COLUMNS}"
            )))
            .bind(pool)
            .bind(tenant)
            .bind(kind)
            .bind(limit)
            .bind(now)
            .fetch_optional(&mut *txn)
            .await?;
            let quota =
                row.as_ref().map(quota_from_row).transpose()?.ok_or_else(|| quota_not_found(pool, tenant, kind))?;
            self.event_append_in(&mut txn, &quota_event("updated", &quota)).await?;
            self.commit_and_signal(txn).await?;
            Ok(quota)
        })
        .await
    }

    /// Removes a quota without bookings and returns it as it was; `INVALID_STATE` while
    /// resources hold bookings on it.
    pub async fn quota_delete(&self, pool: &str, tenant: &str, kind: &str, now: i64) -> Result<QuotaRow> {
        crate::measured::store("quota_delete", async {
            let mut txn = self.begin_write().await?;
            let quota =
                quota_find(&mut *txn, pool, tenant, kind).await?.ok_or_else(|| quota_not_found(pool, tenant, kind))?;
            if quota.used > 0 {
                return Err(Error::invalid_state(format!(
                    "the {kind} quota of tenant {tenant:?} on pool {pool:?} has {} booking(s); \
                     delete those resources first",
                    quota.used
                ))
                .with_detail("used", quota.used));
            }
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM quotas WHERE {KEY}")))
                .bind(pool)
                .bind(tenant)
                .bind(kind)
                .execute(&mut *txn)
                .await?;
            let mut event = quota_event("deleted", &quota);
            event.time = now;
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(quota)
        })
        .await
    }

    /// Books `n` of `kind` for `tenant` on `pool` inside the resource's own transaction:
    /// `QUOTA_EXCEEDED` with `details.limit` when they do not fit or there is no quota row.
    pub async fn quota_book_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        pool: &str,
        tenant: &str,
        kind: &str,
        n: i64,
    ) -> Result<()> {
        crate::measured::store("quota_book_in", async {
            let booked =
                quota_used_set(&mut **txn, ("used + $4", " AND used + $4 <= quota_limit"), pool, tenant, kind, n);
            if booked.await? == 1 {
                return Ok(());
            }
            let quota = quota_find(&mut **txn, pool, tenant, kind).await?;
            Err(quota_exceeded(pool, tenant, kind, n, quota.map(|quota| (quota.limit, quota.used))))
        })
        .await
    }

    /// Gives back `n` of `kind` booked by a resource that goes, inside its transaction. Never
    /// goes below zero (a quota recreated after its resources were made counts from zero).
    pub async fn quota_refund_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        pool: &str,
        tenant: &str,
        kind: &str,
        n: i64,
    ) -> Result<()> {
        crate::measured::store("quota_refund_in", async {
            let at_least_zero = "CASE WHEN used >= $4 THEN used - $4 ELSE 0 END";
            quota_used_set(&mut **txn, (at_least_zero, ""), pool, tenant, kind, n).await?;
            Ok(())
        })
        .await
    }

    /// Books `n` in a transaction of its own (what a create does, for tests and benchmarks of
    /// booking under concurrency).
    pub async fn quota_book(&self, pool: &str, tenant: &str, kind: &str, n: i64) -> Result<()> {
        crate::measured::store("quota_book", self.quota_alone(Booking::Book, pool, tenant, kind, n)).await
    }

    /// Refunds `n` in a transaction of its own.
    pub async fn quota_refund(&self, pool: &str, tenant: &str, kind: &str, n: i64) -> Result<()> {
        crate::measured::store("quota_refund", self.quota_alone(Booking::Refund, pool, tenant, kind, n)).await
    }

    /// A booking or a refund in a transaction of its own (it appends no event: nothing to signal).
    async fn quota_alone(&self, booking: Booking, pool: &str, tenant: &str, kind: &str, n: i64) -> Result<()> {
        let mut txn = self.begin_write().await?;
        match booking {
            Booking::Book => self.quota_book_in(&mut txn, pool, tenant, kind, n).await?,
            Booking::Refund => self.quota_refund_in(&mut txn, pool, tenant, kind, n).await?,
        }
        self.commit(txn).await?;
        Ok(())
    }

    /// Whether `n` more of `kind` would fit now, booking nothing (`checkPlacement`).
    pub async fn quota_check(&self, pool: &str, tenant: &str, kind: &str, n: i64) -> Result<()> {
        crate::measured::store("quota_check", async {
            let quota = quota_find(&self.pool, pool, tenant, kind).await?;
            match quota.map(|quota| (quota.limit, quota.used)) {
                Some((limit, used)) if used + n <= limit => Ok(()),
                other => Err(quota_exceeded(pool, tenant, kind, n, other)),
            }
        })
        .await
    }
}

fn quota_event(change: &str, quota: &QuotaRow) -> super::NewEvent {
    catalog_event(
        "quota",
        change,
        &quota.pool_id,
        Some(&quota.tenant_id),
        quota.updated_at,
        serde_json::json!({"poolId": quota.pool_id, "tenantId": quota.tenant_id,
            "resourceKind": quota.resource_kind, "limit": quota.limit, "version": quota.version}),
    )
}
