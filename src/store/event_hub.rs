//! The event hub: one poller per process reads the outbox for every open `Events.Watch` and
//! fans each batch out, so that a thousand idle watches cost one query per interval, not a
//! thousand; and the count of open watches per principal and per tenant, capped.
//!
//! A batch names the cursor it starts after, and batches follow one another without a gap; a
//! watch that sees a batch start past what it has covered (it was too slow and missed some, or it
//! opened before the poller knew where the outbox ended) reads the difference from the store
//! itself, then goes on from the batches. On Postgres the poller's process also `LISTEN`s, so a
//! commit or a revocation in another process is heard at once; the interval covers the rest.
//! Watches opened alike (one key, one request) share their periodic check of the caller.
//!
//! Every limit of watches is here: [`WATCH_POLL`], [`WATCH_RECHECK`],
//! [`WATCHES_PER_PRINCIPAL`], [`WATCHES_PER_TENANT`]. They count the watches of one process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use super::signals::{ACCESS_CHANNEL, NOTIFY_CHANNEL};
use super::{Backend, EventFilter, EventRow, Store};
use crate::error::{Code, Error, Result};

/// How often the poller reads the outbox when nothing woke it.
pub const WATCH_POLL: Duration = Duration::from_millis(500);

/// How often an open watch checks that its key, principal and binding still allow it, when no
/// revocation was announced (a lost notice, CockroachDB, an expired key).
pub const WATCH_RECHECK: Duration = Duration::from_secs(10);

/// The open watches one principal may hold in one process.
pub const WATCHES_PER_PRINCIPAL: usize = 16;

/// The open watches the principals of one tenant may hold together in one process.
pub const WATCHES_PER_TENANT: usize = 256;

/// The most events one poll reads; a full batch is followed by the next at once.
const HUB_BATCH: i64 = 500;

/// Batches kept for a watch that has not read them yet; one that falls further behind reads
/// what it missed from the store.
const HUB_BACKLOG: usize = 64;

/// Events the poller read, in order: every event after `after`, up to the last one's cursor.
#[derive(Debug)]
pub struct EventBatch {
    /// The cursor the batch starts after.
    pub after: i64,
    /// Every event committed after `after`, up to the last one.
    pub events: Vec<EventRow>,
}

impl EventBatch {
    /// The cursor after the batch.
    pub fn last(&self) -> i64 {
        self.events.last().map_or(self.after, |event| event.seq)
    }
}

/// The hub of one process (shared by every clone of its store).
#[derive(Debug, Default)]
pub(super) struct Hub {
    /// The poller's channel and the open-watch counts.
    state: Mutex<HubState>,
    /// Every read of the outbox by this store: the poller's, catch-ups and lists.
    reads: AtomicU64,
    /// The last check that passed of each grant (credentials and request) of open watches, so
    /// that many watches opened alike are checked once per interval, not once each.
    checks: Mutex<Checks>,
    /// How many times watches checked their caller (for tests and figures).
    checks_made: AtomicU64,
    /// How many times a watch due for a check made none: another watch of its grant had just
    /// made it (for tests and figures).
    checks_shared: AtomicU64,
}

/// When a grant last passed its check: the revocation count then, and the time.
pub type GrantCheck = Arc<tokio::sync::Mutex<Option<(u64, Instant)>>>;

#[derive(Debug, Default)]
struct Checks {
    /// Grant -> its last check; held by every open watch of the grant.
    by_grant: HashMap<String, GrantCheck>,
    /// The size after the last pruning: the map is pruned when it doubles.
    pruned_len: usize,
}

#[derive(Debug, Default)]
struct HubState {
    /// The poller's channel, while it runs.
    batches: Option<broadcast::Sender<Arc<EventBatch>>>,
    /// The cursor after the last batch sent, once the poller knows where the outbox ends.
    head: Option<i64>,
    /// Open watches per principal id.
    per_principal: HashMap<String, usize>,
    /// Open watches per tenant id.
    per_tenant: HashMap<String, usize>,
}

/// An open watch's place in the hub: its batches, and its slot in the counts, given back when
/// it is dropped.
#[derive(Debug)]
pub struct EventWatch {
    /// The batches the poller sends from now on.
    pub batches: broadcast::Receiver<Arc<EventBatch>>,
    /// The cursor before the first batch this watch will receive, when known: everything up to
    /// it was committed before the watch opened.
    pub head: Option<i64>,
    /// Gives the slot back on drop.
    _slot: WatchSlot,
}

