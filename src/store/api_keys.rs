//! Principals and their API keys in the store. Only the SHA-256 of a key's secret is kept.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::record::Record;
use super::resource::AnyQuery;
use super::{AccessRevocation, RoleBindingRow, Store, conflict_on_unique};
use crate::error::{Error, Result};

/// Someone who calls the API: an operator, a user or a service account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalRow {
    /// The principal's id (`prn_...`).
    pub id: String,
    /// `operator`, `user` or `service-account`.
    pub kind: String,
    /// The tenant of a tenant principal; none for operators.
    pub tenant_id: Option<String>,
    /// A name for people to read.
    pub name: String,
    /// Creation time (µs since the epoch).
    pub created_at: i64,
    /// Deletion time, once deleted: its keys no longer work.
    pub deleted_at: Option<i64>,
}

/// An API key as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeyRow {
    /// The key's id (`bck_...`).
    pub id: String,
    /// The principal the key acts as.
    pub principal_id: String,
    /// The SHA-256 of the secret, hex.
    pub secret_sha256: String,
    /// What the key is for.
    pub description: String,
    /// Creation time.
    pub created_at: i64,
    /// When the key stops working, if it does.
    pub expires_at: Option<i64>,
    /// When the key was revoked, if it was.
    pub revoked_at: Option<i64>,
}

/// A key as a call authenticates it: the key, its principal, and when the principal's tenant
/// was deleted (its keys then stop working).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyHolder {
    /// The key.
    pub key: ApiKeyRow,
    /// The principal it acts as.
    pub principal: PrincipalRow,
    /// When the principal's tenant was deleted, if it was.
    pub tenant_deleted_at: Option<i64>,
}

/// A key to create.
#[derive(Clone, Debug)]
pub struct NewApiKey {
    /// The key's id.
    pub id: String,
    /// The SHA-256 of the secret, hex.
    pub secret_sha256: String,
    /// What the key is for.
    pub description: String,
    /// When it stops working, if it does.
    pub expires_at: Option<i64>,
}

impl Record for PrincipalRow {
    const SELECT: &'static str = "SELECT id, kind, tenant_id, name, created_at, deleted_at FROM principals";
    const NOUN: &'static str = "principal";

    fn from_row(row: &AnyRow) -> Result<PrincipalRow> {
        Ok(read_columns!(row, PrincipalRow { id, kind, tenant_id, name, created_at, deleted_at }))
    }
}

impl Record for ApiKeyRow {
    const SELECT: &'static str =
        "SELECT id, principal_id, secret_sha256, description, created_at, expires_at, revoked_at FROM api_keys";
    const NOUN: &'static str = "apiKey";

    fn from_row(row: &AnyRow) -> Result<ApiKeyRow> {
        Ok(read_columns!(
            row,
            ApiKeyRow { id, principal_id, secret_sha256, description, created_at, expires_at, revoked_at }
        ))
    }
}

