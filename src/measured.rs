//! Measured calls: every store operation and provider call is timed and counted by name, so a
//! slow API call or reconcile pass can be traced to the query or provider call that took the
//! time by reading `/metrics`, without a profiler.
//!
//! The families are process-wide because the store and the provider adapters hold no handle on
//! the server's [`Metrics`](crate::telemetry::Metrics); every `Metrics` registers them, so a
//! process that runs several servers (the tests do) shows the sum of all of them.
//!
//! A provider call made inside [`recording`] is also written down ([`CallRecord`]): the worker
//! runs each pass of a resource so, and keeps what its calls did as the resource's operation log.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The outcome of a call that returned `Ok`.
const OK: &str = "ok";
/// The outcome of a call that returned `Err`.
const ERROR: &str = "error";
/// The outcome of a call whose future was dropped before it finished (a timeout, a client that
/// went away): counted too, because a call cut short by a deadline is often the slow one.
const CANCELLED: &str = "cancelled";

/// Labels of a finished store call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreCall {
    /// The store method (`tenant_create`).
    operation: &'static str,
    /// `ok`, `error` or `cancelled`.
    outcome: &'static str,
}

/// Labels of a store method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreOperation {
    /// The store method.
    operation: &'static str,
}

/// Labels of a finished provider call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderCall {
    /// The provider API (`gke`, `gce`, `digitalocean`, `kubernetes`).
    provider: &'static str,
    /// The adapter method (`cluster_create`).
    operation: &'static str,
    /// `ok`, `error` or `cancelled`.
    outcome: &'static str,
}

/// Labels of a provider adapter method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderOperation {
    /// The provider API.
    provider: &'static str,
    /// The adapter method.
    operation: &'static str,
}

/// A latency family; its constructor is a plain function so the family can live in a static.
type Latency<L> = Family<L, Histogram, fn() -> Histogram>;

/// The same buckets as the API's latency: 0.25 ms to about 8 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
}

/// The process's call figures.
struct Families {
    /// Store calls by operation and outcome.
    store_calls: Family<StoreCall, Counter>,
    /// Store call latency by operation.
    store_seconds: Latency<StoreOperation>,
    /// Provider calls by provider, operation and outcome.
    provider_calls: Family<ProviderCall, Counter>,
    /// Provider call latency by provider and operation.
    provider_seconds: Latency<ProviderOperation>,
}

static FAMILIES: LazyLock<Families> = LazyLock::new(|| Families {
    store_calls: Family::default(),
    store_seconds: Family::new_with_constructor(latency_histogram),
    provider_calls: Family::default(),
    provider_seconds: Family::new_with_constructor(latency_histogram),
});

/// Adds the process's call families, and its keys' and re-seal's, to `registry` (families are
/// shared, so registering them in several registries shows the same figures in each).
pub fn register(registry: &mut Registry) {
    accounts::register(registry);
    let families = &*FAMILIES;
    registry.register("store_calls", "Store calls by operation and outcome", families.store_calls.clone());
    registry.register("store_call_seconds", "Store call latency by operation", families.store_seconds.clone());
    registry.register(
        "provider_calls",
        "Provider API calls by provider, operation and outcome",
        families.provider_calls.clone(),
    );
    registry.register(
        "provider_call_seconds",
        "Provider API call latency by provider and operation",
        families.provider_seconds.clone(),
    );
    crate::secrets::register_metrics(registry);
}

/// Runs the store call `call`, then counts it under `operation` with its outcome and records
/// how long it took.
pub async fn store<T, E>(operation: &'static str, call: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    measure(call, move |outcome, seconds| {
        FAMILIES.store_calls.get_or_create(&StoreCall { operation, outcome }).inc();
        FAMILIES.store_seconds.get_or_create(&StoreOperation { operation }).observe(seconds);
    })
    .await
}

/// What a failed provider call says of itself, for its record: its class (`retryable`,
/// `permission`...), its words, the wait the provider asked for and its request id.
pub trait CallFailure {
    /// The failure's class, as the operation log names it.
    fn class(&self) -> &'static str;
    /// What went wrong, in words (never a secret).
    fn message(&self) -> String;
    /// How long the provider asked us to wait.
    fn retry_after(&self) -> Option<Duration>;
    /// The provider's id of the request, when it gave one.
    fn request_id(&self) -> Option<String>;
}

