//! Provider accounts in the store. The credentials column holds ciphertext only (see
//! [`crate::secrets`]); no row type carries it, so no view can show it. Reconcilers open it with
//! [`Store::account_credentials`].

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{authz_row, catalog_event, strings_from_json, strings_to_json, tenant_require_active_in};
use super::record::{Announced, Record};
use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::error::{Error, Result};
use crate::secrets::{Secret, SecretKey};

/// An account as stored, without its credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    /// `acct_...`.
    pub id: String,
    /// The owning tenant; `None` for the platform's.
    pub tenant_id: Option<String>,
    /// `gke` or `digitalocean`.
    pub provider: String,
    /// A name for people.
    pub name: String,
    /// Free text.
    pub description: String,
    /// The provider API's base URL override; empty for the provider's own.
    pub endpoint: String,
    /// Zones (GKE) or regions (DigitalOcean).
    pub locations: Vec<String>,
    /// `active` or `deleted`.
    pub state: String,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
    /// Its own call windows (JSON), empty for the provider's published ones.
    pub rate_limits: String,
    /// `closed`, or `open` while the provider refuses its credentials.
    pub breaker_state: String,
    /// Since when the breaker is open (µs).
    pub breaker_since: Option<i64>,
    /// The provider's words when it refused the credentials.
    pub breaker_message: String,
    /// When the open breaker lets its next probe call through (µs).
    pub breaker_probe_at: Option<i64>,
}

/// An account to create.
#[derive(Clone)]
pub struct NewAccount {
    /// Its id (the credentials are sealed to it).
    pub id: String,
    /// The owning tenant; `None` for the platform.
    pub tenant_id: Option<String>,
    /// `gke` or `digitalocean`.
    pub provider: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The endpoint override.
    pub endpoint: String,
    /// Zones or regions.
    pub locations: Vec<String>,
    /// The credentials, sealed to `id`.
    pub sealed_credentials: String,
    /// Its own call windows (JSON), empty for the provider's.
    pub rate_limits: String,
    /// The creation time.
    pub now: i64,
}

impl std::fmt::Debug for NewAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewAccount").field("id", &self.id).field("provider", &self.provider).finish_non_exhaustive()
    }
}

/// The fields of an account to change; `None` leaves one as it is.
#[derive(Clone, Default)]
pub struct AccountChange {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new endpoint.
    pub endpoint: Option<String>,
    /// New zones or regions.
    pub locations: Option<Vec<String>>,
    /// New credentials, sealed to the account's id.
    pub sealed_credentials: Option<String>,
    /// New call windows (JSON; empty: the provider's).
    pub rate_limits: Option<String>,
}

impl std::fmt::Debug for AccountChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountChange").field("name", &self.name).finish_non_exhaustive()
    }
}

/// What a provider adapter needs of an account: where to call and as whom.
#[derive(Clone, Debug)]
pub struct AccountCredentials {
    /// The account.
    pub id: String,
    /// `gke` or `digitalocean`.
    pub provider: String,
    /// The endpoint override; empty for the provider's own.
    pub endpoint: String,
    /// Zones or regions.
    pub locations: Vec<String>,
    /// The opened credentials: a service-account JSON key or an API token.
    pub credentials: Secret,
    /// The account's version they were read at.
    pub version: i64,
}

impl Record for AccountRow {
    const SELECT: &'static str = "SELECT id, tenant_id, provider, name, description, endpoint, locations, state, \
                                  version, created_at, updated_at, deleted_at, rate_limits, breaker_state, breaker_since, \
                                  breaker_message, breaker_probe_at FROM provider_accounts";
    const NOUN: &'static str = "account";

    fn from_row(row: &AnyRow) -> Result<AccountRow> {
        Ok(read_columns!(row, AccountRow {
            id, tenant_id, provider, name, description, endpoint, state, version, created_at, updated_at, deleted_at,
            rate_limits, breaker_state, breaker_since, breaker_message, breaker_probe_at;
            locations: strings_from_json(&row.try_get::<String, _>("locations")?)?,
        }))
    }
}

impl Announced for AccountRow {
    const TABLE: &'static str = "provider_accounts";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    /// Never with its credentials.
    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({"id": self.id, "tenantId": self.tenant_id, "provider": self.provider,
            "name": self.name, "endpoint": self.endpoint, "locations": self.locations, "state": self.state,
            "version": self.version, "breaker": self.breaker_state});
        catalog_event("account", change, &self.id, self.tenant_id.as_deref(), self.updated_at, data)
    }
}

