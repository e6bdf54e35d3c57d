//! Principals and their API keys in the store. Only the SHA-256 of a key's secret is kept.

use sqlx::Row;

use super::{Store, conflict_on_unique};
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

impl Store {
    /// Creates a principal and its first key in one transaction.
    pub async fn principal_create_with_key(&self, principal: &PrincipalRow, key: &NewApiKey) -> Result<()> {
        let mut txn = self.begin_write().await?;
        conflict_on_unique(
            sqlx::query("INSERT INTO principals (id, kind, tenant_id, name, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(&principal.id)
                .bind(&principal.kind)
                .bind(&principal.tenant_id)
                .bind(&principal.name)
                .bind(principal.created_at)
                .execute(&mut *txn)
                .await,
            || Error::conflict(format!("principal {:?} already exists", principal.id)),
        )?;
        conflict_on_unique(
            sqlx::query(
                "INSERT INTO api_keys (id, principal_id, secret_sha256, description, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&key.id)
            .bind(&principal.id)
            .bind(&key.secret_sha256)
            .bind(&key.description)
            .bind(principal.created_at)
            .bind(key.expires_at)
            .execute(&mut *txn)
            .await,
            || Error::conflict(format!("API key {:?} already exists", key.id)),
        )?;
        txn.commit().await?;
        Ok(())
    }

    /// How many API keys exist, revoked or not.
    pub async fn api_key_count(&self) -> Result<i64> {
        Ok(sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM api_keys").fetch_one(&self.pool).await?)
    }

    /// The key with `id` and its principal, if the key exists.
    pub async fn api_key_fetch_with_principal(&self, id: &str) -> Result<Option<(ApiKeyRow, PrincipalRow)>> {
        let row = sqlx::query(
            "SELECT k.id, k.principal_id, k.secret_sha256, k.description, k.created_at, k.expires_at, k.revoked_at, \
                    p.kind, p.tenant_id, p.name, p.created_at AS principal_created_at \
             FROM api_keys k JOIN principals p ON p.id = k.principal_id WHERE k.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let key = ApiKeyRow {
            id: row.try_get("id")?,
            principal_id: row.try_get("principal_id")?,
            secret_sha256: row.try_get("secret_sha256")?,
            description: row.try_get("description")?,
            created_at: row.try_get("created_at")?,
            expires_at: row.try_get("expires_at")?,
            revoked_at: row.try_get("revoked_at")?,
        };
        let principal = PrincipalRow {
            id: key.principal_id.clone(),
            kind: row.try_get("kind")?,
            tenant_id: row.try_get("tenant_id")?,
            name: row.try_get("name")?,
            created_at: row.try_get("principal_created_at")?,
        };
        Ok(Some((key, principal)))
    }
}
