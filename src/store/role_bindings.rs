//! Role bindings in the store: which principal holds which role at which scope.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, conflict_on_unique};
use crate::error::{Error, Result};

/// A role held by a principal at a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleBindingRow {
    /// `rb_...`.
    pub id: String,
    /// The principal.
    pub principal_id: String,
    /// `platform-admin`, `admin`, `editor` or `viewer`.
    pub role: String,
    /// `platform`, `tenant`, `project` or `resource`.
    pub scope_type: String,
    /// The platform (`platform`), tenant, project or resource id.
    pub scope_id: String,
    /// The scope's tenant; none at the platform.
    pub tenant_id: Option<String>,
    /// Creation time.
    pub created_at: i64,
}

const COLUMNS: &str = "id, principal_id, role, scope_type, scope_id, tenant_id, created_at";

fn binding_from_row(row: &AnyRow) -> Result<RoleBindingRow> {
    Ok(RoleBindingRow {
        id: row.try_get("id")?,
        principal_id: row.try_get("principal_id")?,
        role: row.try_get("role")?,
        scope_type: row.try_get("scope_type")?,
        scope_id: row.try_get("scope_id")?,
        tenant_id: row.try_get("tenant_id")?,
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Records a binding; the same role at the same scope twice is `CONFLICT`.
    pub async fn role_binding_create(&self, binding: &RoleBindingRow) -> Result<()> {
        let mut txn = self.begin_write().await?;
        self.role_binding_insert_in(&mut txn, binding).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Records a binding inside a transaction.
    pub(super) async fn role_binding_insert_in(
        &self,
        txn: &mut sqlx::AnyConnection,
        binding: &RoleBindingRow,
    ) -> Result<()> {
        conflict_on_unique(
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO role_bindings ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
            )))
            .bind(&binding.id)
            .bind(&binding.principal_id)
            .bind(&binding.role)
            .bind(&binding.scope_type)
            .bind(&binding.scope_id)
            .bind(&binding.tenant_id)
            .bind(binding.created_at)
            .execute(&mut *txn)
            .await,
            || {
                Error::conflict(format!(
                    "the principal already holds {} at {} {}",
                    binding.role, binding.scope_type, binding.scope_id
                ))
            },
        )?;
        Ok(())
    }

    /// The binding with `id`.
    pub async fn role_binding_fetch(&self, id: &str) -> Result<Option<RoleBindingRow>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM role_bindings WHERE id = $1")))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(binding_from_row).transpose()
    }

    /// Every binding of one principal: what a decision on its calls needs.
    pub async fn role_binding_list_for_principal(&self, principal_id: &str) -> Result<Vec<RoleBindingRow>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM role_bindings WHERE principal_id = $1 ORDER BY created_at, id"
        )))
        .bind(principal_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(binding_from_row).collect()
    }

    /// The bindings under `tenant` (the platform's when none), oldest first.
    pub async fn role_binding_list(&self, tenant: Option<&str>) -> Result<Vec<RoleBindingRow>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM role_bindings \
             WHERE (tenant_id = $1 OR ($1 IS NULL AND tenant_id IS NULL)) ORDER BY created_at, id"
        )))
        .bind(tenant)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(binding_from_row).collect()
    }

    /// Removes a binding.
    pub async fn role_binding_delete(&self, id: &str) -> Result<()> {
        let mut txn = self.begin_write().await?;
        sqlx::query("DELETE FROM role_bindings WHERE id = $1").bind(id).execute(&mut *txn).await?;
        txn.commit().await?;
        Ok(())
    }
}
