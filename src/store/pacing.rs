//! The shared side of pacing provider calls: each account's call budget (token buckets, see
//! [`crate::domain::rate_limits`]), the wait a provider asked for, and the account's breaker,
//! held in the store so every worker process spends the same budget and stops on the same
//! refusal. One short write transaction per take (a take lets out one call or several): the
//! account row, which holds the buckets, is locked for it, so takes of one account are
//! serialised across processes while other accounts go on.

use sqlx::Row;

use super::{Backend, Store};
use crate::domain::rate_limits::{self, PROBE_EVERY_MICROS};
use crate::error::{Error, Result};

/// How long the one call let out after a provider's hold keeps the others waiting for its
/// answer.
const CAUTIOUS_MICROS: i64 = 2_000_000;

/// The account's breaker as a take found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenBreaker {
    /// Since when calls are refused (µs).
    pub since: i64,
    /// The provider's words when it refused the credentials.
    pub message: String,
    /// When the next probe call may go out (µs).
    pub probe_at: i64,
}

/// What a take decided for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `granted` calls may go out now (one, as the breaker's probe, when `probe`).
    Go {
        /// How many calls were spent from the budget.
        granted: u32,
        /// Whether this call is the probe of an open breaker.
        probe: bool,
        /// Whether the provider held the account's calls and this one call tries whether it
        /// lets them out again (its answer ends the hold, or renews it).
        cautious: bool,
    },
    /// No budget yet: ask again after this many µs.
    Wait(i64),
    /// The account's credentials were refused and the probe is not due.
    Refused(OpenBreaker),
}

/// A take's answer: the verdict, the account's version, and its sealed credentials when they
/// changed since the version the caller last saw.
#[derive(Clone, Debug)]
pub struct Take {
    /// What to do.
    pub verdict: Verdict,
    /// The account's version now.
    pub version: i64,
    /// The sealed credentials, when `version` is not the one the caller knew.
    pub sealed_credentials: Option<String>,
}

/// What a call's answer tells the budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallReport {
    /// The provider refused the credentials of the account as it was at `version`.
    CredentialsRefused {
        /// The account's version the call was made with.
        version: i64,
        /// The provider's words.
        message: String,
    },
    /// The call worked while the breaker was open (the probe): close it.
    CredentialsWork,
    /// The provider asked for no calls before `until` (µs).
    PaceUntil(i64),
    /// A call after the provider's hold worked with room left: calls go out at the account's
    /// pace again.
    HoldOver,
}

/// What a report did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportAnswer {
    /// Recorded.
    Recorded,
    /// The breaker was closed by this report: the account's resources were woken.
    Reopened,
    /// The credentials changed since the refused call: the breaker stays closed, and the call
    /// may be made again with the new ones.
    Stale,
}

impl Store {
    /// Decides up to `wanted` calls on `account_id` at `now` (µs): spends them from each of its
    /// buckets, or says how long to wait, or that its breaker refuses; `known_version` is the
    /// account version whose credentials the caller holds.
    pub async fn pacing_take(&self, account_id: &str, known_version: i64, wanted: u32, now: i64) -> Result<Take> {
        crate::measured::store("pacing_take", async {
            let mut txn = self.begin_write().await?;
            let lock = if self.backend == Backend::Postgres { " FOR UPDATE" } else { "" };
            let sql = format!(
                "SELECT provider, version, rate_limits, budget, paced_until, breaker_state, breaker_since, \
                 breaker_message, breaker_probe_at, CASE WHEN version <> $2 THEN credentials ELSE NULL END AS credentials \
                 FROM provider_accounts WHERE id = $1{lock}"
            );
            let account = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(account_id)
                .bind(known_version)
                .fetch_optional(&mut *txn)
                .await?
                .ok_or_else(|| Error::not_found("account", account_id))?;
            let version: i64 = account.try_get("version")?;
            let sealed_credentials: Option<String> = account.try_get("credentials")?;
            let answer = |verdict| Take { verdict, version, sealed_credentials: sealed_credentials.clone() };
            let mut probe = false;
            if account.try_get::<String, _>("breaker_state")? == "open" {
                let probe_at: Option<i64> = account.try_get("breaker_probe_at")?;
                let probe_at = probe_at.unwrap_or(now);
                if probe_at > now {
                    let breaker = OpenBreaker {
                        since: account.try_get::<Option<i64>, _>("breaker_since")?.unwrap_or(now),
                        message: account.try_get("breaker_message")?,
                        probe_at,
                    };
                    return Ok(answer(Verdict::Refused(breaker)));
                }
                probe = true;
            }
            // A hold the provider asked for: none until it ends, then one call at a time until
            // an answer says there is room again (its window frees a call, not all of them).
            let held = account.try_get::<Option<i64>, _>("paced_until")?;
            if let Some(until) = held
                && until > now
            {
                return Ok(answer(Verdict::Wait(until - now)));
            }
            let cautious = held.is_some();
            let provider: String = account.try_get("provider")?;
            let windows = rate_limits::windows_of(&provider, &account.try_get::<String, _>("rate_limits")?);
            let stored = rate_limits::buckets_from_json(&account.try_get::<String, _>("budget")?);
            let wanted = if probe || cautious { 1 } else { wanted };
            let (buckets, granted) = match rate_limits::take_many(&stored, &windows, now, wanted) {
                Ok(taken) => taken,
                Err(wait) => return Ok(answer(Verdict::Wait(wait))),
            };
            sqlx::query(
                "UPDATE provider_accounts SET budget = $2, \
                 breaker_probe_at = CASE WHEN $3 THEN $4 ELSE breaker_probe_at END WHERE id = $1",
            )
            .bind(account_id)
            .bind(rate_limits::buckets_to_json(&buckets))
            .bind(probe)
            .bind(now + PROBE_EVERY_MICROS)
            .execute(&mut *txn)
            .await?;
            if cautious {
                // The next take waits for this call's answer (or a short while, if it never comes).
                sqlx::query("UPDATE provider_accounts SET paced_until = $2 WHERE id = $1")
                    .bind(account_id)
                    .bind(now + CAUTIOUS_MICROS)
                    .execute(&mut *txn)
                    .await?;
            }
            self.commit(txn).await?;
            Ok(answer(Verdict::Go { granted, probe, cautious }))
        })
        .await
    }

