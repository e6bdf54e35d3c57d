//! The event outbox: written in the same transaction as the change that causes it.
//!
//! Readers see events numbered 1..n with no gap, and never find a number committed behind a
//! cursor they hold. On Postgres an event is numbered after its transaction commits: the writer
//! inserts it unnumbered and takes no shared lock, and a reader first numbers what has committed
//! ([`Store::event_number_committed`], one numbering at a time under the `event_head` row lock),
//! so a late commit is numbered after everything already seen. On SQLite, whose writers take
//! turns anyway, the writer takes the next number from `event_head` inside its transaction.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::{Backend, Store};
use crate::error::{Error, Result};

/// The most events one numbering gives numbers to, so that its transaction stays short; a
/// reader that needs every committed event numbered runs numberings until one gives fewer.
const NUMBERING_BATCH: i64 = 10_000;

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
    Ok(read_columns!(row, EventRow {
        seq, id, source, subject, tenant_id, time;
        event_type: row.try_get("type")?,
        data: serde_json::from_str(&data).map_err(|e| Error::internal(format!("event data is not JSON: {e}")))?,
    }))
}

impl Store {
    /// Appends an event inside the caller's transaction and returns its sequence number; commit
    /// with `commit_and_signal` so that watchers hear of it at once.
    ///
    /// On Postgres the event is numbered once it has committed (its number is not known here);
    /// on SQLite it takes the next number at once.
    pub async fn event_append_in(&self, txn: &mut Transaction<'static, Any>, event: &NewEvent) -> Result<()> {
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
            Ok(())
        })
        .await
    }

    /// Appends `events` inside `txn`, in order: on Postgres all of them in one statement (their
    /// `written` order is their order in it), one by one on SQLite.
    pub(super) async fn events_append_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        events: &[NewEvent],
    ) -> Result<()> {
        if self.backend != Backend::Postgres || events.len() < 2 {
            for event in events {
                self.event_append_in(txn, event).await?;
            }
            return Ok(());
        }
        crate::measured::store("events_append_in", async {
            let rows: Vec<String> = (0..events.len())
                .map(|i| {
                    let n = 1 + i * 7;
                    format!("(${n}, ${}, ${}, ${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4, n + 5, n + 6)
                })
                .collect();
            let append = format!(
                "WITH inserted AS (INSERT INTO events (id, source, type, subject, tenant_id, time, data) VALUES {} \
                 RETURNING 1)",
                rows.join(", ")
            );
            let channel = format!("${}", events.len() * 7 + 1);
            let sql = if self.signals.notifies() {
                format!("{append} SELECT pg_notify({channel}, 'events') FROM inserted LIMIT 1")
            } else {
                format!("{append} SELECT 1 FROM inserted LIMIT 1")
            };
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for event in events {
                query = query
                    .bind(crate::ids::random("evt"))
                    .bind(&event.source)
                    .bind(&event.event_type)
                    .bind(&event.subject)
                    .bind(&event.tenant_id)
                    .bind(event.time)
                    .bind(event.data.to_string());
            }
            if self.signals.notifies() {
                query = query.bind(super::NOTIFY_CHANNEL);
            }
            query.execute(&mut **txn).await?;
            Ok(())
        })
        .await
    }

    /// The append on Postgres in one round trip: the unnumbered row and (when other processes
    /// listen) the notification, as one statement.
    async fn event_append_postgres(&self, txn: &mut Transaction<'static, Any>, event: &NewEvent) -> Result<()> {
        const APPEND: &str = "WITH inserted AS (INSERT INTO events (id, source, type, subject, tenant_id, time, data) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING 1)";
        let sql = if self.signals.notifies() {
            format!("{APPEND} SELECT pg_notify($8, 'events') FROM inserted")
        } else {
            format!("{APPEND} SELECT 1 FROM inserted")
        };
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
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
        query.execute(&mut **txn).await?;
        Ok(())
    }

    /// Numbers the committed events that have no number yet (Postgres; SQLite numbers them as
    /// they are written), in the order they were written, after the last number given.
    ///
    /// The `event_head` row lock makes numberings take turns, and each numbering's statement
    /// runs after the lock is held, so it sees every numbering before it: numbers are never given
    /// twice, and a numbering's numbers appear all at once when it commits. Rows of transactions
    /// still open are not visible to it; they are numbered by a later one, after every number a
    /// reader can have seen.
    pub async fn event_number_committed(&self) -> Result<u64> {
        if self.backend != Backend::Postgres {
            return Ok(0);
        }
        crate::measured::store("event_number_committed", async {
            // Read in `written` order so that the plan is the partial index of unnumbered rows
            // whatever the statistics say: an `EXISTS` is planned from them, and after a burst
            // of writes analyzed before its numbering (autovacuum off, or not yet run) it
            // scanned every event on each read of the outbox (10 ms at 30,000 events, for each
            // watch opened).
            let pending: Option<i64> =
                sqlx::query_scalar("SELECT written FROM events WHERE seq IS NULL ORDER BY written LIMIT 1")
                    .fetch_optional(&self.pool)
                    .await?;
            if pending.is_none() {
                return Ok(0);
            }
            let mut txn = self.pool.begin().await?;
            let last: i64 = sqlx::query_scalar("SELECT last_seq FROM event_head WHERE id = 1 FOR UPDATE")
                .fetch_one(&mut *txn)
                .await?;
            let numbered: i64 = sqlx::query_scalar(
                "WITH pending AS (SELECT id, row_number() OVER (ORDER BY written) AS n FROM events \
                   WHERE seq IS NULL ORDER BY written LIMIT $2), \
                 numbered AS (UPDATE events SET seq = $1 + pending.n FROM pending \
                   WHERE events.id = pending.id RETURNING events.seq) \
                 UPDATE event_head SET last_seq = last_seq + (SELECT count(*) FROM numbered) WHERE id = 1 \
                 RETURNING last_seq - $1",
            )
            .bind(last)
            .bind(NUMBERING_BATCH)
            .fetch_one(&mut *txn)
            .await?;
            self.commit(txn).await?;
            Ok(numbered as u64)
        })
        .await
    }

    /// Events after a cursor, oldest first.
    pub async fn event_list_after(&self, filter: &EventFilter) -> Result<Vec<EventRow>> {
        crate::measured::store("event_list_after", async {
            self.event_read_counted();
            self.event_number_committed().await?;
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
            // Every committed event, however many wait: a head short of them would hand a new
            // watch the rest as if they came after it.
            while self.event_number_committed().await? == NUMBERING_BATCH as u64 {}
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
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }
}
