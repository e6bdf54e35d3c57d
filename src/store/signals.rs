//! In-process signals: a write wakes the worker and the event watchers of its own process at
//! once (`bcctl dev`, tests); other processes hear Postgres' `NOTIFY` through a listener. A
//! revocation (a key revoked, a principal or a tenant deleted, a binding removed) has its own
//! signal, so that open event watches check again at once whether their caller may still read.

use std::sync::Arc;

use tokio::sync::watch;

use super::Store;
use super::event_hub::Hub;

/// The Postgres channel a write of work or events is announced on.
pub const NOTIFY_CHANNEL: &str = "bc_work";

/// The Postgres channel a revocation is announced on, for the watches of other processes.
pub const ACCESS_CHANNEL: &str = "bc_access";

/// Counters that change on every wake-up, and the flag that ends long streams.
#[derive(Clone)]
pub struct Signals {
    /// Bumped after a commit that wrote work items or events.
    changes: Arc<watch::Sender<u64>>,
    /// Bumped when a server stops, so that the `watch` streams open then end and graceful
    /// shutdown finishes; streams opened later (a restart on the same store) go on.
    stopping: Arc<watch::Sender<u64>>,
    /// Bumped after a revocation: open streams check their caller again.
    access: Arc<watch::Sender<u64>>,
    /// The one poller and the open-watch counts of this process's event watches.
    pub(super) hub: Arc<Hub>,
    /// The database URL, for a dedicated `LISTEN` connection; never printed.
    url: Arc<str>,
    /// Whether the database has `LISTEN`/`NOTIFY` (Postgres, not SQLite nor CockroachDB).
    notify: bool,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signals").finish_non_exhaustive()
    }
}

impl Signals {
    /// Fresh signals for a store on `url`.
    pub(super) fn new(url: &str, notify: bool) -> Self {
        Self {
            changes: Arc::new(watch::channel(0).0),
            stopping: Arc::new(watch::channel(0).0),
            access: Arc::new(watch::channel(0).0),
            hub: Arc::new(Hub::default()),
            url: Arc::from(url),
            notify,
        }
    }

    /// Wakes every waiter: something was written.
    pub fn wake_all(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver whose `changed()` resolves after the next wake-up. A wake-up between two waits
    /// is never lost: the receiver remembers the last value it saw.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Asks every open long stream to end.
    pub fn stop_streams(&self) {
        self.stopping.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver whose `changed()` resolves when the streams open now must end.
    pub fn stopping(&self) -> watch::Receiver<u64> {
        let mut receiver = self.stopping.subscribe();
        receiver.borrow_and_update();
        receiver
    }

    /// Tells this process's open streams that access was taken away somewhere.
    pub fn access_changed(&self) {
        self.access.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// How many revocations this process has heard of.
    pub fn access_generation(&self) -> u64 {
        *self.access.borrow()
    }

    /// A receiver whose `changed()` resolves after the next revocation.
    pub fn access_subscribe(&self) -> watch::Receiver<u64> {
        let mut receiver = self.access.subscribe();
        receiver.borrow_and_update();
        receiver
    }

    /// Whether writers `NOTIFY` and workers `LISTEN` across processes.
    pub fn notifies(&self) -> bool {
        self.notify
    }

    /// The database URL, for the Postgres listener.
    pub fn database_url(&self) -> &str {
        &self.url
    }
}

impl Store {
    /// Announces a committed revocation: this process's watches hear it at once, other processes'
    /// through `NOTIFY` (their periodic check covers a lost notice, and CockroachDB).
    pub async fn access_revoked(&self) {
        self.signals.access_changed();
        if self.signals.notifies()
            && let Err(error) = sqlx::query("SELECT pg_notify($1, '')").bind(ACCESS_CHANNEL).execute(&self.pool).await
        {
            tracing::warn!(%error, "cannot announce a revocation to other processes; their periodic check will");
        }
    }
}
