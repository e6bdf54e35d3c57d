//! The worker's loop: claim due work with leases, run passes concurrently, renew the leases, record
//! outcomes, sleep until the next due time, a wake-up or the tick, and stop cleanly.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::metering::{METERING_KIND, METERING_OBJECT};
use super::node_liveness::{NODE_LIVENESS_KIND, NODE_LIVENESS_OBJECT, NodeLiveness};
use super::relay::{NatsRelay, RELAY_KIND, RELAY_OBJECT};
use super::{Backoff, Metering, Next, Noop, Outcome, Pass, Reconciler, Schedule, wake};
use crate::error::{Error, Result};
use crate::measured::CallRecord;
use crate::provider::ErrorClass;
use crate::store::{OperationRow, Store, WorkItem, WorkResult, now_micros};

/// How a worker runs; every field has a default fit for production.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The longest an idle worker sleeps before looking for due work again.
    pub tick: Duration,
    /// How long a lease lasts unless renewed; a dead worker's objects wait this long.
    pub lease: Duration,
    /// Passes at once.
    pub concurrency: usize,
    /// Overrides every kind's converging interval (tests, `bcctl dev`).
    pub converging: Option<Duration>,
    /// Overrides every kind's settled interval (tests, `bcctl dev`).
    pub settled: Option<Duration>,
    /// Overrides one kind's intervals: kind, converging, settled (see [`parse_kind_intervals`]);
    /// wins over the two above.
    pub kind_intervals: Vec<(String, Duration, Duration)>,
    /// How often the metering pass runs.
    pub metering_interval: Duration,
    /// How often the sweep that marks silent nodes `notReady` runs.
    pub node_liveness_interval: Duration,
    /// How long a stopping worker lets running passes finish before releasing their leases.
    pub shutdown_grace: Duration,
    /// Runs the `noop` kind with passes this long (tests and benchmarks only).
    pub noop_pass: Option<Duration>,
    /// Relays events to the NATS JetStream server at this URL.
    pub nats_url: Option<String>,
    /// How often the relay looks for new events once caught up.
    pub relay_interval: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            tick: Duration::from_secs(1),
            lease: Duration::from_secs(30),
            concurrency: 16,
            converging: None,
            settled: None,
            kind_intervals: Vec::new(),
            metering_interval: Duration::from_secs(300),
            node_liveness_interval: Duration::from_secs(5),
            shutdown_grace: Duration::from_secs(10),
            noop_pass: None,
            nats_url: None,
            relay_interval: Duration::from_millis(500),
        }
    }
}

/// The worker's runtime.
#[derive(Clone)]
pub struct Worker {
    /// Where desired and observed state live.
    store: Store,
    /// How it runs.
    config: WorkerConfig,
    /// The kinds it runs.
    reconcilers: Vec<Arc<dyn Reconciler>>,
    /// Its lease owner id, unique per process run.
    id: String,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.reconcilers.iter().map(|r| r.kind()).collect();
        f.debug_struct("Worker").field("id", &self.id).field("kinds", &kinds).finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker over `store` with the built-in kinds (metering, and `noop` when configured).
    pub fn new(store: Store, config: WorkerConfig) -> Self {
        let mut reconcilers: Vec<Arc<dyn Reconciler>> = vec![
            Arc::new(Metering { interval: config.metering_interval }),
            Arc::new(NodeLiveness { interval: config.node_liveness_interval }),
        ];
        if let Some(pass) = config.noop_pass {
            reconcilers.push(Arc::new(Noop { pass }));
        }
        if let Some(url) = &config.nats_url {
            reconcilers.push(Arc::new(NatsRelay::new(url.clone(), config.relay_interval)));
        }
        Self { store, config, reconcilers, id: crate::ids::random("wkr") }
    }

    /// Adds a kind.
    pub fn with_reconciler(mut self, reconciler: Arc<dyn Reconciler>) -> Self {
        self.reconcilers.push(reconciler);
        self
    }

    /// Adds kinds (those of [`registry`](super::registry), say).
    pub fn with_reconcilers(self, reconcilers: impl IntoIterator<Item = Arc<dyn Reconciler>>) -> Self {
        reconcilers.into_iter().fold(self, Self::with_reconciler)
    }

    /// This worker's lease owner id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Refuses a store whose migrations are not all applied: a worker must not act on a schema
    /// it does not know.
    pub async fn check_store(&self) -> Result<()> {
        let pending = self.store.pending_migrations().await?;
        if pending.is_empty() {
            Ok(())
        } else {
            Err(Error::unavailable(format!("the database lacks migrations {pending:?}; run `bc-server migrate` first")))
        }
    }

