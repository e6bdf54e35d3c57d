//! The statements every kind of [`Record`] runs alike: fetch by id and list; for an
//! [`Announced`] kind, the live check before a change, the change and the deletion with their
//! events; and the event of a row that belongs to a pool. Asynchronous tenant resources have their own kit (`resource.rs`), which also keeps
//! their common fields.

use sqlx::any::AnyRow;
use sqlx::{Any, Transaction};

use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::error::{Error, Result};

/// A kind of row with an id that is not an asynchronous resource (a catalog row, a join token, a
/// node, a machine, a principal, a key): where it is read from. Each kind's file keeps its own
/// inserts, updates and rules, and calls the statements here.
pub(super) trait Record: Sized + Send {
    /// `SELECT` of its columns `FROM` its table and what it joins, without a condition.
    const SELECT: &'static str;
    /// Its id column in [`Record::SELECT`]: `p.id` where tables are joined.
    const ID: &'static str = "id";
    /// The row in errors: `project`.
    const NOUN: &'static str;

    /// Reads a row that [`Record::SELECT`] selected.
    fn from_row(row: &AnyRow) -> Result<Self>;
}

/// A kind of [`Record`] whose changes are announced in the outbox.
pub(super) trait Announced: Record {
    /// Its table, as a deletion marks it.
    const TABLE: &'static str;

    /// When it was deleted.
    fn deleted_at(&self) -> Option<i64>;

    /// The outbox event of `change` (`created`, `updated`, `deleted`) as the row is now.
    fn event(&self, change: &str) -> NewEvent;
}

/// The outbox event `<kind>.<change>` of a row that belongs to a pool (a node, a join token, a
/// machine, a substrate): filed under the pool, so that a pool's watchers see it, and under the
/// pool's tenant or, for a platform pool, under `platform`.
pub(super) fn pool_event(
    source: &str,
    kind: &str,
    change: &str,
    pool_id: &str,
    tenant: Option<&str>,
    time: i64,
    data: serde_json::Value,
) -> NewEvent {
    NewEvent {
        source: source.to_owned(),
        event_type: format!("{kind}.{change}"),
        subject: pool_id.to_owned(),
        tenant_id: tenant.unwrap_or("platform").to_owned(),
        time,
        data,
    }
}

/// `SELECT` of row `$1` of kind `R`.
fn select_by_id<R: Record>() -> String {
    format!("{} WHERE {} = $1", R::SELECT, R::ID)
}

/// The row read, if there is one.
fn read<R: Record>(row: Option<AnyRow>) -> Result<Option<R>> {
    row.as_ref().map(R::from_row).transpose()
}

impl Store {
    /// Row `id` of kind `R`, deleted or not; `None` when there is none.
    pub(super) async fn record_find<R: Record>(&self, id: &str) -> Result<Option<R>> {
        read(sqlx::query(sqlx::AssertSqlSafe(select_by_id::<R>())).bind(id).fetch_optional(&self.pool).await?)
    }

    /// Row `id` of kind `R` inside `txn`, deleted or not; `None` when there is none.
    pub(super) async fn record_find_in<R: Record>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Option<R>> {
        read(sqlx::query(sqlx::AssertSqlSafe(select_by_id::<R>())).bind(id).fetch_optional(&mut **txn).await?)
    }

    /// Row `id` of kind `R`, deleted or not.
    pub(super) async fn record_fetch<R: Record>(&self, id: &str) -> Result<R> {
        self.record_find(id).await?.ok_or_else(|| Error::not_found(R::NOUN, id))
    }

    /// Row `id` of kind `R` inside `txn`, deleted or not.
    pub(super) async fn record_fetch_in<R: Record>(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<R> {
        self.record_find_in(txn, id).await?.ok_or_else(|| Error::not_found(R::NOUN, id))
    }

    /// Row `id` of kind `R` inside `txn`, to change: `INVALID_STATE` once it is deleted.
    pub(super) async fn record_live_in<R: Announced>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<R> {
        let row: R = self.record_fetch_in(txn, id).await?;
        if row.deleted_at().is_some() {
            return Err(Error::invalid_state(format!("{} {id:?} is deleted and cannot change", R::NOUN)));
        }
        Ok(row)
    }

    /// The rows of kind `R` that `condition` picks (its arguments bound by `bind`), in `order`
    /// (which may end in a `LIMIT` bound by `bind` too).
    pub(super) async fn record_list<R: Record>(
        &self,
        condition: &str,
        order: &str,
        bind: impl FnOnce(AnyQuery<'static>) -> AnyQuery<'static>,
    ) -> Result<Vec<R>> {
        let sql = format!("{} WHERE {condition} ORDER BY {order}", R::SELECT);
        let rows = bind(sqlx::query(sqlx::AssertSqlSafe(sql))).fetch_all(&self.pool).await?;
        rows.iter().map(R::from_row).collect()
    }

    /// Row `id` as a change inside `txn` left it, with its `change` event appended; the caller
    /// commits.
    pub(super) async fn record_changed_in<R: Announced>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        change: &str,
    ) -> Result<R> {
        let row: R = self.record_fetch_in(txn, id).await?;
        self.event_append_in(txn, &row.event(change)).await?;
        Ok(row)
    }

    /// Marks row `id` deleted at `now` inside `txn` and appends its `deleted` event. Returns the
    /// row and whether this call deleted it; a deleted row is left as it is (nothing to commit).
    pub(super) async fn record_mark_deleted_in<R: Announced>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<(R, bool)> {
        if !mark_deleted_in(txn, R::TABLE, id, now).await? {
            return Ok((self.record_fetch_in(txn, id).await?, false));
        }
        Ok((self.record_changed_in(txn, id, "deleted").await?, true))
    }

    /// [`Store::record_mark_deleted_in`] and the commit, in `txn` (begun by a caller that may
    /// have checked what the deletion needs): the row as it is now.
    pub(super) async fn record_delete<R: Announced>(
        &self,
        mut txn: Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<R> {
        let (row, deleted) = self.record_mark_deleted_in(&mut txn, id, now).await?;
        if deleted {
            self.commit_and_signal(txn).await?;
        }
        Ok(row)
    }
}

/// Marks row `id` of `table` (a catalog table with `state`, `version` and the times) deleted at
/// `now`, inside `txn`: whether it was live. A deleted row is left as it is.
async fn mark_deleted_in(txn: &mut Transaction<'static, Any>, table: &'static str, id: &str, now: i64) -> Result<bool> {
    let updated = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {table} SET state = 'deleted', deleted_at = $2, updated_at = $2, version = version + 1 \
         WHERE id = $1 AND deleted_at IS NULL"
    )))
    .bind(id)
    .bind(now)
    .execute(&mut **txn)
    .await?;
    Ok(updated.rows_affected() > 0)
}
