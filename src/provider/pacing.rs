//! Provider calls at the pace their accounts allow: before each call an adapter asks its
//! account's [`AccountPacer`] for a turn, and after it tells the pacer what the answer said.
//!
//! The budget lives in the store ([`Store::pacing_take`]), so every worker process spends the
//! same one. Inside a process, one dispatcher per account takes calls from the store (several at
//! once when several passes wait) and hands them out round-robin across tenants, so one tenant's
//! thousand load balancers do not starve another's one: the tenant is the one the runtime names
//! for the pass with [`for_tenant`].
//!
//! The answer of a call moves the budget for everyone: a `Retry-After` (or DigitalOcean's
//! `ratelimit-remaining: 0`) stops the account's calls until then, and then lets one call out at
//! a time until an answer says there is room again; credentials the provider refuses (401, or a
//! key its token endpoint refuses; a 403 is one object's permission) open the account's breaker (its calls are refused here, one probe every few minutes
//! goes out, and closes it when it works). A pacer also carries the account's credentials as of
//! its latest take: an update through the API is used from the next call of every worker.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::error::{ErrorClass, ErrorKind, ProviderError, ProviderResult};
use crate::measured::accounts as figures;
use crate::secrets::{Secret, SecretKey};
use crate::store::{CallReport, OpenBreaker, ReportAnswer, Store, Verdict, now_micros};

/// The longest a dispatcher sleeps before asking the store again (a wait the store computed
/// can shorten when the account's limits change).
const LONGEST_NAP: Duration = Duration::from_secs(5);

/// Calls a take asks for beyond those waiting, kept for the next calls of this process for
/// [`SURPLUS_KEPT`]: under load most calls then need no store round trip of their own.
const PREFETCH: u32 = 4;

/// How long calls taken ahead stay usable; unused ones are lost (the budget was spent), so the
/// account never goes past its limits, and another process's turn is not held long.
const SURPLUS_KEPT: Duration = Duration::from_millis(250);

/// The longest a call waits for budget inside its pass: past it the call fails `throttled` with
/// the wait, so the pass ends, gives its worker slot back and comes again when the budget does.
const LONGEST_WAIT_IN_PASS: Duration = Duration::from_secs(10);

tokio::task_local! {
    static TENANT: String;
}

/// Runs `work` (a pass) as `tenant`'s: its provider calls wait their turn among that tenant's.
pub async fn for_tenant<T>(tenant: String, work: impl Future<Output = T>) -> T {
    TENANT.scope(tenant, work).await
}

fn current_tenant() -> String {
    TENANT.try_with(Clone::clone).unwrap_or_default()
}

/// A turn given to one call.
#[derive(Clone, Debug)]
pub struct Ticket {
    /// The account's version the call is made with.
    pub version: i64,
    /// Whether the call is the probe of an open breaker.
    pub probe: bool,
    /// Whether the call is the one let out after the provider's hold.
    pub cautious: bool,
    /// The account's credentials, when they changed since the pacer last handed them out.
    pub credentials: Option<Secret>,
}

/// What a take hands a waiting call: the version, whether it is a probe, whether it is the
/// call after a provider's hold, or the open breaker.
type Turn = ProviderResult<(i64, bool, bool, Option<OpenBreaker>)>;

/// The calls of one account waiting in this process, by tenant.
#[derive(Default)]
struct Queue {
    waiting: BTreeMap<String, VecDeque<oneshot::Sender<Turn>>>,
    /// The tenant served last: the next turn goes to the one after it.
    last: Option<String>,
    /// Whether a dispatcher runs.
    dispatching: bool,
}

impl Queue {
    fn drop_gone(&mut self) {
        for senders in self.waiting.values_mut() {
            senders.retain(|sender| !sender.is_closed());
        }
        self.waiting.retain(|_, senders| !senders.is_empty());
    }

    fn len(&self) -> usize {
        self.waiting.values().map(VecDeque::len).sum()
    }