    /// Runs until `shutdown` resolves, then stops claiming, lets running passes finish for the
    /// grace period, gives back the leases of those that did not, and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        self.check_store().await?;
        self.store.work_ensure(METERING_KIND, METERING_OBJECT, now_micros()).await?;
        self.store.work_ensure(NODE_LIVENESS_KIND, NODE_LIVENESS_OBJECT, now_micros()).await?;
        if self.config.nats_url.is_some() {
            self.store.work_ensure(RELAY_KIND, RELAY_OBJECT, now_micros()).await?;
        }
        let listener = wake::spawn_listener(&self.store);
        let _listener_guard = listener.as_ref().map(|task| AbortOnDrop(task.abort_handle()));
        let lease_valid_until = Arc::new(AtomicI64::new(i64::MAX));
        let renewer = tokio::spawn(renew(self.clone(), lease_valid_until.clone()));
        // A worker whose task is cancelled (an in-process kill) must stop renewing its leases,
        // or its objects would never be taken over.
        let _renewer_guard = AbortOnDrop(renewer.abort_handle());
        tracing::info!(worker = %self.id, tick_ms = self.config.tick.as_millis() as u64, "worker started");

        let mut wake = self.store.signals().subscribe();
        let permits = Arc::new(Semaphore::new(self.config.concurrency.max(1)));
        let mut passes = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            while passes.try_join_next().is_some() {}
            let mut more = false;
            for reconciler in &self.reconcilers {
                let free = permits.available_permits();
                if free == 0 {
                    break;
                }
                let now = now_micros();
                let lease_until = now + self.config.lease.as_micros() as i64;
                let items =
                    match self.store.work_claim_due(reconciler.kind(), &self.id, free as i64, now, lease_until).await {
                        Ok(items) => items,
                        Err(error) => {
                            tracing::warn!(kind = reconciler.kind(), %error, "claiming work failed");
                            Vec::new()
                        }
                    };
                more |= items.len() == free;
                for item in items {
                    let permit = permits.clone().acquire_owned().await.expect("the semaphore is never closed");
                    let pass = Pass { item, store: self.store.clone(), worker_id: self.id.clone() };
                    let worker = self.clone();
                    let reconciler = reconciler.clone();
                    let valid = lease_valid_until.clone();
                    passes.spawn(async move {
                        worker.run_pass(reconciler, pass, valid).await;
                        drop(permit);
                    });
                }
            }
            let sleep = if permits.available_permits() == 0 {
                // Busy: the next thing to do is to start another pass when one ends.
                self.config.tick
            } else if more {
                Duration::ZERO
            } else {
                self.until_next_due().await
            };
            tokio::select! {
                () = &mut shutdown => break,
                _ = wake.changed() => {}
                () = tokio::time::sleep(sleep) => {}
                Some(_) = passes.join_next(), if !passes.is_empty() => {}
            }
        }

        tracing::info!(worker = %self.id, running = passes.len(), "worker stopping: no new claims");
        let grace = tokio::time::sleep(self.config.shutdown_grace);
        tokio::pin!(grace);
        while !passes.is_empty() {
            tokio::select! {
                _ = passes.join_next() => {}
                () = &mut grace => {
                    tracing::warn!(running = passes.len(), "passes still running after the grace period; releasing them");
                    passes.abort_all();
                    while passes.join_next().await.is_some() {}
                }
            }
        }
        renewer.abort();
        if let Some(listener) = listener {
            listener.abort();
        }
        for reconciler in &self.reconcilers {
            reconciler.shutdown().await;
        }
        let released = self.store.work_release_leases(&self.id).await?;
        tracing::info!(worker = %self.id, released, "worker stopped");
        Ok(())
    }

    /// How long to sleep before the earliest due object of any kind, at most the tick.
    async fn until_next_due(&self) -> Duration {
        let mut next = None::<i64>;
        for reconciler in &self.reconcilers {
            match self.store.work_next_due(reconciler.kind()).await {
                Ok(Some(due)) => next = Some(next.map_or(due, |n| n.min(due))),
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "reading the next due time failed"),
            }
        }
        let tick = self.config.tick;
        match next {
            // At least a millisecond: a row due in the past but not claimable (a race) must not spin.
            Some(due) => Duration::from_micros((due - now_micros()).max(1000) as u64).min(tick),
            None => tick,
        }
    }

    /// The kind's schedule with the configured overrides.
    fn schedule_of(&self, reconciler: &dyn Reconciler) -> Schedule {
        let mut schedule = reconciler.schedule();
        if let Some(converging) = self.config.converging {
            schedule.converging = converging;
        }
        if let Some(settled) = self.config.settled {
            schedule.settled = settled;
        }
        if let Some((_, converging, settled)) = self.config.kind_intervals.iter().find(|(k, ..)| k == reconciler.kind())
        {
            schedule.converging = *converging;
            schedule.settled = *settled;
        }
        schedule
    }

    /// Runs one pass and records its outcome. The pass is abandoned, recording nothing, if the
    /// leases could not be renewed in time: another worker may then own the object.
    async fn run_pass(&self, reconciler: Arc<dyn Reconciler>, pass: Pass, lease_valid_until: Arc<AtomicI64>) {
        let started = Instant::now();
        let item = pass.item.clone();
        let running = {
            let reconciler = reconciler.clone();
            let tenant = pass.item.tenant_id.clone().unwrap_or_default();
            tokio::spawn(async move {
                let work = crate::measured::recording(reconciler.reconcile(&pass));
                crate::provider::pacing::for_tenant(tenant, work).await
            })
        };
        let abort = running.abort_handle();
        // Cancelling this pass (the worker killed) cancels the reconcile it runs.
        let _running_guard = AbortOnDrop(abort.clone());
        let (outcome, calls) = tokio::select! {
            joined = running => match joined {
                Ok(done) => done,
                Err(error) => (Outcome::transient(format!("the pass failed: {error}")), Vec::new()),
            },
            () = lease_lost(&lease_valid_until) => {
                abort.abort();
                tracing::warn!(kind = %item.kind, object = %item.object_id, "lease renewals failed; pass abandoned");
                self.give_back(&item).await;
                return;
            }
        };
        let problem = Problem::of(&outcome, &calls);
        let result = self.result_of(reconciler.as_ref(), &item, &outcome, problem, started.elapsed());
        if let Err(error) = self.store.operation_log_append(&item.object_id, &item.kind, &log_rows(calls)).await {
            tracing::warn!(kind = %item.kind, object = %item.object_id, %error, "recording the pass's calls failed");
        }
        match self.store.work_complete(&item, &self.id, &result).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(kind = %item.kind, object = %item.object_id, "lease lost before the pass ended")
            }
            Err(error) => {
                tracing::warn!(kind = %item.kind, object = %item.object_id, %error, "recording a pass failed");
                self.give_back(&item).await;
            }
        }
        if let Some(error) = outcome.error() {
            tracing::info!(kind = %item.kind, object = %item.object_id, attempts = result.attempts, error, "pass failed");
        }
    }

    /// Gives back the lease of a pass that ended without recording its result. The renewals
    /// extend every lease this worker holds, so a lease left behind would be kept forever and
    /// its object never reconciled again; this retries until the store answers (an expired
    /// lease another worker took meanwhile is left alone).
    async fn give_back(&self, item: &WorkItem) {
        while let Err(error) = self.store.work_release_lease(&item.kind, &item.object_id, &self.id).await {
            tracing::warn!(kind = %item.kind, object = %item.object_id, %error, "giving a lease back failed; retrying");
            tokio::time::sleep(self.config.lease / 3).await;
        }
    }

    /// What to record for `outcome`, whose failure (if it failed) is `problem`: a failure
    /// that waits for a person is retried slowly ([`Backoff::PERSON`]; a change wakes it), a used
    /// up quota on [`Backoff::QUOTA`], a throttled one when the provider said.
    fn result_of(
        &self,
        reconciler: &dyn Reconciler,
        item: &WorkItem,
        outcome: &Outcome,
        problem: Option<Problem>,
        took: Duration,
    ) -> WorkResult {
        let schedule = self.schedule_of(reconciler);
        let now = now_micros();
        let failed = outcome.error().is_some();
        let attempts = if failed { item.attempts + 1 } else { 0 };
        let delay = match &outcome.next {
            // A failure retried on its own backoff (the spec's delete backoff) keeps it.
            Next::Transient(_) | Next::Permanent(_) if problem.is_some_and(Problem::waits_for_a_person) => {
                Backoff::PERSON.delay(attempts)
            }
            // A quota a pass will try again (one in `error` keeps the settled refresh).
            Next::Transient(_) if problem.is_some_and(|p| p.from_provider && p.class == ErrorClass::Quota) => {
                Backoff::QUOTA.delay(attempts)
            }
            Next::Transient(_) | Next::Permanent(_) if problem.is_some_and(|p| p.retry_after.is_some()) => {
                problem.and_then(|p| p.retry_after).unwrap_or_default()
            }
            Next::Converging => schedule.converging,
            Next::Settled | Next::Permanent(_) => schedule.settled,
            Next::After(delay) => *delay,
            Next::Remove => Duration::ZERO,
            Next::Transient(_) => schedule.backoff.delay(attempts),
            Next::Retry { backoff, .. } => backoff.delay(attempts),
        };
        let state = outcome.state.clone().unwrap_or_else(|| item.state.clone());
        let state_deadline = reconciler.state_deadline(&state).map(|d| now + d.as_micros() as i64);
        WorkResult {
            next_due: now.saturating_add(delay.as_micros().min(i64::MAX as u128) as i64),
            attempts,
            last_error: outcome.error().map(str::to_owned),
            problem_class: problem.map(|p| p.class.as_str().to_owned()),
            state,
            state_deadline,
            remove: outcome.next == Next::Remove,
            pass_micros: took.as_micros() as i64,
            now,
        }
    }
}

