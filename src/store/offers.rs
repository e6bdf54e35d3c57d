//! Offers in the store: a platform pool offered to a tenant, keyed by (pool, tenant).

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{catalog_event, strings_from_json, strings_to_json, tenant_require_active_in};
use super::{Store, conflict_on_unique};
use crate::domain::states::OfferState;
use crate::error::{Error, Result};

/// An offer as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfferRow {
    /// The pool offered.
    pub pool_id: String,
    /// The tenant it is offered to.
    pub tenant_id: String,
    /// Whether the tenant may make new resources on the pool.
    pub state: OfferState,
    /// Regions where the tenant may make nothing.
    pub excluded_regions: Vec<String>,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
}

/// An offer to create.
#[derive(Clone, Debug)]
pub struct NewOffer {
    /// The pool.
    pub pool_id: String,
    /// The tenant.
    pub tenant_id: String,
    /// Whether the tenant may make new resources on the pool.
    pub state: OfferState,
    /// Excluded regions.
    pub excluded_regions: Vec<String>,
    /// The creation time.
    pub now: i64,
}

/// The fields of an offer to change; `None` leaves one as it is.
#[derive(Clone, Debug, Default)]
pub struct OfferChange {
    /// A new state.
    pub state: Option<OfferState>,
    /// New excluded regions.
    pub excluded_regions: Option<Vec<String>>,
}

const COLUMNS: &str = "pool_id, tenant_id, state, excluded_regions, version, created_at, updated_at";

fn offer_from_row(row: &AnyRow) -> Result<OfferRow> {
    Ok(read_columns!(row, OfferRow {
        pool_id, tenant_id, state, version, created_at, updated_at;
        excluded_regions: strings_from_json(&row.try_get::<String, _>("excluded_regions")?)?,
    }))
}

fn offer_not_found(pool: &str, tenant: &str) -> Error {
    Error::new(crate::error::Code::NotFound, format!("pool {pool:?} is not offered to tenant {tenant:?}"))
        .with_detail("resource", "offer")
        .with_detail("poolId", pool)
        .with_detail("tenantId", tenant)
}

/// The offer of `pool` to `tenant`, read through `db` (the pool or a transaction).
async fn offer_find<'c>(
    db: impl sqlx::Executor<'c, Database = sqlx::Any>,
    pool: &str,
    tenant: &str,
) -> Result<OfferRow> {
    let select = format!("SELECT {COLUMNS} FROM offers WHERE pool_id = $1 AND tenant_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(select)).bind(pool).bind(tenant).fetch_optional(db).await?;
    row.as_ref().map(offer_from_row).transpose()?.ok_or_else(|| offer_not_found(pool, tenant))
}

impl Store {
    /// Offers a pool to a live tenant. The service has checked that the pool is a live platform
    /// pool; `CONFLICT` when the offer exists.
    pub async fn offer_create(&self, new: &NewOffer) -> Result<OfferRow> {
        crate::measured::store("offer_create", async {
            let mut txn = self.begin_write().await?;
            tenant_require_active_in(&mut txn, &new.tenant_id).await?;
            let row = conflict_on_unique(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO offers (pool_id, tenant_id, state, excluded_regions, version, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, 1, $5, $5) RETURNING {COLUMNS}"
                )))
                .bind(&new.pool_id)
                .bind(&new.tenant_id)
                .bind(new.state)
                .bind(strings_to_json(&new.excluded_regions))
                .bind(new.now)
                .fetch_one(&mut *txn)
                .await,
                || {
                    Error::conflict(format!("pool {:?} is already offered to tenant {:?}", new.pool_id, new.tenant_id))
                        .with_detail("poolId", new.pool_id.as_str())
                        .with_detail("tenantId", new.tenant_id.as_str())
                },
            )?;
            let offer = offer_from_row(&row)?;
            self.event_append_in(&mut txn, &offer_event("created", &offer)).await?;
            self.commit_and_signal(txn).await?;
            Ok(offer)
        })
        .await
    }

    /// The offer of `pool` to `tenant`.
    pub async fn offer_fetch(&self, pool: &str, tenant: &str) -> Result<OfferRow> {
        crate::measured::store("offer_fetch", offer_find(&self.pool, pool, tenant)).await
    }

    /// Offers, oldest first, narrowed to a pool and a tenant when those are not empty.
    pub async fn offer_list(&self, pool: &str, tenant: &str) -> Result<Vec<OfferRow>> {
        crate::measured::store("offer_list", async {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COLUMNS} FROM offers WHERE ($1 = '' OR pool_id = $1) AND ($2 = '' OR tenant_id = $2) \
                 ORDER BY created_at, pool_id, tenant_id"
            )))
            .bind(pool)
            .bind(tenant)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(offer_from_row).collect()
        })
        .await
    }

    /// Applies `change` to an offer and bumps its version.
    pub async fn offer_update(&self, pool: &str, tenant: &str, change: &OfferChange, now: i64) -> Result<OfferRow> {
        crate::measured::store("offer_update", async {
            let mut txn = self.begin_write().await?;
            let current = offer_find(&mut *txn, pool, tenant).await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE offers SET state = $3, excluded_regions = $4, version = version + 1, updated_at = $5 \
                 WHERE pool_id = $1 AND tenant_id = $2 RETURNING {COLUMNS}"
            )))
            .bind(pool)
            .bind(tenant)
            .bind(change.state.unwrap_or(current.state))
            .bind(strings_to_json(change.excluded_regions.as_ref().unwrap_or(&current.excluded_regions)))
            .bind(now)
            .fetch_one(&mut *txn)
            .await?;
            let offer = offer_from_row(&row)?;
            self.event_append_in(&mut txn, &offer_event("updated", &offer)).await?;
            self.commit_and_signal(txn).await?;
            Ok(offer)
        })
        .await
    }

    /// Withdraws an offer and returns it as it was.
    pub async fn offer_delete(&self, pool: &str, tenant: &str, now: i64) -> Result<OfferRow> {
        crate::measured::store("offer_delete", async {
            let mut txn = self.begin_write().await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DELETE FROM offers WHERE pool_id = $1 AND tenant_id = $2 RETURNING {COLUMNS}"
            )))
            .bind(pool)
            .bind(tenant)
            .fetch_optional(&mut *txn)
            .await?;
            let offer = row.as_ref().map(offer_from_row).transpose()?.ok_or_else(|| offer_not_found(pool, tenant))?;
            let mut event = offer_event("deleted", &offer);
            event.time = now;
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(offer)
        })
        .await
    }
}

fn offer_event(change: &str, offer: &OfferRow) -> super::NewEvent {
    catalog_event(
        "offer",
        change,
        &offer.pool_id,
        Some(&offer.tenant_id),
        offer.updated_at,
        serde_json::json!({"poolId": offer.pool_id, "tenantId": offer.tenant_id, "state": offer.state,
            "excludedRegions": offer.excluded_regions, "version": offer.version}),
    )
}
