//! Tenants in the store.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique};
use crate::error::{Error, Result};

/// A tenant as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantRow {
    /// The operator-chosen id.
    pub id: String,
    /// A name for people to read.
    pub display_name: String,
    /// Free text.
    pub description: String,
    /// `active` or `deleted`.
    pub state: String,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs since the epoch).
    pub created_at: i64,
    /// Last change (µs since the epoch).
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
}

/// A tenant to create.
#[derive(Clone, Debug)]
pub struct NewTenant {
    /// The id.
    pub id: String,
    /// The display name.
    pub display_name: String,
    /// The description.
    pub description: String,
    /// The creation time.
    pub now: i64,
}

/// A change to a tenant: the fields to set, the others left as they are.
#[derive(Clone, Debug, Default)]
pub struct TenantChange {
    /// A new display name.
    pub display_name: Option<String>,
    /// A new description.
    pub description: Option<String>,
}

fn tenant_from_row(row: &AnyRow) -> Result<TenantRow> {
    Ok(TenantRow {
        id: row.try_get("id")?,
        display_name: row.try_get("display_name")?,
        description: row.try_get("description")?,
        state: row.try_get("state")?,
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
    })
}

impl Store {
    /// Creates a tenant; `CONFLICT` if the id is taken.
    pub async fn tenant_create(&self, new: &NewTenant) -> Result<TenantRow> {
        crate::measured::store("tenant_create", async {
            let mut txn = self.begin_write().await?;
            conflict_on_unique(
                sqlx::query(
                    "INSERT INTO tenants (id, display_name, description, state, version, created_at, updated_at) \
                 VALUES ($1, $2, $3, 'active', 1, $4, $4)",
                )
                .bind(&new.id)
                .bind(&new.display_name)
                .bind(&new.description)
                .bind(new.now)
                .execute(&mut *txn)
                .await,
                || {
                    Error::conflict(format!("a tenant with id {:?} already exists", new.id))
                        .with_detail("id", new.id.as_str())
                },
            )?;
            let row = sqlx::query(SELECT_BY_ID).bind(&new.id).fetch_one(&mut *txn).await?;
            let tenant = tenant_from_row(&row)?;
            let authz = AuthzResourceRow {
                resource_type: "platform-tenant".to_owned(),
                resource_id: tenant.id.clone(),
                tenant_id: Some(tenant.id.clone()),
                project_id: None,
                owner_id: None,
                attributes: Default::default(),
                created_at: new.now,
            };
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            self.event_append_in(&mut txn, &tenant_event("created", &tenant)).await?;
            self.commit_and_signal(txn).await?;
            Ok(tenant)
        })
        .await
    }

    /// The tenant with `id`, deleted or not.
    pub async fn tenant_fetch(&self, id: &str) -> Result<TenantRow> {
        crate::measured::store("tenant_fetch", async {
            let row = sqlx::query(SELECT_BY_ID).bind(id).fetch_optional(&self.pool).await?;
            row.as_ref().map(tenant_from_row).transpose()?.ok_or_else(|| Error::not_found("tenant", id))
        })
        .await
    }

    /// The tenants, oldest first.
    pub async fn tenant_list(&self, include_deleted: bool) -> Result<Vec<TenantRow>> {
        crate::measured::store("tenant_list", async {
            let rows = sqlx::query(
                "SELECT id, display_name, description, state, version, created_at, updated_at, deleted_at \
                 FROM tenants WHERE ($1 OR deleted_at IS NULL) ORDER BY created_at, id",
            )
            .bind(include_deleted)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(tenant_from_row).collect()
        })
        .await
    }

    /// Applies `change` to a tenant that is not deleted and bumps its version.
    pub async fn tenant_update(&self, id: &str, change: &TenantChange, now: i64) -> Result<TenantRow> {
        crate::measured::store("tenant_update", async {
            let mut txn = self.begin_write().await?;
            let current = sqlx::query(SELECT_BY_ID).bind(id).fetch_optional(&mut *txn).await?;
            let current =
                current.as_ref().map(tenant_from_row).transpose()?.ok_or_else(|| Error::not_found("tenant", id))?;
            if current.deleted_at.is_some() {
                return Err(Error::invalid_state(format!("tenant {id:?} is deleted and cannot change")));
            }
            let row = sqlx::query(
                "UPDATE tenants SET display_name = $2, description = $3, version = version + 1, updated_at = $4 \
                 WHERE id = $1 \
                 RETURNING id, display_name, description, state, version, created_at, updated_at, deleted_at",
            )
            .bind(id)
            .bind(change.display_name.as_ref().unwrap_or(&current.display_name))
            .bind(change.description.as_ref().unwrap_or(&current.description))
            .bind(now)
            .fetch_one(&mut *txn)
            .await?;
            let tenant = tenant_from_row(&row)?;
            self.event_append_in(&mut txn, &tenant_event("updated", &tenant)).await?;
            self.commit_and_signal(txn).await?;
            Ok(tenant)
        })
        .await
    }

    /// Marks a tenant deleted; a deleted tenant is returned unchanged.
    pub async fn tenant_delete(&self, id: &str, now: i64) -> Result<TenantRow> {
        crate::measured::store("tenant_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE tenants SET state = 'deleted', deleted_at = $2, updated_at = $2, version = version + 1 \
                 WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            let row = sqlx::query(SELECT_BY_ID).bind(id).fetch_optional(&mut *txn).await?;
            let row = row.as_ref().map(tenant_from_row).transpose()?.ok_or_else(|| Error::not_found("tenant", id))?;
            if updated.rows_affected() > 0 {
                self.event_append_in(&mut txn, &tenant_event("deleted", &row)).await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(row)
        })
        .await
    }
}

/// The outbox event of a change to `tenant`: `platform.tenant.<change>`.
fn tenant_event(change: &str, tenant: &TenantRow) -> NewEvent {
    NewEvent {
        source: "/platform/tenants".to_owned(),
        event_type: format!("platform.tenant.{change}"),
        subject: tenant.id.clone(),
        tenant_id: tenant.id.clone(),
        time: tenant.updated_at,
        data: serde_json::json!({
            "id": tenant.id,
            "displayName": tenant.display_name,
            "state": tenant.state,
            "version": tenant.version,
        }),
    }
}

/// One tenant by id.
const SELECT_BY_ID: &str = "SELECT id, display_name, description, state, version, created_at, updated_at, deleted_at FROM tenants WHERE id = $1";