/// The class of a failed pass and the wait the provider asked for: those of the pass's last
/// failed call, or, when no call failed (the store did), `retryable` (`invalid` for a failure
/// the pass itself called permanent).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Problem {
    class: ErrorClass,
    retry_after: Option<Duration>,
    /// Whether a provider's answer said the class (not the pass's own failure).
    from_provider: bool,
}

impl Problem {
    /// Whether the provider's answer says only a person can fix it.
    fn waits_for_a_person(self) -> bool {
        self.from_provider && self.class.waits_for_a_person()
    }
}

impl Problem {
    fn of(outcome: &Outcome, calls: &[CallRecord]) -> Option<Problem> {
        outcome.error()?;
        let failed = calls.iter().rev().find(|call| call.outcome == "error");
        let said = failed.and_then(|call| call.error_class).and_then(ErrorClass::parse);
        let fallback =
            if matches!(outcome.next, Next::Permanent(_)) { ErrorClass::Invalid } else { ErrorClass::Retryable };
        let class = said.unwrap_or(fallback);
        let retry_after = failed.and_then(|call| call.retry_after).filter(|_| class == ErrorClass::Throttled);
        Some(Problem { class, retry_after, from_provider: said.is_some() })
    }
}

/// The operation log's rows of a pass's calls.
fn log_rows(calls: Vec<CallRecord>) -> Vec<OperationRow> {
    calls
        .into_iter()
        .map(|call| OperationRow {
            id: crate::ids::random("opl"),
            resource_id: String::new(),
            work_kind: String::new(),
            at_micros: call.at_micros,
            duration_micros: call.duration.as_micros().min(i64::MAX as u128) as i64,
            call: call.call,
            provider_operation_id: call.provider_operation_id.unwrap_or_default(),
            outcome: call.outcome.to_owned(),
            error_class: call.error_class.unwrap_or_default().to_owned(),
            message: call.message,
        })
        .collect()
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Parses per-kind intervals: `kind=<converging ms>/<settled ms>`, comma-separated
/// (`kubernetes-cluster=5000/60000,load-balancer=2000/30000`).
pub fn parse_kind_intervals(text: &str) -> std::result::Result<Vec<(String, Duration, Duration)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let bad = || format!("{part:?} is not kind=<converging ms>/<settled ms>");
            let (kind, intervals) = part.split_once('=').ok_or_else(bad)?;
            let (converging, settled) = intervals.split_once('/').ok_or_else(bad)?;
            let ms = |n: &str| n.trim().parse::<u64>().map(Duration::from_millis).map_err(|_| bad());
            Ok((kind.trim().to_owned(), ms(converging)?, ms(settled)?))
        })
        .collect()
}

