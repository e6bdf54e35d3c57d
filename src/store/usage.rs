//! Usage: what can be billed (`usage_billables`, written by resource modules with the resource)
//! and the ledger the metering pass fills, one row per meter, resource and hour. The ledger's
//! primary key makes a pass run twice, or by two workers at once, bill nothing twice.

use sqlx::{Any, Row, Transaction};

use super::Store;
use crate::error::Result;

/// An hour in microseconds.
pub const HOUR_MICROS: i64 = 3_600_000_000;

/// The start of the hour `micros` falls in.
pub fn hour_floor(micros: i64) -> i64 {
    micros.div_euclid(HOUR_MICROS) * HOUR_MICROS
}

/// A ledger row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageRow {
    /// `kubernetes.cluster.hours`.
    pub meter: String,
    /// The billed resource.
    pub resource_id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// The hour's start (µs).
    pub hour: i64,
    /// Units billed for that hour.
    pub quantity: i64,
}

impl Store {
    /// Starts billing `resource_id` on `meter` from `start`, inside the caller's transaction.
    pub async fn usage_billable_start_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        meter: &str,
        resource_id: &str,
        tenant_id: &str,
        start: i64,
    ) -> Result<()> {
        crate::measured::store("usage_billable_start_in", async {
            self.usage_billable_start_on_pool_in(txn, meter, resource_id, tenant_id, None, start).await
        })
        .await
    }

    /// Starts billing `resource_id` of `pool_id` on `meter` from `start`, inside the caller's
    /// transaction. Its ledger rows carry the pool, whose prices the tenant's budgets apply.
    pub async fn usage_billable_start_on_pool_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        meter: &str,
        resource_id: &str,
        tenant_id: &str,
        pool_id: Option<&str>,
        start: i64,
    ) -> Result<()> {
        crate::measured::store("usage_billable_start_on_pool_in", async {
            sqlx::query(
                "INSERT INTO usage_billables (meter, resource_id, tenant_id, pool_id, billing_start, billed_until) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (meter, resource_id) DO NOTHING",
            )
            .bind(meter)
            .bind(resource_id)
            .bind(tenant_id)
            .bind(pool_id)
            .bind(start)
            .bind(hour_floor(start))
            .execute(&mut **txn)
            .await?;
            Ok(())
        })
        .await
    }

    /// Ends billing of `resource_id` on `meter` at `end`, inside the caller's transaction.
    pub async fn usage_billable_end_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        meter: &str,
        resource_id: &str,
        end: i64,
    ) -> Result<()> {
        crate::measured::store("usage_billable_end_in", async {
            sqlx::query(
                "UPDATE usage_billables SET billing_end = $3 WHERE meter = $1 AND resource_id = $2 \
                 AND billing_end IS NULL",
            )
            .bind(meter)
            .bind(resource_id)
            .bind(end)
            .execute(&mut **txn)
            .await?;
            Ok(())
        })
        .await
    }

    /// Starts and, if `end` is given, ends billing in one go (tests and imports).
    pub async fn usage_billable_record(
        &self,
        meter: &str,
        resource_id: &str,
        tenant_id: &str,
        start: i64,
        end: Option<i64>,
    ) -> Result<()> {
        crate::measured::store("usage_billable_record", async {
            self.usage_billable_record_on_pool(meter, resource_id, tenant_id, None, start, end).await
        })
        .await
    }

    /// As [`Store::usage_billable_record`], for a resource of `pool_id`.
    pub async fn usage_billable_record_on_pool(
        &self,
        meter: &str,
        resource_id: &str,
        tenant_id: &str,
        pool_id: Option<&str>,
        start: i64,
        end: Option<i64>,
    ) -> Result<()> {
        crate::measured::store("usage_billable_record_on_pool", async {
            let mut txn = self.begin_write().await?;
            self.usage_billable_start_on_pool_in(&mut txn, meter, resource_id, tenant_id, pool_id, start).await?;
            if let Some(end) = end {
                self.usage_billable_end_in(&mut txn, meter, resource_id, end).await?;
            }
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// The metering pass: bills each billable one unit for every hour it existed in, from its
    /// billing start to its end, for hours that are over (or in which it ended) by `now`.
    /// Returns the ledger rows it added.
    pub async fn usage_meter(&self, now: i64) -> Result<u64> {
        crate::measured::store("usage_meter", async {
            let current_hour = hour_floor(now);
            let rows = sqlx::query(
                "SELECT meter, resource_id, tenant_id, pool_id, billing_start, billing_end, billed_until \
                 FROM usage_billables WHERE billed_until < $1 AND (billing_end IS NULL OR billed_until < billing_end)",
            )
            .bind(current_hour)
            .fetch_all(&self.pool)
            .await?;
            let mut added = 0;
            for row in rows {
                let meter: String = row.try_get("meter")?;
                let resource_id: String = row.try_get("resource_id")?;
                let tenant_id: String = row.try_get("tenant_id")?;
                let pool_id: Option<String> = row.try_get("pool_id")?;
                let billed_until: i64 = row.try_get("billed_until")?;
                let end: Option<i64> = row.try_get("billing_end")?;
                // Up to the hour that is still running, or through the hour the resource ended in.
                let until = match end {
                    Some(end) => (hour_floor(end - 1) + HOUR_MICROS).min(current_hour),
                    None => current_hour,
                };
                let mut txn = self.begin_write().await?;
                let mut hour = billed_until;
                while hour < until {
                    added += sqlx::query(
                        "INSERT INTO usage_ledger (meter, resource_id, tenant_id, hour, quantity, recorded_at, \
                         pool_id) VALUES ($1, $2, $3, $4, 1, $5, $6) ON CONFLICT (meter, resource_id, hour) DO NOTHING",
                    )
                    .bind(&meter)
                    .bind(&resource_id)
                    .bind(&tenant_id)
                    .bind(hour)
                    .bind(now)
                    .bind(&pool_id)
                    .execute(&mut *txn)
                    .await?
                    .rows_affected();
                    hour += HOUR_MICROS;
                }
                sqlx::query(
                    "UPDATE usage_billables SET billed_until = $3 WHERE meter = $1 AND resource_id = $2 \
                     AND billed_until < $3",
                )
                .bind(&meter)
                .bind(&resource_id)
                .bind(until)
                .execute(&mut *txn)
                .await?;
                self.commit(txn).await?;
            }
            Ok(added)
        })
        .await
    }

    /// Ledger rows of hours in `[from, to)`, of one tenant (or all: `None`) and one meter (or all:
    /// empty), by hour, meter and resource.
    pub async fn usage_list(&self, tenant_id: Option<&str>, meter: &str, from: i64, to: i64) -> Result<Vec<UsageRow>> {
        crate::measured::store("usage_list", async {
            let rows = sqlx::query(
                "SELECT meter, resource_id, tenant_id, hour, quantity FROM usage_ledger \
                 WHERE ($1 = '' OR tenant_id = $1) AND ($2 = '' OR meter = $2) AND hour >= $3 AND hour < $4 \
                 ORDER BY hour, meter, resource_id LIMIT 10000",
            )
            .bind(tenant_id.unwrap_or(""))
            .bind(meter)
            .bind(from)
            .bind(to)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| Ok(read_columns!(row, UsageRow { meter, resource_id, tenant_id, hour, quantity })))
                .collect()
        })
        .await
    }
}