    /// The next waiter in round-robin order across tenants.
    fn next(&mut self) -> Option<oneshot::Sender<Turn>> {
        let after = self.last.clone();
        let tenant = after
            .as_ref()
            .and_then(|last| {
                self.waiting.range::<String, _>((std::ops::Bound::Excluded(last), std::ops::Bound::Unbounded)).next()
            })
            .or_else(|| self.waiting.iter().next())
            .map(|(tenant, _)| tenant.clone())?;
        let senders = self.waiting.get_mut(&tenant)?;
        let sender = senders.pop_front();
        if senders.is_empty() {
            self.waiting.remove(&tenant);
        }
        self.last = Some(tenant);
        sender
    }
}

/// Calls taken ahead from the budget, usable until `until`.
struct Surplus {
    calls: u32,
    version: i64,
    until: Instant,
}

/// One account's state in this process.
struct Gate {
    account_id: String,
    queue: Mutex<Queue>,
    surplus: Mutex<Surplus>,
    /// The version whose credentials were last handed out, and them.
    credentials: Mutex<(i64, Option<Secret>)>,
}

/// The pacers of this process's accounts.
pub struct Pacing {
    store: Store,
    key: SecretKey,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

impl std::fmt::Debug for Pacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pacing").finish_non_exhaustive()
    }
}

impl Pacing {
    /// Pacing over `store`'s budgets; `key` opens credentials that change under way.
    pub fn new(store: Store, key: SecretKey) -> Arc<Pacing> {
        Arc::new(Pacing { store, key, gates: Mutex::default() })
    }

    /// The pacer of `account_id`, whose credentials as of `version` are `credentials`.
    pub fn account(self: &Arc<Self>, account_id: &str, version: i64, credentials: &Secret) -> AccountPacer {
        let gate = self
            .gates
            .lock()
            .expect("the pacing lock is never poisoned")
            .entry(account_id.to_owned())
            .or_insert_with(|| {
                Arc::new(Gate {
                    account_id: account_id.to_owned(),
                    queue: Mutex::default(),
                    surplus: Mutex::new(Surplus { calls: 0, version, until: Instant::now() }),
                    credentials: Mutex::new((version, Some(credentials.clone()))),
                })
            })
            .clone();
        {
            let mut known = gate.credentials.lock().expect("the credentials lock is never poisoned");
            if version > known.0 {
                *known = (version, Some(credentials.clone()));
            }
        }
        AccountPacer { pacing: self.clone(), gate, seen_version: Arc::new(Mutex::new(version)) }
    }

    /// Hands out turns of `gate`'s account while calls wait.
    async fn dispatch(self: Arc<Self>, gate: Arc<Gate>) {
        let label = gate.account_id.as_str();
        loop {
            let wanted = {
                let mut queue = gate.queue.lock().expect("the pacing lock is never poisoned");
                queue.drop_gone();
                let waiting = queue.len();
                if waiting == 0 {
                    queue.dispatching = false;
                    return;
                }
                u32::try_from(waiting).unwrap_or(u32::MAX).saturating_add(PREFETCH)
            };
            let known = gate.credentials.lock().expect("the credentials lock is never poisoned").0;
            let take = match self.store.pacing_take(&gate.account_id, known, wanted, now_micros()).await {
                Ok(take) => take,
                Err(error) => {
                    let failure = ProviderError::new(
                        ErrorKind::Transient,
                        "pacing",
                        format!("cannot read the budget of account {:?}: {}", gate.account_id, error.message),
                    );
                    let next = gate.queue.lock().expect("the pacing lock is never poisoned").next();
                    if let Some(sender) = next {
                        let _ = sender.send(Err(failure));
                    }
                    continue;
                }
            };
            if let Some(sealed) = &take.sealed_credentials {
                match self.key.open(sealed, &gate.account_id) {
                    Ok(opened) => {
                        *gate.credentials.lock().expect("the credentials lock is never poisoned") =
                            (take.version, Some(opened));
                    }
                    Err(error) => tracing::warn!(account = %gate.account_id, %error, "new credentials do not open"),
                }
            }
            match take.verdict {
                Verdict::Wait(micros) => {
                    let wait = Duration::from_micros(u64::try_from(micros).unwrap_or(0));
                    if wait > LONGEST_WAIT_IN_PASS {
                        let mut queue = gate.queue.lock().expect("the pacing lock is never poisoned");
                        while let Some(sender) = queue.next() {
                            let _ = sender.send(Err(out_of_budget(&gate.account_id, wait)));
                        }
                        continue;
                    }
                    tokio::time::sleep(wait.min(LONGEST_NAP)).await;
                }
                Verdict::Refused(breaker) => {
                    figures::breaker(label, true);
                    let mut queue = gate.queue.lock().expect("the pacing lock is never poisoned");
                    while let Some(sender) = queue.next() {
                        figures::refused(label);
                        let _ = sender.send(Ok((take.version, false, false, Some(breaker.clone()))));
                    }
                }
                Verdict::Go { granted, probe, cautious } => {
                    if !probe {
                        figures::breaker(label, false);
                    }
                    let mut queue = gate.queue.lock().expect("the pacing lock is never poisoned");
                    let mut left = granted;
                    while left > 0 {
                        let Some(sender) = queue.next() else { break };
                        if sender.send(Ok((take.version, probe, cautious, None))).is_ok() {
                            figures::call(label);
                            left -= 1;
                        }
                    }
                    if left > 0 && !probe && !cautious {
                        let mut surplus = gate.surplus.lock().expect("the surplus lock is never poisoned");
                        *surplus = Surplus { calls: left, version: take.version, until: Instant::now() + SURPLUS_KEPT };
                    }
                }
            }
        }
    }
}