/// Renews this worker's leases every third of a lease; publishes until when they are known good.
async fn renew(worker: Worker, valid_until: Arc<AtomicI64>) {
    let lease = worker.config.lease.as_micros() as i64;
    let mut last_good = now_micros();
    loop {
        tokio::time::sleep(worker.config.lease / 3).await;
        let now = now_micros();
        match worker.store.work_renew_leases(&worker.id, now + lease).await {
            Ok(_) => last_good = now,
            Err(error) => tracing::warn!(%error, "renewing leases failed"),
        }
        // Leave a margin: a pass stops well before its lease can run out.
        valid_until.store(last_good + lease * 3 / 4, Ordering::Relaxed);
    }
}

/// Resolves once the leases can no longer be trusted.
async fn lease_lost(valid_until: &AtomicI64) {
    loop {
        let left = valid_until.load(Ordering::Relaxed) - now_micros();
        if left <= 0 {
            return;
        }
        tokio::time::sleep(Duration::from_micros(left.min(1_000_000) as u64)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_intervals_parse_and_refuse_what_they_cannot_read() {
        let parsed = parse_kind_intervals("kubernetes-cluster=5000/60000, noop=1/2").unwrap();
        assert_eq!(
            parsed,
            vec![
                ("kubernetes-cluster".to_owned(), Duration::from_secs(5), Duration::from_secs(60)),
                ("noop".to_owned(), Duration::from_millis(1), Duration::from_millis(2)),
            ]
        );
        assert!(parse_kind_intervals("").unwrap().is_empty());
        for bad in ["noop", "noop=5", "noop=a/b"] {
            assert!(parse_kind_intervals(bad).unwrap_err().contains(bad), "{bad}");
        }
    }
}
