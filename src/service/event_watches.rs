//! Open event watches: each takes a slot in the hub (capped per principal and per tenant),
//! follows the hub's batches from its cursor, reads from the store only what it missed, and ends
//! as soon as its caller may no longer read: at a revocation's signal (a key revoked, a principal
//! or its tenant deleted, a binding removed) or, failing that, at the periodic check
//! (`WATCH_RECHECK`).

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc};
use tokio::time::{Instant, sleep_until};

use super::{Context, Service};
use crate::error::{Error, Result};
use crate::proto::compute::WatchEventsRequest;
use crate::store::{EventBatch, EventFilter, EventRow, EventWatch, GrantCheck, WATCH_RECHECK};

/// The rows a watch sends; an error ends it.
pub type WatchRows = mpsc::Receiver<Result<EventRow>>;

/// The header a watch was opened with, kept to authenticate its caller again; never printed.
struct Credentials(String);

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}

/// What a watch was opened with, to check it again.
#[derive(Debug)]
struct Grant {
    ctx: Context,
    authorization: Credentials,
    request: WatchEventsRequest,
    /// The last check of every open watch with the same credentials and request.
    last_check: GrantCheck,
}

/// What names a grant among the hub's checks: the credentials' hash (the secret itself is not
/// kept there) and every field the decision reads.
fn grant_name(authorization: &str, request: &WatchEventsRequest) -> String {
    let digest = Sha256::digest(authorization.as_bytes());
    let hash: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let fields = [&request.after, &request.tenant_id, &request.type_prefix, &request.subject];
    // JSON quoting keeps the fields apart whatever they contain.
    format!("{hash} {}", serde_json::json!(fields))
}

impl Service {
    /// Opens a watch of `request` for `ctx`'s caller, who presented `authorization`: every event
    /// after the cursor, in order, until the client goes away, the server stops (`UNAVAILABLE`:
    /// resume from the last cursor), or the caller may no longer read (`UNAUTHENTICATED` or
    /// `ACCESS_DENIED`). `QUOTA_EXCEEDED` when the caller or its tenant holds the most watches.
    pub fn event_watch(
        &self,
        ctx: &Context,
        request: WatchEventsRequest,
        authorization: Option<&str>,
    ) -> Result<WatchRows> {
        let filter = self.event_watch_filter(ctx, request.clone())?;
        let authorization = authorization.ok_or_else(|| {
            Error::unauthenticated("missing credentials: send Authorization: Bearer bck_<id>.<secret>")
        })?;
        let watch = self.store.event_watch_open(&ctx.caller.principal_id, ctx.caller.tenant_id.as_deref())?;
        let last_check = self.store.event_watch_grant(&grant_name(authorization, &request));
        let grant =
            Grant { ctx: ctx.clone(), authorization: Credentials(authorization.to_owned()), request, last_check };
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(self.clone().event_watch_feed(grant, filter, watch, tx));
        Ok(rx)
    }

    /// Feeds one watch. `filter.after` is the cursor of the last event sent; `covered` the
    /// cursor up to which nothing more is owed to this watch.
    async fn event_watch_feed(
        self,
        grant: Grant,
        mut filter: EventFilter,
        mut watch: EventWatch,
        tx: mpsc::Sender<Result<EventRow>>,
    ) {
        let mut stopping = self.store.signals().stopping();
        let mut revoked = self.store.signals().access_subscribe();
        if let Err(error) = self.event_watch_catch_up(&mut filter, &tx).await {
            let _ = tx.send(Err(error)).await;
            return;
        }
        let mut covered = filter.after.max(watch.head.unwrap_or(0));
        let mut next_check = Instant::now() + WATCH_RECHECK;
        loop {
            // Biased: a revocation or a stop is seen before a batch that came with it.
            let batch = tokio::select! {
                biased;
                _ = stopping.changed() => {
                    let message = "the server is stopping; watch again after the last cursor";
                    let _ = tx.send(Err(Error::unavailable(message))).await;
                    return;
                }
                () = tx.closed() => return,
                _ = revoked.changed() => None,
                () = sleep_until(next_check) => None,
                batch = watch.batches.recv() => Some(batch),
            };
            let sent = match batch {
                None => {
                    next_check = Instant::now() + WATCH_RECHECK;
                    self.event_watch_check(&grant).await.map(|()| true)
                }
                Some(Ok(batch)) => self.event_watch_send(&batch, &mut filter, &mut covered, &tx).await,
                // Fell behind the backlog: the next batch starts past `covered`, and the gap is
                // read from the store.
                Some(Err(broadcast::error::RecvError::Lagged(_))) => Ok(true),
                Some(Err(broadcast::error::RecvError::Closed)) => {
                    Err(Error::unavailable("the event poller stopped; watch again after the last cursor"))
                }
            };
            match sent {
                Ok(true) => {}
                Ok(false) => return,
                Err(error) => {
                    let _ = tx.send(Err(error)).await;
                    return;
                }
            }
        }
    }

    /// Checks the watch's caller again, unless another watch of the same grant passed since the
    /// last revocation and within half the interval; one check at a time per grant, so that the
    /// watches of one grant woken together make one check.
    async fn event_watch_check(&self, grant: &Grant) -> Result<()> {
        let mut last = grant.last_check.lock().await;
        let generation = self.store.signals().access_generation();
        if last.is_some_and(|(at, when)| at == generation && when.elapsed() < WATCH_RECHECK / 2) {
            self.store.event_watch_check_shared();
            return Ok(());
        }
        self.store.event_watch_check_counted();
        self.event_watch_recheck(&grant.ctx, &grant.authorization.0, &grant.request).await?;
        *last = Some((generation, std::time::Instant::now()));
        Ok(())
    }

    /// Sends a batch's events that this watch wants and has not had, reading first from the
    /// store what lies between `covered` and the batch. `Ok(false)` when the client went away.
    async fn event_watch_send(
        &self,
        batch: &Arc<EventBatch>,
        filter: &mut EventFilter,
        covered: &mut i64,
        tx: &mpsc::Sender<Result<EventRow>>,
    ) -> Result<bool> {
        if batch.after > *covered && !self.event_watch_catch_up(filter, tx).await? {
            return Ok(false);
        }
        for event in &batch.events {
            if event.seq <= filter.after || !wants(filter, event) {
                continue;
            }
            filter.after = event.seq;
            if tx.send(Ok(event.clone())).await.is_err() {
                return Ok(false);
            }
        }
        *covered = (*covered).max(batch.last());
        Ok(true)
    }

    /// Sends, from the store, every event after `filter.after` that is committed now.
    /// `Ok(false)` when the client went away.
    async fn event_watch_catch_up(
        &self,
        filter: &mut EventFilter,
        tx: &mpsc::Sender<Result<EventRow>>,
    ) -> Result<bool> {
        loop {
            let events = self.store.event_list_after(filter).await?;
            let full = events.len() as i64 == filter.limit;
            for event in events {
                filter.after = event.seq;
                if tx.send(Ok(event)).await.is_err() {
                    return Ok(false);
                }
            }
            if !full {
                return Ok(true);
            }
        }
    }
}

/// Whether `event` passes the filter, as `event_list_after` would select it.
fn wants(filter: &EventFilter, event: &EventRow) -> bool {
    filter.tenant_id.as_ref().is_none_or(|tenant| *tenant == event.tenant_id)
        && event.event_type.starts_with(&filter.type_prefix)
        && (filter.subject.is_empty() || filter.subject == event.subject)
}