    /// Records what a call's answer tells the account's budget and breaker.
    pub async fn pacing_report(&self, account_id: &str, report: &CallReport, now: i64) -> Result<ReportAnswer> {
        crate::measured::store("pacing_report", async {
            let mut txn = self.begin_write().await?;
            let answer = match report {
                CallReport::PaceUntil(until) => {
                    sqlx::query(
                        "UPDATE provider_accounts SET paced_until = $2 \
                         WHERE id = $1 AND (paced_until IS NULL OR paced_until < $2)",
                    )
                    .bind(account_id)
                    .bind(until)
                    .execute(&mut *txn)
                    .await?;
                    ReportAnswer::Recorded
                }
                CallReport::HoldOver => {
                    sqlx::query("UPDATE provider_accounts SET paced_until = NULL WHERE id = $1")
                        .bind(account_id)
                        .execute(&mut *txn)
                        .await?;
                    ReportAnswer::Recorded
                }
                CallReport::CredentialsRefused { version, message } => {
                    let opened = sqlx::query(
                        "UPDATE provider_accounts SET breaker_state = 'open', \
                         breaker_since = CASE WHEN breaker_state = 'open' THEN breaker_since ELSE $3 END, \
                         breaker_message = $4, breaker_probe_at = $5 WHERE id = $1 AND version = $2",
                    )
                    .bind(account_id)
                    .bind(version)
                    .bind(now)
                    .bind(message)
                    .bind(now + PROBE_EVERY_MICROS)
                    .execute(&mut *txn)
                    .await?
                    .rows_affected();
                    if opened == 0 { ReportAnswer::Stale } else { ReportAnswer::Recorded }
                }
                CallReport::CredentialsWork => {
                    let closed = sqlx::query(
                        "UPDATE provider_accounts SET breaker_state = 'closed', breaker_since = NULL, \
                         breaker_message = '', breaker_probe_at = NULL WHERE id = $1 AND breaker_state = 'open'",
                    )
                    .bind(account_id)
                    .execute(&mut *txn)
                    .await?
                    .rows_affected();
                    if closed == 0 {
                        ReportAnswer::Recorded
                    } else {
                        self.work_wake_account_in(&mut txn, account_id, now).await?;
                        ReportAnswer::Reopened
                    }
                }
            };
            self.commit_and_signal(txn).await?;
            Ok(answer)
        })
        .await
    }

    /// Makes every resource on `account_id` due now: its credentials or limits changed, so a
    /// pass waiting out a refusal should not wait any longer.
    pub(super) async fn work_wake_account_in(
        &self,
        txn: &mut sqlx::Transaction<'static, sqlx::Any>,
        account_id: &str,
        now: i64,
    ) -> Result<u64> {
        let woken = sqlx::query(
            "UPDATE work_items SET due_at = $2, generation = generation + 1 WHERE due_at > $2 AND object_id IN (\
             SELECT id FROM kubernetes_clusters WHERE account_id = $1 \
             UNION ALL SELECT id FROM networks WHERE account_id = $1 \
             UNION ALL SELECT id FROM instances WHERE account_id = $1 \
             UNION ALL SELECT id FROM certificates WHERE account_id = $1 \
             UNION ALL SELECT id FROM volumes WHERE account_id = $1 \
             UNION ALL SELECT id FROM load_balancers WHERE account_id = $1 \
             UNION ALL SELECT pool_id FROM kubernetes_substrates WHERE account_id = $1)",
        )
        .bind(account_id)
        .bind(now)
        .execute(&mut **txn)
        .await?
        .rows_affected();
        if woken > 0 {
            self.work_notify_in(txn, "*").await?;
        }
        Ok(woken)
    }
}