#[derive(Debug)]
struct WatchSlot {
    hub: Arc<Hub>,
    principal_id: String,
    tenant_id: Option<String>,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut state = self.hub.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        release(&mut state.per_principal, &self.principal_id);
        if let Some(tenant) = &self.tenant_id {
            release(&mut state.per_tenant, tenant);
        }
    }
}

fn release(counts: &mut HashMap<String, usize>, key: &str) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

/// `QUOTA_EXCEEDED` for one watch more than `limit` of `whose`.
fn too_many_watches(whose: &str, limit: usize) -> Error {
    Error::new(
        Code::QuotaExceeded,
        format!(
            "{whose} already holds {limit} open event watches, the most allowed; close one (or resume \
             from its last cursor later) before watching again"
        ),
    )
    .with_detail("limit", limit as u64)
    .with_detail("used", limit as u64)
    .with_detail("resourceKind", "event watches")
}

impl Hub {
    /// Stops the poller when no watch is left; returns whether it stopped.
    fn stop_if_unwatched(&self, batches: &broadcast::Sender<Arc<EventBatch>>) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if batches.receiver_count() > 0 {
            return false;
        }
        state.batches = None;
        state.head = None;
        true
    }

    /// Sends a batch, and records where the next starts, under the lock that opening a watch
    /// takes, so that a watch's `head` and its first batch agree.
    fn publish(&self, batches: &broadcast::Sender<Arc<EventBatch>>, batch: Option<EventBatch>, head: i64) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        state.head = Some(head);
        if let Some(batch) = batch {
            // No receiver left is not an error: the poller stops at its next turn.
            let _ = batches.send(Arc::new(batch));
        }
    }
}

impl Store {
    /// Opens a watch for `principal_id` of `tenant_id` (none for an operator): a slot in the
    /// counts and the poller's batches, starting the poller if it is not running.
    /// `QUOTA_EXCEEDED`, naming the limit, when the principal or the tenant holds the most.
    pub fn event_watch_open(&self, principal_id: &str, tenant_id: Option<&str>) -> Result<EventWatch> {
        let hub = self.signals.hub.clone();
        let mut state = hub.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if state.per_principal.get(principal_id).copied().unwrap_or(0) >= WATCHES_PER_PRINCIPAL {
            return Err(too_many_watches(&format!("principal {principal_id}"), WATCHES_PER_PRINCIPAL)
                .with_detail("principalId", principal_id));
        }
        if let Some(tenant) = tenant_id
            && state.per_tenant.get(tenant).copied().unwrap_or(0) >= WATCHES_PER_TENANT
        {
            return Err(
                too_many_watches(&format!("tenant {tenant}"), WATCHES_PER_TENANT).with_detail("tenantId", tenant)
            );
        }
        *state.per_principal.entry(principal_id.to_owned()).or_default() += 1;
        if let Some(tenant) = tenant_id {
            *state.per_tenant.entry(tenant.to_owned()).or_default() += 1;
        }
        let batches = match &state.batches {
            Some(sender) => sender.subscribe(),
            None => {
                let (sender, receiver) = broadcast::channel(HUB_BACKLOG);
                state.batches = Some(sender.clone());
                tokio::spawn(run_poller(self.clone(), sender));
                receiver
            }
        };
        let head = state.head;
        drop(state);
        Ok(EventWatch {
            batches,
            head,
            _slot: WatchSlot { hub, principal_id: principal_id.to_owned(), tenant_id: tenant_id.map(str::to_owned) },
        })
    }

    /// How many times this store has read the outbox (for tests and figures: with the hub,
    /// idle watches add none).
    pub fn event_reads(&self) -> u64 {
        self.signals.hub.reads.load(Ordering::Relaxed)
    }

    /// The last check of `grant`, shared by the watches of that grant: a watch locks it,
    /// checks only when it is stale, and records a pass.
    pub fn event_watch_grant(&self, grant: &str) -> GrantCheck {
        let mut checks = self.signals.hub.checks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(check) = checks.by_grant.get(grant) {
            return check.clone();
        }
        if checks.by_grant.len() >= 2 * checks.pruned_len.max(64) {
            // A grant no open watch holds any more is forgotten.
            checks.by_grant.retain(|_, check| Arc::strong_count(check) > 1);
            checks.pruned_len = checks.by_grant.len();
        }
        checks.by_grant.entry(grant.to_owned()).or_default().clone()
    }

