//! The re-seal: every value of every sealed column that a key other than the sealing one sealed
//! is opened and sealed again with the sealing key, so that once a sweep finds none the old key
//! can be removed (docs/secret-keys.md). A value sealed before keys had ids that the sealing key
//! opens is left as it is: a release before ids cannot open a value with one, so upgrading
//! rewrites nothing. Each worker process sweeps on an interval and right
//! after its keys change; a value is written back only if it is still the one read, so a
//! concurrent write (new credentials) wins and two workers sweeping at once do no harm.

use std::collections::HashSet;
use std::time::Duration;

use crate::secrets::{SecretKey, record_sweep};
use crate::store::{SEALED_COLUMNS, SealedColumn, Store};

/// Values read at once.
const PAGE: i64 = 100;

/// What one sweep did, summed over the sealed columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Values sealed again with the sealing key.
    pub resealed: u64,
    /// Values still not sealed with the sealing key when the sweep ended (the unopenable ones
    /// among them).
    pub stale: i64,
    /// Values that no configured key opens.
    pub unopenable: i64,
    /// Columns whose sweep failed (a store error): what they hold is not known.
    pub failed: u64,
}

/// Seals again, with the sealing key, what other keys sealed.
pub struct Resealer {
    store: Store,
    key: SecretKey,
    interval: Duration,
    /// The values found unopenable, by column and row, so that each is logged once.
    reported: HashSet<(&'static str, &'static str, String)>,
    /// The sealing key whose sweep last found nothing stale, so that it is said once.
    done_with: Option<String>,
}

impl Resealer {
    /// A re-seal of `store`'s sealed columns with `key`, every `interval` and on each change of
    /// the keys.
    pub fn new(store: Store, key: SecretKey, interval: Duration) -> Resealer {
        Resealer { store, key, interval, reported: HashSet::new(), done_with: None }
    }

    /// Sweeps at once, then every interval and whenever the keys change, until `shutdown`.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        let mut changes = self.key.changes();
        tokio::pin!(shutdown);
        loop {
            changes.mark_unchanged();
            self.sweep().await;
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(self.interval) => {}
                _ = changes.changed() => {}
            }
        }
    }

    /// One sweep of every sealed column. A store failure ends the column's sweep (the next
    /// sweep tries again) and is logged.
    pub async fn sweep(&mut self) -> SweepReport {
        let mut report = SweepReport::default();
        for column in SEALED_COLUMNS {
            match self.sweep_column(column).await {
                Ok(swept) => {
                    record_sweep(&column.name(), swept.stale, swept.unopenable, swept.resealed);
                    report.resealed += swept.resealed;
                    report.stale += swept.stale;
                    report.unopenable += swept.unopenable;
                }
                Err(error) => {
                    tracing::warn!(column = %column.name(), %error, "the re-seal sweep of a column failed");
                    report.failed += 1;
                }
            }
        }
        self.say(&report);
        report
    }

    async fn sweep_column(&mut self, column: &'static SealedColumn) -> crate::error::Result<SweepReport> {
        let mut swept = SweepReport::default();
        let mut after = String::new();
        loop {
            let sealing = self.key.sealing_key_id();
            let page = self.store.sealed_values_not_sealed_with(column, &sealing, &after, PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.row_id.clone();
            for value in page {
                match self.key.reseal(&value.sealed, &value.row_id) {
                    // The keys changed during the sweep, and the new sealing key sealed it.
                    Ok(None) => {}
                    Ok(Some(resealed)) => {
                        if self.store.sealed_value_replace(column, &value.row_id, &value.sealed, &resealed).await? {
                            swept.resealed += 1;
                        }
                    }
                    Err(error) => {
                        swept.unopenable += 1;
                        if self.reported.insert((column.table, column.column, value.row_id.clone())) {
                            tracing::warn!(
                                column = %column.name(),
                                row = %value.row_id,
                                key_id = SecretKey::sealed_key_id(&value.sealed).unwrap_or("none"),
                                %error,
                                "a sealed value opens with no configured key; it is left as it is"
                            );
                        }
                    }
                }
            }
        }
        swept.stale = self.stale_in(column).await?;
        Ok(swept)
    }

    /// How many values of `column` the sealing key did not seal, now: read again rather than
    /// counted during the sweep, so that a value a lagging process sealed with another key
    /// meanwhile counts.
    async fn stale_in(&self, column: &SealedColumn) -> crate::error::Result<i64> {
        let mut stale = 0;
        let mut after = String::new();
        loop {
            let sealing = self.key.sealing_key_id();
            let page = self.store.sealed_values_not_sealed_with(column, &sealing, &after, PAGE).await?;
            let Some(last) = page.last() else { return Ok(stale) };
            after = last.row_id.clone();
            stale +=
                page.iter().filter(|value| !self.key.is_sealed_with_sealing_key(&value.sealed, &value.row_id)).count()
                    as i64;
        }
    }

    /// Logs what the sweep did: what it sealed again and what is left, and once per sealing
    /// key that nothing is left, which is when the other keys may go.
    fn say(&mut self, report: &SweepReport) {
        let sealing = self.key.sealing_key_id();
        if report.failed > 0 {
            self.done_with = None;
            return;
        }
        if report.stale == 0 {
            if self.done_with.as_deref() != Some(sealing.as_str()) || report.resealed > 0 {
                tracing::info!(
                    sealing_key_id = %sealing,
                    resealed = report.resealed,
                    "re-seal done: every sealed value is sealed with the sealing key"
                );
            }
            self.done_with = Some(sealing);
            return;
        }
        self.done_with = None;
        tracing::info!(
            sealing_key_id = %sealing,
            resealed = report.resealed,
            stale = report.stale,
            unopenable = report.unopenable,
            "re-seal sweep: values are still sealed with another key"
        );
    }
}