/// What a finished call tells its pacer.
pub enum Answered<'a> {
    /// It worked; `pace_until` (µs) when the provider said no budget is left until then.
    Ok {
        /// No calls before this, when the answer said the budget is spent.
        pace_until: Option<i64>,
    },
    /// It failed.
    Failed(&'a ProviderError),
}

/// What the caller of a failed call should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCall {
    /// Return the answer.
    Done,
    /// The credentials changed while the call was refused: make it again (once).
    Again,
}

/// One account's pacer, held by its adapters.
#[derive(Clone)]
pub struct AccountPacer {
    pacing: Arc<Pacing>,
    gate: Arc<Gate>,
    /// The version of the credentials this adapter holds.
    seen_version: Arc<Mutex<i64>>,
}

impl std::fmt::Debug for AccountPacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountPacer").field("account", &self.gate.account_id).finish_non_exhaustive()
    }
}

impl AccountPacer {
    /// Waits for the account's budget to let one call of `provider` out, in the pass's
    /// tenant's turn. An open breaker is a `permission` error that says since when and what to do.
    pub async fn admit(&self, provider: &'static str) -> ProviderResult<Ticket> {
        let label = self.gate.account_id.as_str();
        let (sender, receiver) = oneshot::channel();
        let (taken_ahead, spawn) = {
            let mut queue = self.gate.queue.lock().expect("the pacing lock is never poisoned");
            // A call taken ahead goes only to a caller who jumps no queue.
            let ahead = queue.waiting.is_empty().then(|| self.take_surplus()).flatten();
            if ahead.is_none() {
                queue.waiting.entry(current_tenant()).or_default().push_back(sender);
            }
            let spawn = ahead.is_none() && !std::mem::replace(&mut queue.dispatching, true);
            (ahead, spawn)
        };
        if spawn {
            tokio::spawn(self.pacing.clone().dispatch(self.gate.clone()));
        }
        let started = Instant::now();
        let (version, probe, cautious, breaker) = match taken_ahead {
            Some(version) => {
                figures::call(label);
                (version, false, false, None)
            }
            None => {
                receiver.await.map_err(|_| ProviderError::new(ErrorKind::Transient, provider, "pacing stopped"))??
            }
        };
        figures::waited(label, started.elapsed());
        if let Some(breaker) = breaker {
            return Err(refused(provider, &self.gate.account_id, &breaker));
        }
        let mut seen = self.seen_version.lock().expect("the version lock is never poisoned");
        let known = self.gate.credentials.lock().expect("the credentials lock is never poisoned").clone();
        let credentials = (known.0 > *seen).then(|| known.1.clone()).flatten();
        if credentials.is_some() {
            *seen = known.0;
        }
        Ok(Ticket { version: version.max(*seen), probe, cautious, credentials })
    }