impl Store {
    /// Creates a principal.
    pub async fn principal_create(&self, principal: &PrincipalRow) -> Result<()> {
        crate::measured::store("principal_create", async {
            let mut txn = self.begin_write().await?;
            self.principal_insert_in(&mut txn, principal).await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    async fn principal_insert_in(&self, txn: &mut sqlx::AnyConnection, principal: &PrincipalRow) -> Result<()> {
        crate::measured::store("principal_insert_in", async {
            conflict_on_unique(
                sqlx::query(
                    "INSERT INTO principals (id, kind, tenant_id, name, created_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&principal.id)
                .bind(&principal.kind)
                .bind(&principal.tenant_id)
                .bind(&principal.name)
                .bind(principal.created_at)
                .execute(&mut *txn)
                .await,
                || Error::conflict(format!("principal {:?} already exists", principal.id)),
            )?;
            Ok(())
        })
        .await
    }

    async fn api_key_insert_in(
        &self,
        txn: &mut sqlx::AnyConnection,
        principal_id: &str,
        key: &NewApiKey,
        now: i64,
    ) -> Result<()> {
        crate::measured::store("api_key_insert_in", async {
            conflict_on_unique(
                sqlx::query(
                    "INSERT INTO api_keys (id, principal_id, secret_sha256, description, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(&key.id)
                .bind(principal_id)
                .bind(&key.secret_sha256)
                .bind(&key.description)
                .bind(now)
                .bind(key.expires_at)
                .execute(&mut *txn)
                .await,
                || Error::conflict(format!("API key {:?} already exists", key.id)),
            )?;
            Ok(())
        })
        .await
    }

    /// Creates a principal, its first key and its role bindings in one transaction.
    pub async fn principal_create_with_key(
        &self,
        principal: &PrincipalRow,
        key: &NewApiKey,
        bindings: &[RoleBindingRow],
    ) -> Result<()> {
        crate::measured::store("principal_create_with_key", async {
            let mut txn = self.begin_write().await?;
            self.principal_insert_in(&mut txn, principal).await?;
            self.api_key_insert_in(&mut txn, &principal.id, key, principal.created_at).await?;
            for binding in bindings {
                self.role_binding_insert_in(&mut txn, binding).await?;
            }
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// The principal with `id`, deleted or not.
    pub async fn principal_fetch(&self, id: &str) -> Result<Option<PrincipalRow>> {
        crate::measured::store("principal_fetch", self.record_find(id)).await
    }

    /// The principals of `tenant` (operators when none), oldest first: at most `limit` after
    /// the principal `after` (created at, id).
    pub async fn principal_list(
        &self,
        tenant: Option<&str>,
        include_deleted: bool,
        after: (i64, &str),
        limit: i64,
    ) -> Result<Vec<PrincipalRow>> {
        let condition = "(tenant_id = $1 OR ($1 IS NULL AND tenant_id IS NULL)) AND ($2 OR deleted_at IS NULL) \
                         AND (created_at > $3 OR (created_at = $3 AND id > $4))";
        let (tenant, after_id) = (tenant.map(str::to_owned), after.1.to_owned());
        let bind = |q: AnyQuery<'static>| q.bind(tenant).bind(include_deleted).bind(after.0).bind(after_id).bind(limit);
        crate::measured::store("principal_list", self.record_list(condition, "created_at, id LIMIT $5", bind)).await
    }

    /// Marks a principal deleted, revokes its keys, removes its role bindings and revokes its
    /// kubeconfig accounts (`revocations`, waking their clusters), in one transaction. A deleted
    /// principal is returned unchanged.
    pub async fn principal_delete(&self, id: &str, now: i64, revocations: &[AccessRevocation]) -> Result<()> {
        crate::measured::store("principal_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query("UPDATE principals SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL")
                .bind(id)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            if updated.rows_affected() > 0 {
                sqlx::query("UPDATE api_keys SET revoked_at = $2 WHERE principal_id = $1 AND revoked_at IS NULL")
                    .bind(id)
                    .bind(now)
                    .execute(&mut *txn)
                    .await?;
                sqlx::query("DELETE FROM role_bindings WHERE principal_id = $1").bind(id).execute(&mut *txn).await?;
                self.cluster_access_revoke_in(&mut txn, revocations, now).await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// Creates a key for an existing principal.
    pub async fn api_key_create(&self, principal_id: &str, key: &NewApiKey, now: i64) -> Result<ApiKeyRow> {
        crate::measured::store("api_key_create", async {
            let mut txn = self.begin_write().await?;
            self.api_key_insert_in(&mut txn, principal_id, key, now).await?;
            self.commit(txn).await?;
            self.api_key_fetch(&key.id).await?.ok_or_else(|| Error::internal("a key vanished after its insert"))
        })
        .await
    }

    /// The key with `id`.
    pub async fn api_key_fetch(&self, id: &str) -> Result<Option<ApiKeyRow>> {
        crate::measured::store("api_key_fetch", self.record_find(id)).await
    }

    /// A principal's keys, oldest first: at most `limit` after the key `after` (created at, id).
    pub async fn api_key_list(&self, principal_id: &str, after: (i64, &str), limit: i64) -> Result<Vec<ApiKeyRow>> {
        let condition = "principal_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))";
        let bind =
            |q: AnyQuery<'static>| q.bind(principal_id.to_owned()).bind(after.0).bind(after.1.to_owned()).bind(limit);
        crate::measured::store("api_key_list", self.record_list(condition, "created_at, id LIMIT $4", bind)).await
    }

    /// Revokes a key; a revoked key is left as it is.
    pub async fn api_key_revoke(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("api_key_revoke", async {
            sqlx::query("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
                .bind(id)
                .bind(now)
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// Makes a key expire now (tests of expiry, and an operator's emergency stop).
    pub async fn api_key_expire_now(&self, id: &str) -> Result<()> {
        crate::measured::store("api_key_expire_now", async {
            sqlx::query("UPDATE api_keys SET expires_at = $2 WHERE id = $1")
                .bind(id)
                .bind(super::now_micros())
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// How many API keys exist, revoked or not.
    pub async fn api_key_count(&self) -> Result<i64> {
        crate::measured::store("api_key_count", async {
            Ok(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM api_keys").fetch_one(&self.pool).await?)
        })
        .await
    }

    /// The authentication generation: bumped by every write to keys, principals and role
    /// bindings (triggers of migration 20), read by every call to know its cached caller holds.
    pub async fn auth_generation(&self) -> Result<i64> {
        crate::measured::store("auth_generation", async {
            Ok(sqlx::query_scalar::<_, i64>("SELECT generation FROM auth_generation WHERE id = 1")
                .fetch_one(&self.pool)
                .await?)
        })
        .await
    }

    /// The key with `id` and its principal, if the key exists.
    pub async fn api_key_fetch_with_principal(&self, id: &str) -> Result<Option<(ApiKeyRow, PrincipalRow)>> {
        Ok(self.api_key_fetch_for_call(id).await?.map(|holder| (holder.key, holder.principal)))
    }

    /// The key with `id`, its principal and whether the principal's tenant was deleted, if the
    /// key exists: one query, as a call makes it when its caller is not cached.
    pub async fn api_key_fetch_for_call(&self, id: &str) -> Result<Option<KeyHolder>> {
        crate::measured::store("api_key_fetch_for_call", async {
            let row = sqlx::query(
                "SELECT k.id, k.principal_id, k.secret_sha256, k.description, k.created_at, k.expires_at, \
                        k.revoked_at, p.kind, p.tenant_id, p.name, p.created_at AS principal_created_at, p.deleted_at, \
                        t.deleted_at AS tenant_deleted_at \
                 FROM api_keys k JOIN principals p ON p.id = k.principal_id \
                 LEFT JOIN tenants t ON t.id = p.tenant_id WHERE k.id = $1",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let key = ApiKeyRow::from_row(&row)?;
            let principal = PrincipalRow {
                id: key.principal_id.clone(),
                kind: row.try_get("kind")?,
                tenant_id: row.try_get("tenant_id")?,
                name: row.try_get("name")?,
                created_at: row.try_get("principal_created_at")?,
                deleted_at: row.try_get("deleted_at")?,
            };
            Ok(Some(KeyHolder { key, principal, tenant_deleted_at: row.try_get("tenant_deleted_at")? }))
        })
        .await
    }

    /// Bumps the authentication generation inside `txn`, for a write that ends access without
    /// touching keys, principals or bindings (whose triggers bump it): a tenant's deletion.
    pub(super) async fn auth_generation_bump_in(&self, txn: &mut sqlx::AnyConnection) -> Result<()> {
        sqlx::query("UPDATE auth_generation SET generation = generation + 1 WHERE id = 1").execute(&mut *txn).await?;
        Ok(())
    }
}
