//! The event outbox: written in the same transaction as the change that causes it.
//!
//! Sequence numbers come from the one row of `event_head`, updated inside the writing
//! transaction: its row lock makes writers of events commit in the order of their numbers, so a
//! reader that has seen `n` will never later find a smaller number committed (no gaps behind a
//! cursor, nothing delivered twice). Writers should append their event last, just before
//! committing, to hold that lock briefly.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::{Backend, Store};
use crate::error::{Error, Result};

/// An event to append.
#[derive(Clone, Debug)]
pub struct NewEvent {
    /// What produced it (`/platform/tenants`).
    pub source: String,
    /// `platform.tenant.created`.
    pub event_type: String,
    /// The resource the event is about.
    pub subject: String,
    /// The tenant it belongs to.
    pub tenant_id: String,
    /// When it happened (µs).
    pub time: i64,
    /// Its payload, a JSON object.
    pub data: serde_json::Value,
}

/// An event as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// Its position in the outbox: the cursor after it.
    pub seq: i64,
    /// A unique id (`evt_...`), also the JetStream message id.
    pub id: String,
    /// What produced it.
    pub source: String,
    /// Its type.
    pub event_type: String,
    /// The resource it is about.
    pub subject: String,
    /// Its tenant.
    pub tenant_id: String,
    /// When it happened (µs).
    pub time: i64,
    /// Its payload.
    pub data: serde_json::Value,
}

/// Which events a reader wants.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Only after this sequence number.
    pub after: i64,
    /// Only this tenant's; `None` for every tenant (operators).
    pub tenant_id: Option<String>,
    /// Only types that start with this (empty: all).
    pub type_prefix: String,
    /// Only this subject (empty: all).
    pub subject: String,
    /// At most this many.
    pub limit: i64,
}

fn event_from_row(row: &AnyRow) -> Result<EventRow> {
    let data: String = row.try_get("data")?;
    Ok(EventRow {
        seq: row.try_get("seq")?,
        id: row.try_get("id")?,
        source: row.try_get("source")?,
        event_type: row.try_get("type")?,
        subject: row.try_get("subject")?,
        tenant_id: row.try_get("tenant_id")?,
        time: row.try_get("time")?,
        data: serde_json::from_str(&data).map_err(|e| Error::internal(format!("event data is not JSON: {e}")))?,
    })
}

impl Store {
    /// Appends an event inside the caller's transaction and returns its sequence number; commit
    /// with `commit_and_signal` so that watchers hear of it at once.
    ///
    /// It locks the one `event_head` row until the transaction ends: take every other row lock of
    /// the transaction (quotas, held networks and certificates) before it, or two writers taking
    /// the same two locks in opposite orders deadlock.
    pub async fn event_append_in(&self, txn: &mut Transaction<'static, Any>, event: &NewEvent) -> Result<i64> {
        crate::measured::store("event_append_in", async {
            if self.backend == Backend::Postgres {
                return self.event_append_postgres(txn, event).await;
            }
            let seq: i64 =
                sqlx::query_scalar("UPDATE event_head SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq")
                    .fetch_one(&mut **txn)
                    .await?;
            sqlx::query(
                "INSERT INTO events (seq, id, source, type, subject, tenant_id, time, data) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(seq)
            .bind(crate::ids::random("evt"))
            .bind(&event.source)
            .bind(&event.event_type)
            .bind(&event.subject)
            .bind(&event.tenant_id)
            .bind(event.time)
            .bind(event.data.to_string())
            .execute(&mut **txn)
            .await?;
            self.work_notify_in(txn, "events").await?;
            Ok(seq)
        })
        .await
    }

    /// The append on Postgres in one round trip: the head's next number, the row and (when
    /// other processes listen) the notification, as one statement.
    async fn event_append_postgres(&self, txn: &mut Transaction<'static, Any>, event: &NewEvent) -> Result<i64> {
        const APPEND: &str = "WITH head AS (UPDATE event_head SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq), \
             inserted AS (INSERT INTO events (seq, id, source, type, subject, tenant_id, time, data) \
               SELECT last_seq, $1, $2, $3, $4, $5, $6, $7 FROM head RETURNING seq)";
        let sql = if self.signals.notifies() {
            format!("{APPEND} SELECT inserted.seq FROM inserted, (SELECT pg_notify($8, 'events')) AS notified")
        } else {
            format!("{APPEND} SELECT seq FROM inserted")
        };
        let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(crate::ids::random("evt"))
            .bind(&event.source)
            .bind(&event.event_type)
            .bind(&event.subject)
            .bind(&event.tenant_id)
            .bind(event.time)
            .bind(event.data.to_string());
        if self.signals.notifies() {
            query = query.bind(super::NOTIFY_CHANNEL);
        }
        Ok(query.fetch_one(&mut **txn).await?)
    }

    /// Events after a cursor, oldest first.
    pub async fn event_list_after(&self, filter: &EventFilter) -> Result<Vec<EventRow>> {
        crate::measured::store("event_list_after", async {
            self.event_read_counted();
            let rows = sqlx::query(
                "SELECT seq, id, source, type, subject, tenant_id, time, data FROM events \
                 WHERE seq > $1 AND ($2 = '' OR tenant_id = $2) \
                 AND ($3 = '' OR substr(type, 1, length($3)) = $3) AND ($4 = '' OR subject = $4) \
                 ORDER BY seq LIMIT $5",
            )
            .bind(filter.after)
            .bind(filter.tenant_id.as_deref().unwrap_or(""))
            .bind(&filter.type_prefix)
            .bind(&filter.subject)
            .bind(filter.limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(event_from_row).collect()
        })
        .await
    }

    /// The cursor after the last committed event (0 when there is none).
    pub async fn event_last_seq(&self) -> Result<i64> {
        crate::measured::store("event_last_seq", async {
            self.event_read_counted();
            let seq: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM events").fetch_one(&self.pool).await?;
            Ok(seq.unwrap_or(0))
        })
        .await
    }

    /// How far relay `name` has published (0 if never).
    pub async fn event_relay_position(&self, name: &str) -> Result<i64> {
        crate::measured::store("event_relay_position", async {
            let seq: Option<i64> = sqlx::query_scalar("SELECT last_seq FROM event_relays WHERE name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
            Ok(seq.unwrap_or(0))
        })
        .await
    }

    /// Records that relay `name` has published every event up to `seq`.
    pub async fn event_relay_advance(&self, name: &str, seq: i64) -> Result<()> {
        crate::measured::store("event_relay_advance", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO event_relays (name, last_seq) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET last_seq = CASE WHEN event_relays.last_seq > $2 \
                 THEN event_relays.last_seq ELSE $2 END",
            )
            .bind(name)
            .bind(seq)
            .execute(&mut *txn)
            .await?;
            txn.commit().await?;
            Ok(())
        })
        .await
    }
}
