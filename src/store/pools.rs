//! Pools in the store, and the pools a tenant can see: those on its own accounts and the
//! platform's that are offered to it.

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{authz_row, catalog_event, strings_from_json, value_from_json};
use super::record::{Announced, Record};
use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::domain::states::{OfferState, PoolState};
use crate::error::{Error, Result};

/// A pool as stored, with what it takes of its account.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolRow {
    /// `pool_...`.
    pub id: String,
    /// The account it is on.
    pub account_id: String,
    /// The account's owner; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// The account's provider.
    pub provider: String,
    /// A name for people.
    pub name: String,
    /// Free text.
    pub description: String,
    /// `none`, `metered` or `platform-fee`.
    pub billing_mode: String,
    /// The policy document.
    pub policy: serde_json::Value,
    /// Price of one unit per meter.
    pub prices: BTreeMap<String, i64>,
    /// Whether it takes new resources, or is deleted.
    pub state: PoolState,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
}

/// A pool as one tenant sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct VisiblePool {
    /// The pool.
    pub pool: PoolRow,
    /// The zones or regions of its account.
    pub locations: Vec<String>,
    /// On the tenant's own account.
    pub own: bool,
    /// The offer's state and excluded regions, for a platform pool.
    pub offer: Option<(OfferState, Vec<String>)>,
}

/// A pool to create.
#[derive(Clone, Debug)]
pub struct NewPool {
    /// Its id.
    pub id: String,
    /// Its account.
    pub account_id: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its billing mode.
    pub billing_mode: String,
    /// Its policy document.
    pub policy: serde_json::Value,
    /// Its prices.
    pub prices: BTreeMap<String, i64>,
    /// The creation time.
    pub now: i64,
}

/// The fields of a pool to change; `None` leaves one as it is.
#[derive(Clone, Debug, Default)]
pub struct PoolChange {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new billing mode.
    pub billing_mode: Option<String>,
    /// `active` or `archived`.
    pub state: Option<PoolState>,
    /// A new policy document.
    pub policy: Option<serde_json::Value>,
    /// New prices.
    pub prices: Option<BTreeMap<String, i64>>,
}

impl Record for PoolRow {
    const SELECT: &'static str = "SELECT p.id, p.account_id, a.tenant_id, a.provider, p.name, p.description, \
                                  p.billing_mode, p.policy, p.prices, p.state, p.version, p.created_at, \
                                  p.updated_at, p.deleted_at FROM pools p JOIN provider_accounts a ON a.id = p.account_id";
    const ID: &'static str = "p.id";
    const NOUN: &'static str = "pool";

    fn from_row(row: &AnyRow) -> Result<PoolRow> {
        Ok(read_columns!(row, PoolRow {
            id, account_id, tenant_id, provider, name, description, billing_mode, state, version, created_at,
            updated_at, deleted_at;
            policy: value_from_json(&row.try_get::<String, _>("policy")?)?,
            prices: value_from_json(&row.try_get::<String, _>("prices")?)?,
        }))
    }
}

impl Announced for PoolRow {
    const TABLE: &'static str = "pools";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({"id": self.id, "accountId": self.account_id, "name": self.name,
            "billingMode": self.billing_mode, "state": self.state, "version": self.version});
        catalog_event("pool", change, &self.id, self.tenant_id.as_deref(), self.updated_at, data)
    }
}

fn visible_from_row(row: &AnyRow) -> Result<VisiblePool> {
    let offer_state: Option<OfferState> = row.try_get("offer_state")?;
    let excluded: Option<String> = row.try_get("excluded_regions")?;
    let pool = PoolRow::from_row(row)?;
    let own = pool.tenant_id.is_some();
    Ok(VisiblePool {
        locations: strings_from_json(&row.try_get::<String, _>("locations")?)?,
        offer: match (own, offer_state) {
            (false, Some(state)) => Some((state, strings_from_json(excluded.as_deref().unwrap_or("[]"))?)),
            _ => None,
        },
        own,
        pool,
    })
}

/// Pools visible to tenant `$1`: live pools on live accounts that are the tenant's own, or the
/// platform's with an offer to it (of any state: a suspended offer still shows the pool).
const SELECT_VISIBLE: &str = "SELECT p.id, p.account_id, a.tenant_id, a.provider, p.name, p.description, \
     p.billing_mode, p.policy, p.prices, p.state, p.version, p.created_at, p.updated_at, p.deleted_at, \
     a.locations, o.state AS offer_state, o.excluded_regions \
     FROM pools p JOIN provider_accounts a ON a.id = p.account_id \
     LEFT JOIN offers o ON o.pool_id = p.id AND o.tenant_id = $1 \
     WHERE p.deleted_at IS NULL AND a.deleted_at IS NULL \
     AND (a.tenant_id = $1 OR (a.tenant_id IS NULL AND o.pool_id IS NOT NULL))";

