//! Tenants in the store.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::authz_row;
use super::record::{Announced, Record};
use super::{NewEvent, Store, conflict_on_unique};
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

impl Record for TenantRow {
    const SELECT: &'static str =
        "SELECT id, display_name, description, state, version, created_at, updated_at, deleted_at FROM tenants";
    const NOUN: &'static str = "tenant";

    fn from_row(row: &AnyRow) -> Result<TenantRow> {
        Ok(read_columns!(
            row,
            TenantRow { id, display_name, description, state, version, created_at, updated_at, deleted_at }
        ))
    }
}

impl Announced for TenantRow {
    const TABLE: &'static str = "tenants";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    /// `platform.tenant.<change>`, filed under the tenant itself.
    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({
            "id": self.id, "displayName": self.display_name, "state": self.state, "version": self.version,
        });
        NewEvent {
            source: "/platform/tenants".to_owned(),
            event_type: format!("platform.tenant.{change}"),
            subject: self.id.clone(),
            tenant_id: self.id.clone(),
            time: self.updated_at,
            data,
        }
    }
}

impl Store {
    /// Creates a tenant; `CONFLICT` if the id is taken.
    pub async fn tenant_create(&self, new: &NewTenant) -> Result<TenantRow> {
        crate::measured::store("tenant_create", async {
            let mut txn = self.begin_write().await?;
            let insert = sqlx::query(
                "INSERT INTO tenants (id, display_name, description, state, version, created_at, updated_at) \
                 VALUES ($1, $2, $3, 'active', 1, $4, $4)",
            );
            let inserted =
                insert.bind(&new.id).bind(&new.display_name).bind(&new.description).bind(new.now).execute(&mut *txn);
            conflict_on_unique(inserted.await, || {
                Error::conflict(format!("a tenant with id {:?} already exists", new.id))
                    .with_detail("id", new.id.as_str())
            })?;
            let authz = authz_row("platform-tenant", &new.id, Some(&new.id), Default::default(), new.now);
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            let tenant = self.record_changed_in(&mut txn, &new.id, "created").await?;
            self.commit_and_signal(txn).await?;
            Ok(tenant)
        })
        .await
    }

    /// The tenant with `id`, deleted or not.
    pub async fn tenant_fetch(&self, id: &str) -> Result<TenantRow> {
        crate::measured::store("tenant_fetch", self.record_fetch(id)).await
    }

    /// The tenants, oldest first.
    pub async fn tenant_list(&self, include_deleted: bool) -> Result<Vec<TenantRow>> {
        let listed = self.record_list("($1 OR deleted_at IS NULL)", "created_at, id", |q| q.bind(include_deleted));
        crate::measured::store("tenant_list", listed).await
    }

    /// Applies `change` to a tenant that is not deleted and bumps its version.
    pub async fn tenant_update(&self, id: &str, change: &TenantChange, now: i64) -> Result<TenantRow> {
        crate::measured::store("tenant_update", async {
            let mut txn = self.begin_write().await?;
            let current: TenantRow = self.record_live_in(&mut txn, id).await?;
            sqlx::query(
                "UPDATE tenants SET display_name = $2, description = $3, version = version + 1, updated_at = $4 \
                 WHERE id = $1",
            )
            .bind(id)
            .bind(change.display_name.as_ref().unwrap_or(&current.display_name))
            .bind(change.description.as_ref().unwrap_or(&current.description))
            .bind(now)
            .execute(&mut *txn)
            .await?;
            let tenant = self.record_changed_in(&mut txn, id, "updated").await?;
            self.commit_and_signal(txn).await?;
            Ok(tenant)
        })
        .await
    }

    /// Marks a tenant deleted and, in the same transaction, bumps the authentication generation,
    /// so that every server's cached callers of the tenant are read again (and refused) on their
    /// next call; a deleted tenant is returned unchanged.
    pub async fn tenant_delete(&self, id: &str, now: i64) -> Result<TenantRow> {
        crate::measured::store("tenant_delete", async {
            let mut txn = self.begin_write().await?;
            let (tenant, deleted) = self.record_mark_deleted_in(&mut txn, id, now).await?;
            if deleted {
                self.auth_generation_bump_in(&mut txn).await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(tenant)
        })
        .await
    }
}