    /// One call taken ahead, if one is left and still usable: the account's version it was
    /// taken at.
    fn take_surplus(&self) -> Option<i64> {
        let mut surplus = self.gate.surplus.lock().expect("the surplus lock is never poisoned");
        if surplus.calls == 0 || surplus.until <= Instant::now() {
            return None;
        }
        surplus.calls -= 1;
        Some(surplus.version)
    }

    /// Drops the calls taken ahead: the provider refused the account or asked for a pause.
    fn drop_surplus(&self) {
        self.gate.surplus.lock().expect("the surplus lock is never poisoned").calls = 0;
    }

    /// Tells the account's budget and breaker what the call made with `ticket` was answered.
    pub async fn answered(&self, ticket: &Ticket, answer: Answered<'_>) -> AfterCall {
        let now = now_micros();
        let account = &self.gate.account_id;
        let label = account.as_str();
        let report = match answer {
            Answered::Ok { pace_until } => match (ticket.probe, pace_until) {
                (true, _) => Some(CallReport::CredentialsWork),
                (false, Some(until)) => Some(CallReport::PaceUntil(until)),
                (false, None) if ticket.cautious => Some(CallReport::HoldOver),
                (false, None) => None,
            },
            Answered::Failed(error) => {
                if error.status == Some(429) {
                    figures::throttled(label);
                }
                match error.class() {
                    // Refused credentials (401, or Google's token endpoint refusing the key), not a
                    // permission one object lacks (403): that stays the object's problem.
                    ErrorClass::Permission if error.status == Some(401) || error.reason == "invalid_grant" => {
                        Some(CallReport::CredentialsRefused { version: ticket.version, message: error.message.clone() })
                    }
                    _ => error.retry_after.map(|wait| {
                        CallReport::PaceUntil(now + i64::try_from(wait.as_micros()).unwrap_or(i64::MAX / 2))
                    }),
                }
            }
        };
        let Some(report) = report else { return AfterCall::Done };
        if matches!(report, CallReport::PaceUntil(_) | CallReport::CredentialsRefused { .. }) {
            self.drop_surplus();
        }
        match self.pacing.store.pacing_report(account, &report, now).await {
            Ok(ReportAnswer::Stale) => AfterCall::Again,
            Ok(ReportAnswer::Reopened) => {
                tracing::info!(account = %account, "the provider takes the account's credentials again");
                figures::breaker(label, false);
                AfterCall::Done
            }
            Ok(ReportAnswer::Recorded) => {
                if matches!(report, CallReport::CredentialsRefused { .. }) {
                    figures::breaker(label, true);
                    tracing::warn!(account = %account, "the provider refused the account's credentials: its calls stop");
                }
                AfterCall::Done
            }
            Err(error) => {
                tracing::warn!(account = %account, error = %error.message, "cannot record a provider answer's pace");
                AfterCall::Done
            }
        }
    }
}

/// The error of a call that would wait `wait` for the budget of `account`.
fn out_of_budget(account: &str, wait: Duration) -> ProviderError {
    let message = format!(
        "not sent: the calls of account {account} are paced to its rate limits (or the wait its provider asked \
         for); its budget frees a call in {} s",
        wait.as_secs().max(1)
    );
    let mut error = ProviderError::new(ErrorKind::Transient, "pacing", message);
    error.class_hint = Some(ErrorClass::Throttled);
    error.retry_after = Some(wait);
    error
}

/// The error of a call the open breaker of `account` did not let out.
fn refused(provider: &'static str, account: &str, breaker: &OpenBreaker) -> ProviderError {
    let rfc3339 = |micros: i64| prost_types::Timestamp { seconds: micros.div_euclid(1_000_000), nanos: 0 }.to_string();
    let (since, probe) = (rfc3339(breaker.since), rfc3339(breaker.probe_at));
    let message = format!(
        "not sent: the provider refused the credentials of account {account} at {since} ({}); its calls stop \
         until they work again (next check at {probe})",
        breaker.message
    );
    let mut error = ProviderError::new(ErrorKind::Transient, provider, message);
    error.class_hint = Some(ErrorClass::Permission);
    error
}
