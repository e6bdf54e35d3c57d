//! Budgets in the store, and a tenant's spend in a calendar month: the usage ledger's
//! quantities times the prices of the pools they were used on (rows of no pool, or of a meter
//! the pool prices not, cost nothing).

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{catalog_event, tenant_require_active_in, value_from_json};
use super::record::{Announced, Record};
use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::error::{Error, Result};

/// A budget as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetRow {
    /// `bud_...`.
    pub id: String,
    /// The tenant it limits.
    pub tenant_id: String,
    /// A name for people.
    pub name: String,
    /// The most the tenant may spend in a calendar month.
    pub monthly_limit: i64,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
}

/// A budget to create.
#[derive(Clone, Debug)]
pub struct NewBudget {
    /// Its id.
    pub id: String,
    /// The tenant.
    pub tenant_id: String,
    /// Its name.
    pub name: String,
    /// The monthly limit.
    pub monthly_limit: i64,
    /// The creation time.
    pub now: i64,
}

/// The fields of a budget to change; `None` leaves one as it is.
#[derive(Clone, Debug, Default)]
pub struct BudgetChange {
    /// A new name.
    pub name: Option<String>,
    /// A new monthly limit.
    pub monthly_limit: Option<i64>,
}

impl Record for BudgetRow {
    const SELECT: &'static str =
        "SELECT id, tenant_id, name, monthly_limit, version, created_at, updated_at FROM budgets";
    const NOUN: &'static str = "budget";

    fn from_row(row: &AnyRow) -> Result<BudgetRow> {
        Ok(read_columns!(row, BudgetRow { id, tenant_id, name, monthly_limit, version, created_at, updated_at }))
    }
}

impl Announced for BudgetRow {
    const TABLE: &'static str = "budgets";

    /// Budgets are removed, not marked.
    fn deleted_at(&self) -> Option<i64> {
        None
    }

    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({"id": self.id, "tenantId": self.tenant_id, "name": self.name,
            "monthlyLimit": self.monthly_limit, "version": self.version});
        catalog_event("budget", change, &self.id, Some(&self.tenant_id), self.updated_at, data)
    }
}

/// The start and end (µs, end excluded) of the calendar month (UTC) that `micros` falls in.
pub fn month_bounds(micros: i64) -> (i64, i64) {
    const DAY: i64 = 86_400_000_000;
    let (year, month, _) = civil_from_days(micros.div_euclid(DAY));
    let (next_year, next_month) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
    (days_from_civil(year, month, 1) * DAY, days_from_civil(next_year, next_month, 1) * DAY)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

impl Store {
    /// Creates a budget for a live tenant.
    pub async fn budget_create(&self, new: &NewBudget) -> Result<BudgetRow> {
        crate::measured::store("budget_create", async {
            let mut txn = self.begin_write().await?;
            tenant_require_active_in(&mut txn, &new.tenant_id).await?;
            let insert = sqlx::query(
                "INSERT INTO budgets (id, tenant_id, name, monthly_limit, version, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, 1, $5, $5)",
            );
            let insert = insert.bind(&new.id).bind(&new.tenant_id).bind(&new.name).bind(new.monthly_limit);
            insert.bind(new.now).execute(&mut *txn).await?;
            let budget = self.record_changed_in(&mut txn, &new.id, "created").await?;
            self.commit_and_signal(txn).await?;
            Ok(budget)
        })
        .await
    }

    /// One budget.
    pub async fn budget_fetch(&self, id: &str) -> Result<BudgetRow> {
        crate::measured::store("budget_fetch", self.record_fetch(id)).await
    }

    /// Budgets, oldest first, of one tenant (or all when `tenant` is empty).
    pub async fn budget_list(&self, tenant: &str) -> Result<Vec<BudgetRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(tenant.to_owned());
        crate::measured::store("budget_list", self.record_list("($1 = '' OR tenant_id = $1)", "created_at, id", bind))
            .await
    }

    /// Applies `change` to a budget and bumps its version.
    pub async fn budget_update(&self, id: &str, change: &BudgetChange, now: i64) -> Result<BudgetRow> {
        crate::measured::store("budget_update", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE budgets SET name = COALESCE($2, name), monthly_limit = COALESCE($3, monthly_limit), \
                 version = version + 1, updated_at = $4 WHERE id = $1",
            )
            .bind(id)
            .bind(&change.name)
            .bind(change.monthly_limit)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::not_found("budget", id));
            }
            let budget = self.record_changed_in(&mut txn, id, "updated").await?;
            self.commit_and_signal(txn).await?;
            Ok(budget)
        })
        .await
    }

    /// Removes a budget and returns it as it was.
    pub async fn budget_delete(&self, id: &str, now: i64) -> Result<BudgetRow> {
        crate::measured::store("budget_delete", async {
            let mut txn = self.begin_write().await?;
            let budget: BudgetRow = self.record_fetch_in(&mut txn, id).await?;
            let removed = sqlx::query("DELETE FROM budgets WHERE id = $1").bind(id).execute(&mut *txn).await?;
            if removed.rows_affected() == 0 {
                // Another delete removed it meanwhile.
                return Err(Error::not_found("budget", id));
            }
            let mut event = budget.event("deleted");
            event.time = now;
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(budget)
        })
        .await
    }

    /// What `tenant` spent in the calendar month (UTC) that `now` falls in.
    pub async fn budget_month_spend(&self, tenant: &str, now: i64) -> Result<i64> {
        crate::measured::store("budget_month_spend", async {
            let (start, end) = month_bounds(now);
            let rows = sqlx::query(
                "SELECT l.meter, p.prices, CAST(SUM(l.quantity) AS BIGINT) AS quantity \
                 FROM usage_ledger l JOIN pools p ON p.id = l.pool_id \
                 WHERE l.tenant_id = $1 AND l.hour >= $2 AND l.hour < $3 GROUP BY l.pool_id, l.meter, p.prices",
            )
            .bind(tenant)
            .bind(start)
            .bind(end)
            .fetch_all(&self.pool)
            .await?;
            let mut spend: i64 = 0;
            for row in rows {
                let prices: BTreeMap<String, i64> = value_from_json(&row.try_get::<String, _>("prices")?)?;
                let meter: String = row.try_get("meter")?;
                let quantity: i64 = row.try_get("quantity")?;
                spend = spend.saturating_add(quantity.saturating_mul(prices.get(&meter).copied().unwrap_or(0)));
            }
            Ok(spend)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_start_and_end_at_midnight_utc() {
        // 2026-11-29T10:36:11Z
        let now = 1_795_948_571_000_000;
        assert_eq!(month_bounds(now), (1_793_491_200_000_000, 1_796_083_200_000_000));
        // December rolls into January; February of a leap year has 29 days.
        let december = days_from_civil(2026, 12, 15) * 86_400_000_000;
        assert_eq!(month_bounds(december).1, days_from_civil(2027, 1, 1) * 86_400_000_000);
        assert_eq!(days_from_civil(2028, 3, 1) - days_from_civil(2028, 2, 1), 29);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }
}