impl Store {
    /// Creates an account, of the platform or of a live tenant.
    pub async fn account_create(&self, new: &NewAccount) -> Result<AccountRow> {
        crate::measured::store("account_create", async {
            let mut txn = self.begin_write().await?;
            if let Some(tenant) = &new.tenant_id {
                tenant_require_active_in(&mut txn, tenant).await?;
            }
            sqlx::query(
                "INSERT INTO provider_accounts (id, tenant_id, provider, name, description, endpoint, locations, \
                 credentials, state, version, created_at, updated_at, rate_limits) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', 1, $9, $9, $10)",
            )
            .bind(&new.id)
            .bind(&new.tenant_id)
            .bind(&new.provider)
            .bind(&new.name)
            .bind(&new.description)
            .bind(&new.endpoint)
            .bind(strings_to_json(&new.locations))
            .bind(&new.sealed_credentials)
            .bind(new.now)
            .bind(&new.rate_limits)
            .execute(&mut *txn)
            .await?;
            let attributes = serde_json::Map::from_iter([("provider".to_owned(), new.provider.clone().into())]);
            let authz = authz_row("platform-account", &new.id, new.tenant_id.as_deref(), attributes, new.now);
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            let account = self.record_changed_in(&mut txn, &new.id, "created").await?;
            self.commit_and_signal(txn).await?;
            Ok(account)
        })
        .await
    }

    /// The account with `id`, deleted or not.
    pub async fn account_fetch(&self, id: &str) -> Result<AccountRow> {
        crate::measured::store("account_fetch", self.record_fetch(id)).await
    }

    /// Accounts, oldest first: of one tenant (`tenant` not empty), of the platform
    /// (`platform_only`), or all.
    pub async fn account_list(
        &self,
        tenant: &str,
        platform_only: bool,
        include_deleted: bool,
    ) -> Result<Vec<AccountRow>> {
        let condition = "($1 = '' OR tenant_id = $1) AND (NOT $2 OR tenant_id IS NULL) AND ($3 OR deleted_at IS NULL)";
        let bind = |q: AnyQuery<'static>| q.bind(tenant.to_owned()).bind(platform_only).bind(include_deleted);
        crate::measured::store("account_list", self.record_list(condition, "created_at, id", bind)).await
    }

    /// Applies `change` to a live account and bumps its version. New credentials close its
    /// breaker; any change wakes every resource on the account, so a pass waiting out a refusal
    /// tries again at once with what changed.
    pub async fn account_update(&self, id: &str, change: &AccountChange, now: i64) -> Result<AccountRow> {
        crate::measured::store("account_update", async {
            let mut txn = self.begin_write().await?;
            let current: AccountRow = self.record_live_in(&mut txn, id).await?;
            sqlx::query(
                "UPDATE provider_accounts SET name = $2, description = $3, endpoint = $4, locations = $5, \
                 credentials = COALESCE($6, credentials), version = version + 1, updated_at = $7, \
                 rate_limits = $8, paced_until = NULL, \
                 breaker_state = CASE WHEN $6 IS NULL THEN breaker_state ELSE 'closed' END, \
                 breaker_since = CASE WHEN $6 IS NULL THEN breaker_since ELSE NULL END, \
                 breaker_message = CASE WHEN $6 IS NULL THEN breaker_message ELSE '' END, \
                 breaker_probe_at = CASE WHEN $6 IS NULL THEN breaker_probe_at ELSE NULL END \
                 WHERE id = $1",
            )
            .bind(id)
            .bind(change.name.as_ref().unwrap_or(&current.name))
            .bind(change.description.as_ref().unwrap_or(&current.description))
            .bind(change.endpoint.as_ref().unwrap_or(&current.endpoint))
            .bind(strings_to_json(change.locations.as_ref().unwrap_or(&current.locations)))
            .bind(&change.sealed_credentials)
            .bind(now)
            .bind(change.rate_limits.as_ref().unwrap_or(&current.rate_limits))
            .execute(&mut *txn)
            .await?;
            self.work_wake_account_in(&mut txn, id, now).await?;
            let account: AccountRow = self.record_fetch_in(&mut txn, id).await?;
            let mut event = account.event("updated");
            // Say that the credentials changed, never what they are.
            event.data["credentialsChanged"] = change.sealed_credentials.is_some().into();
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(account)
        })
        .await
    }

    /// Marks an account deleted; `INVALID_STATE` while pools that are not deleted are on it. A
    /// deleted account is returned unchanged.
    pub async fn account_delete(&self, id: &str, now: i64) -> Result<AccountRow> {
        crate::measured::store("account_delete", async {
            let mut txn = self.begin_write().await?;
            let pools: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM pools WHERE account_id = $1 AND deleted_at IS NULL")
                    .bind(id)
                    .fetch_one(&mut *txn)
                    .await?;
            if pools > 0 {
                return Err(Error::invalid_state(format!(
                    "account {id:?} still has {pools} pool(s); delete them first"
                ))
                .with_detail("pools", pools));
            }
            self.record_delete(txn, id, now).await
        })
        .await
    }

    /// An account's endpoint and opened credentials, for the provider adapters of reconcilers.
    pub async fn account_credentials(&self, key: &SecretKey, id: &str) -> Result<AccountCredentials> {
        crate::measured::store("account_credentials", async {
            let row = sqlx::query(
                "SELECT provider, endpoint, locations, credentials, version FROM provider_accounts WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| Error::not_found("account", id))?;
            let sealed: String = row.try_get("credentials")?;
            Ok(AccountCredentials {
                id: id.to_owned(),
                provider: row.try_get("provider")?,
                endpoint: row.try_get("endpoint")?,
                locations: strings_from_json(&row.try_get::<String, _>("locations")?)?,
                credentials: key.open(&sealed, id)?,
                version: row.try_get("version")?,
            })
        })
        .await
    }
}
