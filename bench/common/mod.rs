//! What the benchmark programs share: the real `bc-server` and `bc-worker` processes on a fresh
//! Postgres database, the fake cloud in this process, the platform seeded through the API,
//! resident memory and CPU time from `/proc`, latency figures, a Postgres wire proxy that counts
//! statements, and the tables and JSON files the programs write.
//!
//! Each program (`bench/api.rs`, `bench/converge.rs`, `bench/scale.rs`, `bench/soak.rs`) includes
//! this module with `#[path]`; each uses part of it, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod cpu;
pub mod grpc;
pub mod pg;
pub mod pgwire;
pub mod platform;
pub mod procs;
pub mod report;
pub mod stats;

use std::time::Duration;

/// Whether the program was started by `cargo bench` (which passes `--bench`). `cargo test
/// --all-targets` also runs benchmark targets, without it, and must not spend minutes there.
pub fn started_by_cargo_bench() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// An environment variable parsed, or `default` when it is unset or unreadable.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|value| value.trim().parse().ok()).unwrap_or(default)
}

/// A comma-separated list of numbers from the environment, or `default`.
pub fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(name) {
        Ok(text) => text.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        Err(_) => default.to_vec(),
    }
}

/// Polls `check` every `every` until it returns `Some`, or fails after `limit` saying `what`.
pub async fn wait_for<T, F, Fut>(what: &str, limit: Duration, every: Duration, mut check: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = std::time::Instant::now();
    loop {
        if let Some(value) = check().await {
            return Ok(value);
        }
        if started.elapsed() > limit {
            return Err(format!("{what}: not after {limit:?}"));
        }
        tokio::time::sleep(every).await;
    }
}
