//! Measured calls: every store operation and provider call is timed and counted by name, so a
//! slow API call or reconcile pass can be traced to the query or provider call that took the
//! time by reading `/metrics`, without a profiler.
//!
//! The families are process-wide because the store and the provider adapters hold no handle on
//! the server's [`Metrics`](crate::telemetry::Metrics); every `Metrics` registers them, so a
//! process that runs several servers (the tests do) shows the sum of all of them.

use std::sync::LazyLock;
use std::time::Instant;

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

/// Adds the process's call families to `registry` (families are shared, so registering them in
/// several registries shows the same figures in each).
pub fn register(registry: &mut Registry) {
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

/// Runs the call `call` to `provider`'s API, then counts it under `operation` with its outcome
/// and records how long it took.
pub async fn provider<T, E>(
    provider: &'static str,
    operation: &'static str,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    measure(call, move |outcome, seconds| {
        FAMILIES.provider_calls.get_or_create(&ProviderCall { provider, operation, outcome }).inc();
        FAMILIES.provider_seconds.get_or_create(&ProviderOperation { provider, operation }).observe(seconds);
    })
    .await
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
    use std::time::Duration;

    use super::*;

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
