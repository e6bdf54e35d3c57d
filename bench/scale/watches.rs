//! Many open `Events.Watch` streams on one server: gRPC server streams spread over a few HTTP/2
//! connections (the server lets one connection carry 100 calls), each counting what it receives,
//! so that the run can tell whether every watcher got every event.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use better_compute::cli::BearerToken;
use better_compute::proto::compute::WatchEventsRequest;
use better_compute::proto::compute::events_client::EventsClient;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;

use super::fill::{WATCHES_PER_PRINCIPAL, connect};
use crate::common::grpc::code_of;

/// The event each watcher must receive once per cluster.
pub const READY: &str = "kubernetes.cluster.ready";

/// What one watcher received.
#[derive(Default)]
struct Received {
    /// Every event.
    events: AtomicU64,
    /// The `kubernetes.cluster.ready` ones.
    ready: AtomicU64,
    /// Whether the stream ended (the server closed it or failed it).
    ended: AtomicBool,
}

/// Open watches; dropping them closes the streams.
pub struct Watches {
    /// Per watcher.
    received: Vec<Arc<Received>>,
    /// The tasks reading the streams.
    tasks: Vec<JoinHandle<()>>,
    /// How the streams that ended ended, by code.
    endings: Arc<std::sync::Mutex<std::collections::BTreeMap<String, u64>>>,
    /// HTTP/2 connections they share.
    pub connections: usize,
    /// How long opening them all took.
    pub opening: Duration,
}

impl Drop for Watches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What the watchers received, summed up.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Watchers.
    pub watchers: usize,
    /// Events received by all of them.
    pub events: u64,
    /// The fewest and the most `ready` events one watcher received.
    pub ready_least: u64,
    pub ready_most: u64,
    /// Watchers that received fewer `ready` events than there are clusters.
    pub short: usize,
    /// Streams that ended, by how they ended.
    pub endings: std::collections::BTreeMap<String, u64>,
}

impl Watches {
    /// Opens `count` watches of `tenant`'s events after cursor `after` whose type starts with
    /// `type_prefix`, as the operators of `tokens` (16 each), `per_connection` on one HTTP/2
    /// connection.
    pub async fn open(
        endpoint: &str,
        tokens: &[String],
        count: usize,
        per_connection: usize,
        tenant: &str,
        after: i64,
        type_prefix: &str,
    ) -> Result<Watches, String> {
        let started = Instant::now();
        let per_connection = per_connection.clamp(1, 100);
        let mut channels = Vec::new();
        for _ in 0..count.div_ceil(per_connection) {
            channels.push(connect(endpoint).await?);
        }
        let endings = Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
        let mut watches = Watches {
            received: Vec::new(),
            tasks: Vec::new(),
            endings,
            connections: channels.len(),
            opening: Duration::ZERO,
        };
        for i in 0..count {
            let token = tokens.get(i / WATCHES_PER_PRINCIPAL).ok_or("fewer operators than the watches need")?;
            let channel =
                InterceptedService::new(channels[i / per_connection].clone(), BearerToken::new(Some(token.as_str()))?);
            let request = WatchEventsRequest {
                after: after.to_string(),
                type_prefix: type_prefix.to_owned(),
                tenant_id: tenant.to_owned(),
                ..Default::default()
            };
            let mut stream = EventsClient::new(channel)
                .watch(request)
                .await
                .map_err(|status| format!("watch {i}: {} {}", code_of(&status), status.message()))?
                .into_inner();
            let received = Arc::new(Received::default());
            let (counts, endings) = (received.clone(), watches.endings.clone());
            watches.tasks.push(tokio::spawn(async move {
                let ending = loop {
                    match stream.message().await {
                        Ok(Some(event)) => {
                            counts.events.fetch_add(1, Ordering::Relaxed);
                            if event.r#type == READY {
                                counts.ready.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Ok(None) => break "closed by the server".to_owned(),
                        Err(status) => break code_of(&status),
                    }
                };
                counts.ended.store(true, Ordering::Relaxed);
                *endings.lock().unwrap_or_else(|p| p.into_inner()).entry(ending).or_default() += 1;
            }));
            watches.received.push(received);
        }
        watches.opening = started.elapsed();
        Ok(watches)
    }

    /// Open watches.
    pub fn open_count(&self) -> usize {
        self.received.iter().filter(|r| !r.ended.load(Ordering::Relaxed)).count()
    }

    /// What they received so far, against `clusters` `ready` events each.
    pub fn tally(&self, clusters: u64) -> Tally {
        let ready: Vec<u64> = self.received.iter().map(|r| r.ready.load(Ordering::Relaxed)).collect();
        Tally {
            watchers: self.received.len(),
            events: self.received.iter().map(|r| r.events.load(Ordering::Relaxed)).sum(),
            ready_least: ready.iter().copied().min().unwrap_or(0),
            ready_most: ready.iter().copied().max().unwrap_or(0),
            short: ready.iter().filter(|n| **n < clusters).count(),
            endings: self.endings.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// Waits until every watcher has `clusters` `ready` events, or until nothing more has come
    /// for `quiet`; returns how long it waited.
    pub async fn settle(&self, clusters: u64, quiet: Duration) -> Duration {
        let started = Instant::now();
        let mut last = self.tally(clusters).events;
        let mut last_change = Instant::now();
        while self.tally(clusters).short > 0 && last_change.elapsed() < quiet {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.tally(clusters).events;
            if now != last {
                (last, last_change) = (now, Instant::now());
            }
        }
        started.elapsed()
    }
}
