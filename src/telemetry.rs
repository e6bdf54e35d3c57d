//! Logs and metrics: tracing to stderr (text or JSON, one request id per call) and the
//! Prometheus registry served at `/metrics` (with the store and provider call figures of
//! [`measured`](crate::measured)); `bc-worker` serves those figures alone ([`serve_calls`]).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::get;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

pub use bcd::logging::{LogFormat, init_logging};

/// The media type of `/metrics`.
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Labels of a finished call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    /// The full method name: `bettercompute.platform.v1.Tenants/Create`.
    method: String,
    /// Our code string, or `OK`.
    code: String,
}

/// Labels of a method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    /// The full method name.
    method: String,
}

/// Labels of a reconciler kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    /// The kind (`kubernetes-cluster`).
    kind: String,
}

/// The workers' figures, read from the store at scrape time.
#[derive(Clone, Default)]
struct ReconcilerGauges {
    /// Objects per kind.
    objects: Family<KindLabels, Gauge>,
    /// Objects due and not leased.
    queue_depth: Family<KindLabels, Gauge>,
    /// Objects under a live lease.
    leased: Family<KindLabels, Gauge>,
    /// Objects whose last pass failed.
    failing: Family<KindLabels, Gauge>,
    /// Objects past their state's deadline.
    stuck: Family<KindLabels, Gauge>,
    /// Mean duration of the last passes.
    pass_mean: Family<KindLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    /// Longest of the last passes.
    pass_max: Family<KindLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
}

/// The process's metrics.
#[derive(Clone)]
pub struct Metrics {
    /// The registry `/metrics` encodes.
    registry: Arc<Mutex<Registry>>,
    /// Calls by method and code.
    calls: Family<CallLabels, Counter>,
    /// Call latency by method.
    latency: Family<MethodLabels, Histogram>,
    /// The reconcilers' queues.
    reconcilers: ReconcilerGauges,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with the API's metrics, the reconcilers' and the process's store and provider calls.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("bc");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register("api_calls", "API calls by method and result code", calls.clone());
        let latency = Family::<MethodLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
        });
        registry.register("api_call_seconds", "API call latency by method", latency.clone());
        let r = ReconcilerGauges::default();
        registry.register("reconcile_objects", "Objects per reconciler kind", r.objects.clone());
        registry.register("reconcile_queue_depth", "Objects due and not being reconciled", r.queue_depth.clone());
        registry.register("reconcile_leased", "Objects being reconciled", r.leased.clone());
        registry.register("reconcile_failing", "Objects whose last pass failed", r.failing.clone());
        registry.register("reconcile_stuck", "Objects past their state's deadline", r.stuck.clone());
        registry.register("reconcile_pass_mean_seconds", "Mean duration of the last passes", r.pass_mean.clone());
        registry.register("reconcile_pass_max_seconds", "Longest of the last passes", r.pass_max.clone());
        crate::measured::register(&mut registry);
        Self { registry: Arc::new(Mutex::new(registry)), calls, latency, reconcilers: r }
    }

    /// Records a finished call.
    pub fn record_call(&self, method: &str, code: &str, elapsed: Duration) {
        self.calls.get_or_create(&CallLabels { method: method.to_owned(), code: code.to_owned() }).inc();
        self.latency.get_or_create(&MethodLabels { method: method.to_owned() }).observe(elapsed.as_secs_f64());
    }

    /// Sets the reconcilers' gauges from the store's figures.
    pub fn set_reconcilers(&self, kinds: &[crate::store::KindStatus], stuck: &[crate::store::StuckItem]) {
        let r = &self.reconcilers;
        for gauge in [&r.objects, &r.queue_depth, &r.leased, &r.failing, &r.stuck] {
            gauge.clear();
        }
        r.pass_mean.clear();
        r.pass_max.clear();
        for k in kinds {
            let labels = KindLabels { kind: k.kind.clone() };
            r.objects.get_or_create(&labels).set(k.objects);
            r.queue_depth.get_or_create(&labels).set(k.queue_depth);
            r.leased.get_or_create(&labels).set(k.leased);
            r.failing.get_or_create(&labels).set(k.failing);
            r.stuck.get_or_create(&labels).set(stuck.iter().filter(|s| s.kind == k.kind).count() as i64);
            r.pass_mean.get_or_create(&labels).set(k.pass_mean_micros as f64 / 1e6);
            r.pass_max.get_or_create(&labels).set(k.pass_max_micros as f64 / 1e6);
        }
    }

    /// The registry in Prometheus' text format.
    pub fn encode(&self) -> String {
        encode(&self.registry.lock().expect("the metrics registry is never poisoned"))
    }
}

/// `registry` in Prometheus' text format.
fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry).expect("writing to a String cannot fail");
    out
}

/// Serves `/metrics` on `listener` until `shutdown`, for a process without the API (`bc-worker`,
/// which makes every provider call): its store and provider calls. The reconcilers' queues are
/// read from the store, so `bc-server`'s `/metrics` shows them for every worker.
pub async fn serve_calls(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut registry = Registry::with_prefix("bc");
    crate::measured::register(&mut registry);
    let registry = Arc::new(registry);
    let metrics = move || {
        let registry = registry.clone();
        async move { ([(http::header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], encode(&registry)) }
    };
    axum::serve(listener, Router::new().route("/metrics", get(metrics))).with_graceful_shutdown(shutdown).await
}