/// One provider call made during a [`recording`].
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// When it began, in microseconds since the epoch.
    pub at_micros: i64,
    /// `gke.nodePools.update`: the provider and its method.
    pub call: String,
    /// The provider's operation id (GKE) or request id, where it gave one.
    pub provider_operation_id: Option<String>,
    /// How long it took.
    pub duration: Duration,
    /// `ok`, `error` or `cancelled`.
    pub outcome: &'static str,
    /// The failure's class; `None` unless `outcome` is `error`.
    pub error_class: Option<&'static str>,
    /// The failure's words; empty unless `outcome` is `error`.
    pub message: String,
    /// The wait the provider asked for with its failure.
    pub retry_after: Option<Duration>,
}

/// The calls of one recording, and the operation id the call under way was given.
#[derive(Debug, Default)]
struct Recording {
    calls: Vec<CallRecord>,
    operation_id: Option<String>,
}

tokio::task_local! {
    static RECORDING: Arc<Mutex<Recording>>;
}

/// Runs `work`, writing down every provider call it makes (in its own task; a call made in a
/// task it spawns is not seen); returns what it returned and the calls, oldest first.
pub async fn recording<T>(work: impl Future<Output = T>) -> (T, Vec<CallRecord>) {
    let recording = Arc::new(Mutex::new(Recording::default()));
    let answer = RECORDING.scope(recording.clone(), work).await;
    let calls = std::mem::take(&mut recording.lock().expect("the recording lock is never poisoned").calls);
    (answer, calls)
}

/// Gives the provider call under way the provider's id of what it started (a GKE operation),
/// for its record. Outside a recording it does nothing.
pub fn operation_id(id: &str) {
    let _ = RECORDING.try_with(|recording| {
        recording.lock().expect("the recording lock is never poisoned").operation_id = Some(id.to_owned());
    });
}

/// Runs the call `call` to `provider`'s API (its method `operation`, `nodePools.update`), then
/// counts it under `operation` with its outcome, records how long it took, and writes it down
/// when a [`recording`] runs.
pub async fn provider<T, E: CallFailure>(
    provider: &'static str,
    operation: &'static str,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let at_micros = now_micros();
    let started = Instant::now();
    let mut written = Written { provider, operation, at_micros, started, failure: None, outcome: CANCELLED };
    let result = measure(call, move |outcome, seconds| {
        FAMILIES.provider_calls.get_or_create(&ProviderCall { provider, operation, outcome }).inc();
        FAMILIES.provider_seconds.get_or_create(&ProviderOperation { provider, operation }).observe(seconds);
    })
    .await;
    written.outcome = if result.is_ok() { OK } else { ERROR };
    if let Err(error) = &result {
        written.failure = Some((error.class(), error.message(), error.retry_after(), error.request_id()));
    }
    result
}

/// A provider call's record under way: written to the recording when dropped, whether the call
/// finished or was cancelled.
struct Written {
    provider: &'static str,
    operation: &'static str,
    at_micros: i64,
    started: Instant,
    outcome: &'static str,
    failure: Option<(&'static str, String, Option<Duration>, Option<String>)>,
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = RECORDING.try_with(|recording| {
            let mut recording = recording.lock().expect("the recording lock is never poisoned");
            let started_id = recording.operation_id.take();
            let (error_class, message, retry_after, request_id) = match self.failure.take() {
                Some((class, message, retry_after, request_id)) => (Some(class), message, retry_after, request_id),
                None => (None, String::new(), None, None),
            };
            recording.calls.push(CallRecord {
                at_micros: self.at_micros,
                call: format!("{}.{}", self.provider, self.operation),
                provider_operation_id: started_id.or(request_id),
                duration: self.started.elapsed(),
                outcome: self.outcome,
                error_class,
                message,
                retry_after,
            });
        });
    }
}

/// Now, in microseconds since the epoch.
fn now_micros() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