    /// Counts one check of a watch's caller.
    pub fn event_watch_check_counted(&self) {
        self.signals.hub.checks_made.fetch_add(1, Ordering::Relaxed);
    }

    /// How many times watches checked their caller.
    pub fn event_watch_checks(&self) -> u64 {
        self.signals.hub.checks_made.load(Ordering::Relaxed)
    }

    /// Counts one check a watch left to the last one of its grant.
    pub fn event_watch_check_shared(&self) {
        self.signals.hub.checks_shared.fetch_add(1, Ordering::Relaxed);
    }

    /// How many checks watches left to the last one of their grant.
    pub fn event_watch_checks_shared(&self) -> u64 {
        self.signals.hub.checks_shared.load(Ordering::Relaxed)
    }

    /// Counts one read of the outbox.
    pub(super) fn event_read_counted(&self) {
        self.signals.hub.reads.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads the outbox for every watch of the process until none is left.
async fn run_poller(store: Store, batches: broadcast::Sender<Arc<EventBatch>>) {
    let hub = store.signals.hub.clone();
    let listener = spawn_listener(&store);
    let _stop_listener = AbortOnDrop(listener);
    let mut changes = store.signals.subscribe();
    let mut head: Option<i64> = None;
    loop {
        if hub.stop_if_unwatched(&batches) {
            return;
        }
        // Mark what this read covers before reading, so a commit during it wakes the next one.
        changes.borrow_and_update();
        let full = match poll_once(&store, &hub, &batches, &mut head).await {
            Ok(full) => full,
            Err(error) => {
                tracing::warn!(%error, "the event poller cannot read the outbox; retrying");
                false
            }
        };
        if !full {
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(WATCH_POLL) => {}
            }
        }
    }
}

/// One read of the outbox after the head; returns whether the batch was full.
async fn poll_once(
    store: &Store,
    hub: &Hub,
    batches: &broadcast::Sender<Arc<EventBatch>>,
    head: &mut Option<i64>,
) -> Result<bool> {
    let Some(after) = *head else {
        let last = store.event_last_seq().await?;
        *head = Some(last);
        // An empty batch that starts at the head: a watch opened before the head was known,
        // whose own read of the store ended short of it (an event committed between that read
        // and this one), reads the difference now, not when the next event comes.
        hub.publish(batches, Some(EventBatch { after: last, events: Vec::new() }), last);
        return Ok(false);
    };
    let filter = EventFilter { after, limit: HUB_BATCH, ..EventFilter::default() };
    let events = store.event_list_after(&filter).await?;
    let full = events.len() as i64 == HUB_BATCH;
    if !events.is_empty() {
        let batch = EventBatch { after, events };
        let last = batch.last();
        *head = Some(last);
        hub.publish(batches, Some(batch), last);
    }
    Ok(full)
}

/// Aborts a task when dropped.
struct AbortOnDrop(Option<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// On Postgres, a `LISTEN` connection that turns other processes' notices into this process's
/// signals: new events wake the poller, a revocation makes every watch check its caller.
fn spawn_listener(store: &Store) -> Option<tokio::task::JoinHandle<()>> {
    if store.backend() != Backend::Postgres || !store.signals.notifies() {
        return None;
    }
    let store = store.clone();
    Some(tokio::spawn(async move {
        loop {
            if let Err(error) = listen(&store).await {
                tracing::warn!(%error, "the event watches' Postgres listener failed; retrying");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }))
}

async fn listen(store: &Store) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(store.signals.database_url()).await?;
    listener.listen_all([NOTIFY_CHANNEL, ACCESS_CHANNEL]).await?;
    loop {
        // Whatever was announced while not listening (at first, or after a lost connection) is
        // looked at again.
        store.signals.wake_all();
        store.signals.access_changed();
        while let Some(notice) = listener.try_recv().await? {
            if notice.channel() == ACCESS_CHANNEL {
                store.signals.access_changed();
            } else if notice.payload() == "events" {
                store.signals.wake_all();
            }
        }
    }
}
