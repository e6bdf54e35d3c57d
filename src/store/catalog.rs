//! What the catalog's store files share: the statements every catalog row kind runs alike
//! ([`CatalogRow`]: fetch by id, list, mark deleted, announce a change), the outbox event of a
//! change, JSON columns, and the existence checks of the rows a catalog row refers to.

use sqlx::any::AnyRow;
use sqlx::{Any, Transaction};

use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::error::{Error, Result};

/// A kind of catalog row with an id: where it is read from and how its changes are announced.
/// Each kind's file keeps its own inserts, updates and rules, and calls the statements here.
pub(super) trait CatalogRow: Sized + Send {
    /// `SELECT` of its columns `FROM` its table and what it joins, without a condition.
    const SELECT: &'static str;
    /// Its table, as a deletion marks it.
    const TABLE: &'static str;
    /// Its id column in [`CatalogRow::SELECT`]: `p.id` where tables are joined.
    const ID: &'static str = "id";
    /// The row in errors: `project`.
    const NOUN: &'static str;

    /// Reads a row that [`CatalogRow::SELECT`] selected.
    fn from_row(row: &AnyRow) -> Result<Self>;

    /// When it was deleted.
    fn deleted_at(&self) -> Option<i64>;

    /// The outbox event of `change` (`created`, `updated`, `deleted`) as the row is now.
    fn event(&self, change: &str) -> NewEvent;
}

/// `SELECT` of row `$1` of kind `R`.
fn select_by_id<R: CatalogRow>() -> String {
    format!("{} WHERE {} = $1", R::SELECT, R::ID)
}

/// The row read, or `NOT_FOUND` naming `id`.
fn found<R: CatalogRow>(row: Option<AnyRow>, id: &str) -> Result<R> {
    row.as_ref().map(R::from_row).transpose()?.ok_or_else(|| Error::not_found(R::NOUN, id))
}

impl Store {
    /// Row `id` of kind `R`, deleted or not.
    pub(super) async fn catalog_fetch<R: CatalogRow>(&self, id: &str) -> Result<R> {
        let row = sqlx::query(sqlx::AssertSqlSafe(select_by_id::<R>())).bind(id).fetch_optional(&self.pool).await?;
        found(row, id)
    }

    /// Row `id` of kind `R` inside `txn`, deleted or not.
    pub(super) async fn catalog_fetch_in<R: CatalogRow>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<R> {
        let row = sqlx::query(sqlx::AssertSqlSafe(select_by_id::<R>())).bind(id).fetch_optional(&mut **txn).await?;
        found(row, id)
    }

    /// Row `id` of kind `R` inside `txn`, to change: `INVALID_STATE` once it is deleted.
    pub(super) async fn catalog_live_in<R: CatalogRow>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<R> {
        let row: R = self.catalog_fetch_in(txn, id).await?;
        if row.deleted_at().is_some() {
            return Err(Error::invalid_state(format!("{} {id:?} is deleted and cannot change", R::NOUN)));
        }
        Ok(row)
    }

    /// The rows of kind `R` that `condition` picks (its arguments bound by `bind`), in `order`.
    pub(super) async fn catalog_list<R: CatalogRow>(
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
    pub(super) async fn catalog_changed_in<R: CatalogRow>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        change: &str,
    ) -> Result<R> {
        let row: R = self.catalog_fetch_in(txn, id).await?;
        self.event_append_in(txn, &row.event(change)).await?;
        Ok(row)
    }

    /// Marks row `id` deleted at `now` inside `txn` and appends its `deleted` event. Returns the
    /// row and whether this call deleted it; a deleted row is left as it is (nothing to commit).
    pub(super) async fn catalog_mark_deleted_in<R: CatalogRow>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<(R, bool)> {
        if !mark_deleted_in(txn, R::TABLE, id, now).await? {
            return Ok((self.catalog_fetch_in(txn, id).await?, false));
        }
        Ok((self.catalog_changed_in(txn, id, "deleted").await?, true))
    }

    /// [`Store::catalog_mark_deleted_in`] and the commit, in `txn` (begun by a caller that may
    /// have checked what the deletion needs): the row as it is now.
    pub(super) async fn catalog_delete<R: CatalogRow>(
        &self,
        mut txn: Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<R> {
        let (row, deleted) = self.catalog_mark_deleted_in(&mut txn, id, now).await?;
        if deleted {
            self.commit_and_signal(txn).await?;
        }
        Ok(row)
    }
}

/// The outbox event of a catalog change: `platform.<resource>.<change>`, filed under the owning
/// tenant or, for the platform's own rows, under `platform`. `data` never holds credentials.
pub(super) fn catalog_event(
    resource: &str,
    change: &str,
    subject: &str,
    tenant: Option<&str>,
    time: i64,
    data: serde_json::Value,
) -> NewEvent {
    NewEvent {
        source: format!("/platform/{resource}s"),
        event_type: format!("platform.{resource}.{change}"),
        subject: subject.to_owned(),
        tenant_id: tenant.unwrap_or("platform").to_owned(),
        time,
        data,
    }
}

/// A JSON array of strings as stored.
pub(super) fn strings_to_json(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

/// A stored JSON array of strings.
pub(super) fn strings_from_json(text: &str) -> Result<Vec<String>> {
    serde_json::from_str(text).map_err(|error| Error::internal(format!("a stored list is not JSON: {error}")))
}

/// A stored JSON value.
pub(super) fn value_from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| Error::internal(format!("a stored document is not JSON: {error}")))
}

/// Checks, inside `txn`, that tenant `id` exists and is not deleted: `NOT_FOUND` or
/// `INVALID_STATE` otherwise.
pub(super) async fn tenant_require_active_in(txn: &mut Transaction<'static, Any>, id: &str) -> Result<()> {
    let deleted: Option<Option<i64>> =
        sqlx::query_scalar("SELECT deleted_at FROM tenants WHERE id = $1").bind(id).fetch_optional(&mut **txn).await?;
    match deleted {
        None => Err(Error::not_found("tenant", id)),
        Some(Some(_)) => Err(Error::invalid_state(format!("tenant {id:?} is deleted")).with_detail("tenantId", id)),
        Some(None) => Ok(()),
    }
}

/// Marks row `id` of `table` (a catalog table with `state`, `version` and the times) deleted at
/// `now`, inside `txn`: whether it was live. A deleted row is left as it is.
pub(super) async fn mark_deleted_in(
    txn: &mut Transaction<'static, Any>,
    table: &'static str,
    id: &str,
    now: i64,
) -> Result<bool> {
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

/// The authorization row of a catalog resource, written with it: its type, id, tenant (none for
/// the platform's own) and the attributes decisions may read.
pub(super) fn authz_row(
    resource_type: &str,
    id: &str,
    tenant_id: Option<&str>,
    attributes: serde_json::Map<String, serde_json::Value>,
    now: i64,
) -> super::AuthzResourceRow {
    super::AuthzResourceRow {
        resource_type: resource_type.to_owned(),
        resource_id: id.to_owned(),
        tenant_id: tenant_id.map(str::to_owned),
        project_id: None,
        owner_id: None,
        attributes,
        created_at: now,
    }
}