/// Awaits `call`; `record` gets its outcome and duration, also when the call is dropped unfinished.
async fn measure<T, E, R: Fn(&'static str, f64)>(call: impl Future<Output = Result<T, E>>, record: R) -> Result<T, E> {
    let mut measurement = Measurement { started: Instant::now(), outcome: CANCELLED, record };
    let result = call.await;
    measurement.outcome = if result.is_ok() { OK } else { ERROR };
    result
}

/// A call under way: records itself when dropped, whether it finished or was cancelled.
struct Measurement<R: Fn(&'static str, f64)> {
    /// When the call began.
    started: Instant,
    /// What to record: `cancelled` until the call finishes.
    outcome: &'static str,
    /// Writes the figures.
    record: R,
}

impl<R: Fn(&'static str, f64)> Drop for Measurement<R> {
    fn drop(&mut self) {
        (self.record)(self.outcome, self.started.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl CallFailure for () {
        fn class(&self) -> &'static str {
            "retryable"
        }
        fn message(&self) -> String {
            "it failed".into()
        }
        fn retry_after(&self) -> Option<Duration> {
            Some(Duration::from_secs(7))
        }
        fn request_id(&self) -> Option<String> {
            None
        }
    }

    #[tokio::test]
    async fn calls_made_in_a_recording_are_written_down_with_their_ids_and_failures() {
        let ((), calls) = recording(async {
            provider("measured_test_log", "things.create", async {
                operation_id("operation-1");
                Ok::<_, ()>(())
            })
            .await
            .unwrap();
            provider("measured_test_log", "things.get", async { Err::<(), ()>(()) }).await.unwrap_err();
        })
        .await;
        let names: Vec<_> = calls.iter().map(|c| (c.call.as_str(), c.outcome)).collect();
        assert_eq!(names, [("measured_test_log.things.create", OK), ("measured_test_log.things.get", ERROR)]);
        assert_eq!(calls[0].provider_operation_id.as_deref(), Some("operation-1"));
        assert_eq!((calls[0].error_class, calls[1].error_class), (None, Some("retryable")));
        assert_eq!((calls[1].message.as_str(), calls[1].retry_after), ("it failed", Some(Duration::from_secs(7))));
        assert_eq!(calls[1].provider_operation_id, None, "an operation id belongs to the call it was given in");
    }

    #[tokio::test]
    async fn calls_outside_a_recording_are_only_counted() {
        let result = provider("measured_test_unrecorded", "things.get", async { Ok::<_, ()>(1) }).await;
        assert_eq!(result, Ok(1));
        let ((), calls) = recording(async {}).await;
        assert!(calls.is_empty());
    }

    /// The value of `series` (a name with its labels, as the text format writes them) in a
    /// registry that holds the families; 0 when it is not there yet.
    fn sample(series: &str) -> f64 {
        let mut registry = Registry::with_prefix("bc");
        register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("writing to a String cannot fail");
        text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok()).unwrap_or_default()
    }

    #[tokio::test]
    async fn a_store_call_is_counted_with_its_outcome_and_observed() {
        let answer = store("measured_test_store", async { Ok::<_, String>(42) }).await;
        assert_eq!(answer, Ok(42), "the call's answer is returned as it was");
        let refused = store("measured_test_store", async { Err::<u8, _>("refused".to_owned()) }).await;
        assert_eq!(refused, Err("refused".to_owned()));
        assert_eq!(sample(r#"bc_store_calls_total{operation="measured_test_store",outcome="ok"}"#), 1.0);
        assert_eq!(sample(r#"bc_store_calls_total{operation="measured_test_store",outcome="error"}"#), 1.0);
        assert_eq!(sample(r#"bc_store_call_seconds_count{operation="measured_test_store"}"#), 2.0);
        assert_eq!(sample(r#"bc_store_call_seconds_bucket{le="+Inf",operation="measured_test_store"}"#), 2.0);
    }

    #[tokio::test]
    async fn a_provider_call_is_counted_with_its_outcome_and_observed() {
        let result = provider("measured_test_cloud", "thing_get", async { Err::<(), _>(()) }).await;
        assert_eq!(result, Err(()));
        let calls = r#"bc_provider_calls_total{provider="measured_test_cloud",operation="thing_get",outcome="error"}"#;
        assert_eq!(sample(calls), 1.0);
        let observed = r#"bc_provider_call_seconds_count{provider="measured_test_cloud",operation="thing_get"}"#;
        assert_eq!(sample(observed), 1.0);
    }

    #[tokio::test]
    async fn a_call_dropped_before_it_finishes_is_counted_as_cancelled() {
        let slow = store("measured_test_cancelled", async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<(), ()>(())
        });
        assert!(tokio::time::timeout(Duration::from_millis(10), slow).await.is_err(), "the call timed out");
        assert_eq!(sample(r#"bc_store_calls_total{operation="measured_test_cancelled",outcome="cancelled"}"#), 1.0);
        assert_eq!(sample(r#"bc_store_calls_total{operation="measured_test_cancelled",outcome="ok"}"#), 0.0);
        let seconds = sample(r#"bc_store_call_seconds_sum{operation="measured_test_cancelled"}"#);
        assert!(seconds >= 0.01, "the time until it was dropped is observed: {seconds}");
    }
}

/// The pace of each provider account's calls ([`crate::provider::pacing`]), per account.
pub mod accounts {
    use std::sync::LazyLock;
    use std::time::Duration;

    use prometheus_client::encoding::EncodeLabelSet;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
    use prometheus_client::registry::Registry;

    /// Labels of an account's figures.
    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct AccountLabel {
        account: String,
    }

    /// The process's pacing figures, per account.
    struct Families {
        calls: Family<AccountLabel, Counter>,
        throttled: Family<AccountLabel, Counter>,
        refused: Family<AccountLabel, Counter>,
        waits: Family<AccountLabel, Histogram, fn() -> Histogram>,
        breaker_open: Family<AccountLabel, Gauge>,
    }

    /// 1 ms to about 4 min.
    fn wait_histogram() -> Histogram {
        Histogram::new(exponential_buckets(0.001, 4.0, 10))
    }

    static FAMILIES: LazyLock<Families> = LazyLock::new(|| Families {
        calls: Family::default(),
        throttled: Family::default(),
        refused: Family::default(),
        waits: Family::new_with_constructor(wait_histogram),
        breaker_open: Family::default(),
    });

    fn label(account: &str) -> AccountLabel {
        AccountLabel { account: account.to_owned() }
    }

    /// A call of `account` let out.
    pub fn call(account: &str) {
        FAMILIES.calls.get_or_create(&label(account)).inc();
    }

    /// An answer 429 to a call of `account`.
    pub fn throttled(account: &str) {
        FAMILIES.throttled.get_or_create(&label(account)).inc();
    }

    /// A call of `account` its open breaker refused.
    pub fn refused(account: &str) {
        FAMILIES.refused.get_or_create(&label(account)).inc();
    }

    /// How long a call of `account` waited for its budget.
    pub fn waited(account: &str, wait: Duration) {
        FAMILIES.waits.get_or_create(&label(account)).observe(wait.as_secs_f64());
    }

    /// Whether the breaker of `account` is open.
    pub fn breaker(account: &str, open: bool) {
        FAMILIES.breaker_open.get_or_create(&label(account)).set(i64::from(open));
    }

    /// Adds the pacing figures to `registry`.
    pub(super) fn register(registry: &mut Registry) {
        let f = &*FAMILIES;
        registry.register("provider_account_calls", "Provider calls let out, by account", f.calls.clone());
        registry.register("provider_account_throttled", "Provider answers 429, by account", f.throttled.clone());
        registry.register(
            "provider_account_breaker_refusals",
            "Provider calls refused by the account's open breaker, by account",
            f.refused.clone(),
        );
        registry.register(
            "provider_account_budget_wait_seconds",
            "How long provider calls waited for their account's budget",
            f.waits.clone(),
        );
        registry.register(
            "provider_account_breaker_open",
            "1 while the account's breaker is open (its credentials refused)",
            f.breaker_open.clone(),
        );
    }
}
