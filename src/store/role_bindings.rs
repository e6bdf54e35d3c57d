//! Role bindings in the store: which principal holds which role at which scope.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::record::Record;
use super::resource::AnyQuery;
use super::{AccessRevocation, Backend, Store, conflict_on_unique};
use crate::error::{Code, Error, Result};

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

/// A binding's columns, as its row is read and as it is inserted.
const COLUMNS: &str = "id, principal_id, role, scope_type, scope_id, tenant_id, created_at";

impl Record for RoleBindingRow {
    const SELECT: &'static str =
        "SELECT id, principal_id, role, scope_type, scope_id, tenant_id, created_at FROM role_bindings";
    const NOUN: &'static str = "roleBinding";

    fn from_row(row: &AnyRow) -> Result<RoleBindingRow> {
        Ok(read_columns!(row, RoleBindingRow { id, principal_id, role, scope_type, scope_id, tenant_id, created_at }))
    }
}

impl Store {
    /// Records a binding; the same role at the same scope twice is `CONFLICT`, and a principal
    /// that already holds `max_per_principal` is `QUOTA_EXCEEDED`.
    pub async fn role_binding_create(&self, binding: &RoleBindingRow, max_per_principal: i64) -> Result<()> {
        crate::measured::store("role_binding_create", async {
            let mut txn = self.begin_write().await?;
            if self.backend == Backend::Postgres {
                // Serializes the bindings of one principal, so that two cannot both pass the cap.
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
                    .bind(&binding.principal_id)
                    .execute(&mut *txn)
                    .await?;
            }
            let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM role_bindings WHERE principal_id = $1")
                .bind(&binding.principal_id)
                .fetch_one(&mut *txn)
                .await?;
            if held >= max_per_principal {
                return Err(Error::new(
                    Code::QuotaExceeded,
                    format!(
                        "principal {:?} already holds {held} role bindings, the most one may hold; remove one first",
                        binding.principal_id
                    ),
                )
                .with_detail("limit", max_per_principal));
            }
            self.role_binding_insert_in(&mut txn, binding).await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// Records a binding inside a transaction.
    pub(super) async fn role_binding_insert_in(
        &self,
        txn: &mut sqlx::AnyConnection,
        binding: &RoleBindingRow,
    ) -> Result<()> {
        crate::measured::store("role_binding_insert_in", async {
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
        })
        .await
    }

    /// The binding with `id`.
    pub async fn role_binding_fetch(&self, id: &str) -> Result<Option<RoleBindingRow>> {
        crate::measured::store("role_binding_fetch", self.record_find(id)).await
    }

    /// Every binding of one principal: what a decision on its calls needs.
    pub async fn role_binding_list_for_principal(&self, principal_id: &str) -> Result<Vec<RoleBindingRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(principal_id.to_owned());
        let listed = self.record_list("principal_id = $1", "created_at, id", bind);
        crate::measured::store("role_binding_list_for_principal", listed).await
    }

    /// The bindings under `tenant` (the platform's when none), of one principal when named,
    /// oldest first: at most `limit` after the binding `after` (created at, id).
    pub async fn role_binding_list(
        &self,
        tenant: Option<&str>,
        principal: Option<&str>,
        after: (i64, &str),
        limit: i64,
    ) -> Result<Vec<RoleBindingRow>> {
        let condition = "(tenant_id = $1 OR ($1 IS NULL AND tenant_id IS NULL)) AND ($2 = '' OR principal_id = $2) \
                         AND (created_at > $3 OR (created_at = $3 AND id > $4))";
        let (tenant, principal) = (tenant.map(str::to_owned), principal.unwrap_or_default().to_owned());
        let bind =
            |q: AnyQuery<'static>| q.bind(tenant).bind(principal).bind(after.0).bind(after.1.to_owned()).bind(limit);
        crate::measured::store("role_binding_list", self.record_list(condition, "created_at, id LIMIT $5", bind)).await
    }

    /// Whether a resource of `tenant` has the id `id` (the scope of a binding at a resource).
    pub async fn role_binding_resource_exists(&self, tenant: &str, id: &str) -> Result<bool> {
        crate::measured::store("role_binding_resource_exists", async {
            let found: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM authz_resources WHERE resource_id = $1 AND tenant_id = $2")
                    .bind(id)
                    .bind(tenant)
                    .fetch_one(&self.pool)
                    .await?;
            Ok(found > 0)
        })
        .await
    }

    /// Removes a binding and revokes the kubeconfig accounts its principal no longer may hold
    /// (`revocations`, waking their clusters), in one transaction.
    pub async fn role_binding_delete(&self, id: &str, revocations: &[AccessRevocation], now: i64) -> Result<()> {
        crate::measured::store("role_binding_delete", async {
            let mut txn = self.begin_write().await?;
            sqlx::query("DELETE FROM role_bindings WHERE id = $1").bind(id).execute(&mut *txn).await?;
            self.cluster_access_revoke_in(&mut txn, revocations, now).await?;
            self.commit_and_signal(txn).await
        })
        .await
    }
}