impl Store {
    /// Creates a pool on a live account.
    pub async fn pool_create(&self, new: &NewPool) -> Result<PoolRow> {
        crate::measured::store("pool_create", async {
            let mut txn = self.begin_write().await?;
            let account: Option<Option<i64>> =
                sqlx::query_scalar("SELECT deleted_at FROM provider_accounts WHERE id = $1")
                    .bind(&new.account_id)
                    .fetch_optional(&mut *txn)
                    .await?;
            match account {
                None => return Err(Error::not_found("account", &new.account_id)),
                Some(Some(_)) => {
                    return Err(Error::invalid_state(format!("account {:?} is deleted", new.account_id))
                        .with_detail("accountId", new.account_id.as_str()));
                }
                Some(None) => {}
            }
            sqlx::query(
                "INSERT INTO pools (id, account_id, name, description, billing_mode, policy, prices, state, version, \
                 created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $9, 1, $8, $8)",
            )
            .bind(&new.id)
            .bind(&new.account_id)
            .bind(&new.name)
            .bind(&new.description)
            .bind(&new.billing_mode)
            .bind(new.policy.to_string())
            .bind(serde_json::to_string(&new.prices).expect("prices serialize"))
            .bind(new.now)
            .bind(PoolState::Active)
            .execute(&mut *txn)
            .await?;
            let pool: PoolRow = self.record_changed_in(&mut txn, &new.id, "created").await?;
            let attributes = serde_json::Map::from_iter([
                ("providerAccountId".to_owned(), pool.account_id.clone().into()),
                ("billingMode".to_owned(), pool.billing_mode.clone().into()),
            ]);
            let authz = authz_row("platform-pool", &pool.id, pool.tenant_id.as_deref(), attributes, pool.created_at);
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            self.substrate_follow_pool_in(&mut txn, &pool, new.now).await?;
            self.commit_and_signal(txn).await?;
            Ok(pool)
        })
        .await
    }

    /// The pool with `id`, deleted or not.
    pub async fn pool_fetch(&self, id: &str) -> Result<PoolRow> {
        crate::measured::store("pool_fetch", self.record_fetch(id)).await
    }

    /// Pools, oldest first, narrowed to an account and an owning tenant when those are not empty.
    pub async fn pool_list(&self, account: &str, tenant: &str, include_deleted: bool) -> Result<Vec<PoolRow>> {
        let condition =
            "($1 = '' OR p.account_id = $1) AND ($2 = '' OR a.tenant_id = $2) AND ($3 OR p.deleted_at IS NULL)";
        let bind = |q: AnyQuery<'static>| q.bind(account.to_owned()).bind(tenant.to_owned()).bind(include_deleted);
        crate::measured::store("pool_list", self.record_list(condition, "p.created_at, p.id", bind)).await
    }

    /// Applies `change` to a live pool and bumps its version.
    pub async fn pool_update(&self, id: &str, change: &PoolChange, now: i64) -> Result<PoolRow> {
        crate::measured::store("pool_update", async {
            let mut txn = self.begin_write().await?;
            let current: PoolRow = self.record_live_in(&mut txn, id).await?;
            sqlx::query(
                "UPDATE pools SET name = $2, description = $3, billing_mode = $4, state = $5, policy = $6, \
                 prices = $7, version = version + 1, updated_at = $8 WHERE id = $1",
            )
            .bind(id)
            .bind(change.name.as_ref().unwrap_or(&current.name))
            .bind(change.description.as_ref().unwrap_or(&current.description))
            .bind(change.billing_mode.as_ref().unwrap_or(&current.billing_mode))
            .bind(change.state.unwrap_or(current.state))
            .bind(change.policy.as_ref().unwrap_or(&current.policy).to_string())
            .bind(serde_json::to_string(change.prices.as_ref().unwrap_or(&current.prices)).expect("prices serialize"))
            .bind(now)
            .execute(&mut *txn)
            .await?;
            let pool = self.record_changed_in(&mut txn, id, "updated").await?;
            self.substrate_follow_pool_in(&mut txn, &pool, now).await?;
            self.commit_and_signal(txn).await?;
            Ok(pool)
        })
        .await
    }

    /// Marks a pool deleted; `INVALID_STATE` while any quota on it has bookings (resources on
    /// the pool). A deleted pool is returned unchanged.
    pub async fn pool_delete(&self, id: &str, now: i64) -> Result<PoolRow> {
        crate::measured::store("pool_delete", async {
            let mut txn = self.begin_write().await?;
            let booked: i64 =
                sqlx::query_scalar("SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM quotas WHERE pool_id = $1")
                    .bind(id)
                    .fetch_one(&mut *txn)
                    .await?;
            if booked > 0 {
                return Err(Error::invalid_state(format!(
                    "pool {id:?} has {booked} resource(s) booked on its quotas; delete them first"
                ))
                .with_detail("used", booked));
            }
            let (pool, deleted) = self.record_mark_deleted_in(&mut txn, id, now).await?;
            if deleted {
                self.substrate_follow_pool_in(&mut txn, &pool, now).await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(pool)
        })
        .await
    }

    /// The pool `id` as tenant `tenant` sees it, or `None` when the tenant cannot see it.
    pub async fn pool_visible(&self, tenant: &str, id: &str) -> Result<Option<VisiblePool>> {
        crate::measured::store("pool_visible", async {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_VISIBLE} AND p.id = $2")))
                .bind(tenant)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
            row.as_ref().map(visible_from_row).transpose()
        })
        .await
    }

    /// The pools tenant `tenant` can see, oldest first.
    pub async fn pool_list_visible(&self, tenant: &str) -> Result<Vec<VisiblePool>> {
        crate::measured::store("pool_list_visible", async {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_VISIBLE} ORDER BY p.created_at, p.id")))
                .bind(tenant)
                .fetch_all(&self.pool)
                .await?;
            rows.iter().map(visible_from_row).collect()
        })
        .await
    }
}
