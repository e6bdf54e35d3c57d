//! Latency and throughput of a timed run: every call's latency is kept (a run is seconds long,
//! so this is a few hundred thousand numbers at most) and the percentiles are exact.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

/// What the calls of one run did.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Latency of every successful call, in microseconds.
    pub latencies_us: Vec<u64>,
    /// Failed calls by code (`UNAVAILABLE`, `HTTP 500`, `transport`).
    pub failures: BTreeMap<String, u64>,
    /// How long the measured window lasted.
    pub elapsed: Duration,
}

impl Sample {
    /// Adds another task's calls (same window).
    pub fn merge(&mut self, other: Sample) {
        self.latencies_us.extend(other.latencies_us);
        for (code, n) in other.failures {
            *self.failures.entry(code).or_default() += n;
        }
    }

    /// Successful calls per second.
    pub fn throughput(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds == 0.0 { 0.0 } else { self.latencies_us.len() as f64 / seconds }
    }

    /// Failed calls.
    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    /// The latency below which `fraction` of the calls finished, in milliseconds.
    pub fn percentile_ms(&self, fraction: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return 0.0;
        }
        let mut latencies = self.latencies_us.clone();
        let rank = ((latencies.len() as f64) * fraction).ceil() as usize;
        let index = rank.clamp(1, latencies.len()) - 1;
        *latencies.select_nth_unstable(index).1 as f64 / 1000.0
    }

    /// The figures as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "calls": self.latencies_us.len(),
            "failed": self.failures,
            "seconds": self.elapsed.as_secs_f64(),
            "throughput": round(self.throughput(), 1),
            "p50Ms": round(self.percentile_ms(0.50), 3),
            "p99Ms": round(self.percentile_ms(0.99), 3),
        })
    }
}

/// `value` rounded to `places` decimals.
pub fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// `a / b`, or nothing when `b` is zero.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}
