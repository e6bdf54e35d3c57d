//! What must hold at the end of the soak, each counted so the run prints what broke:
//! failed calls other than `UNAVAILABLE` while Postgres restarted; provider clusters with no
//! live row (leaks); live rows whose provider cluster is missing; clusters created twice at the
//! provider; events with a gap or a repeat in the sequence, or a cluster's or load balancer's
//! lifecycle event published twice; writes the API acknowledged but the store does not have;
//! and, in a run of [`MEMORY_JUDGED_FROM`] or longer, `bc-server`'s memory growing under load.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;
use sqlx::Row;

use super::chaos::{MemorySample, Sightings};
use super::load::Ledger;
use crate::common::platform::Api;

/// One invariant's result.
pub struct Check {
    /// What it checks.
    pub name: &'static str,
    /// How many times it broke (0 is a pass).
    pub broken: u64,
    /// Examples of what broke.
    pub examples: Vec<String>,
}

impl Check {
    /// A check that broke once per item of `broken`.
    pub fn new(name: &'static str, broken: impl IntoIterator<Item = String>) -> Check {
        let broken: Vec<String> = broken.into_iter().collect();
        Check { name, broken: broken.len() as u64, examples: broken.into_iter().take(5).collect() }
    }
}

/// When Postgres was down: from the restart's start to its end plus the grace given to the
/// server to find its connections again.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Start, from the soak's start.
    pub from: Duration,
    /// End, from the soak's start.
    pub to: Duration,
}

/// Failed calls: only `UNAVAILABLE`, and only in the restart window, are allowed.
pub fn failed_calls(ledger: &Ledger, window: Option<Window>) -> Check {
    let broken = ledger.failures.iter().filter(|f| {
        let in_window = window.is_some_and(|w| f.at >= w.from && f.at <= w.to);
        !(f.code == "UNAVAILABLE" && in_window)
    });
    Check::new(
        "calls failed other than UNAVAILABLE during the Postgres restart",
        broken.map(|f| format!("{:.1} s {} {}: {}", f.at.as_secs_f64(), f.path, f.code, f.message)),
    )
}

/// The live rows (id, state) and every row's id with its deletion.
pub struct Rows {
    /// Clusters not deleted: id to state.
    pub live: BTreeMap<String, String>,
    /// Every cluster: id to whether it is deleted.
    pub all: BTreeMap<String, bool>,
}

/// Reads the clusters' rows.
pub async fn rows(pool: &sqlx::PgPool) -> Result<Rows, String> {
    let found = sqlx::query("SELECT id, state, deleted_at IS NOT NULL FROM kubernetes_clusters")
        .fetch_all(pool)
        .await
        .map_err(|e| e.to_string())?;
    let mut rows = Rows { live: BTreeMap::new(), all: BTreeMap::new() };
    for row in found {
        let (id, state, deleted): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
        if !deleted {
            rows.live.insert(id.clone(), state);
        }
        rows.all.insert(id, deleted);
    }
    Ok(rows)
}

/// Leaks, missing provider objects and duplicates, from the fake cloud's clusters now and what
/// the watcher saw.
pub fn provider(cloud_clusters: &[Value], rows: &Rows, sightings: &Sightings) -> Vec<Check> {
    let labels: Vec<String> = cloud_clusters
        .iter()
        .map(|c| c["labels"]["better-compute-cluster"].as_str().unwrap_or_default().to_owned())
        .collect();
    let at_provider: BTreeSet<&String> = labels.iter().collect();
    let leaks = labels.iter().filter(|label| !rows.live.contains_key(*label)).map(|l| format!("{l} has no live row"));
    let missing =
        rows.live.keys().filter(|id| !at_provider.contains(id)).map(|id| format!("{id} is not at the provider"));
    let mut twice: Vec<String> = sightings
        .ids_by_label
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(label, ids)| format!("{label} was created {} times", ids.len()))
        .collect();
    let mut seen = BTreeSet::new();
    for label in &labels {
        if !seen.insert(label) {
            twice.push(format!("{label} is at the provider twice now"));
        }
    }
    twice.extend((0..sightings.twins).map(|_| "two provider clusters under one label at once".to_owned()));
    vec![
        Check::new("provider clusters with no live row (leaks)", leaks),
        Check::new("live rows whose provider cluster is missing", missing),
        Check::new("clusters created twice at the provider", twice),
    ]
}

/// Live rows that did not settle (`ready`).
pub fn unsettled(rows: &Rows) -> Check {
    Check::new(
        "live clusters not ready once settled",
        rows.live.iter().filter(|(_, state)| state.as_str() != "ready").map(|(id, state)| format!("{id} is {state}")),
    )
}

/// Writes the API acknowledged: every created cluster has its row, every deleted one is deleted.
pub fn acknowledged(ledger: &Ledger, rows: &Rows) -> Check {
    let lost_creates = ledger
        .created
        .iter()
        .filter(|(_, id)| !rows.all.contains_key(id))
        .map(|(tenant, id)| format!("{tenant}'s cluster {id} was created and has no row"));
    let lost_deletes = ledger
        .deleted
        .iter()
        .filter(|id| rows.all.get(*id) != Some(&true))
        .map(|id| format!("{id} was deleted and is not"));
    Check::new("acknowledged writes the store does not have", lost_creates.chain(lost_deletes).collect::<Vec<_>>())
}

/// The outbox in the store: sequence numbers 1..n with no gap and no repeat, and every event
/// numbered (a read through the API numbers what has committed; one was made before this).
pub async fn outbox(pool: &sqlx::PgPool) -> Result<(Check, u64), String> {
    let mut unnumbered: i64 = 0;
    for _ in 0..100 {
        unnumbered = sqlx::query_scalar("SELECT count(*) FROM events WHERE seq IS NULL")
            .fetch_one(pool)
            .await
            .map_err(|e| e.to_string())?;
        if unnumbered == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let seqs: Vec<i64> = sqlx::query_scalar("SELECT seq FROM events WHERE seq IS NOT NULL ORDER BY seq")
        .fetch_all(pool)
        .await
        .map_err(|e| e.to_string())?;
    let mut broken = Vec::new();
    if unnumbered > 0 {
        broken.push(format!("{unnumbered} events still had no number 10 s after the faults stopped"));
    }
    let mut expected = 1;
    for seq in &seqs {
        if *seq != expected {
            broken.push(format!("event {seq} follows {}", expected - 1));
        }
        expected = seq + 1;
    }
    Ok((Check::new("events with a gap or a repeat in the store's sequence", broken), seqs.len() as u64))
}

/// The events each tenant reads through the API (`events.list` after a cursor, page by page):
/// cursors strictly increasing, no event twice, and each cluster's and load balancer's `created`,
/// `ready` and `deleted` published at most once.
pub async fn events_api(api: &Api, tenants: &[(String, String)]) -> Result<Vec<Check>, String> {
    let mut order = Vec::new();
    let mut lifecycle = Vec::new();
    for (tenant, token) in tenants {
        let mut after = String::new();
        let mut last: i64 = 0;
        let mut ids = BTreeSet::new();
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        loop {
            let page = api
                .ok(
                    token,
                    "/api/compute/events/list",
                    serde_json::json!({"tenantId": tenant, "after": after, "limit": 500}),
                )
                .await?;
            let events = page["events"].as_array().cloned().unwrap_or_default();
            for event in &events {
                let cursor: i64 = event["cursor"].as_str().and_then(|c| c.parse().ok()).unwrap_or(-1);
                if cursor <= last {
                    order.push(format!("{tenant}: event at cursor {cursor} after {last}"));
                }
                last = last.max(cursor);
                if !ids.insert(event["id"].as_str().unwrap_or_default().to_owned()) {
                    order.push(format!("{tenant}: event {} listed twice", event["id"]));
                }
                let kind = event["type"].as_str().unwrap_or_default();
                // Published once each: a cluster's or a load balancer's creation, first ready, deletion.
                let once = ["created", "ready", "deleted"];
                let lifecycle = ["kubernetes.cluster.", "providerLoadBalancer."]
                    .iter()
                    .any(|prefix| kind.strip_prefix(prefix).is_some_and(|rest| once.contains(&rest)));
                if lifecycle {
                    *counts
                        .entry((event["subject"].as_str().unwrap_or_default().to_owned(), kind.to_owned()))
                        .or_default() += 1;
                }
            }
            let next = page["nextCursor"].as_str().unwrap_or_default().to_owned();
            if events.is_empty() || next.is_empty() || next == after {
                break;
            }
            after = next;
        }
        lifecycle.extend(
            counts
                .into_iter()
                .filter(|(_, n)| *n > 1)
                .map(|((subject, kind), n)| format!("{subject}: {kind} {n} times")),
        );
    }
    Ok(vec![
        Check::new("events read through the API out of order or twice", order),
        Check::new("lifecycle events (created, ready, deleted) published twice", lifecycle),
    ])
}

/// The shortest load window whose memory is judged: a shorter one is mostly caches filling.
pub const MEMORY_JUDGED_FROM: Duration = Duration::from_secs(5 * 60);

/// Growth an hour, as a share of the server's memory, past which it is not flat.
const MEMORY_GROWTH_PER_HOUR: f64 = 0.10;

/// `bc-server`'s resident memory over the last two thirds of the load (`samples` taken during
/// it; the first third is start-up and caches filling): the least-squares slope, projected over
/// an hour, must stay under [`MEMORY_GROWTH_PER_HOUR`] of its mean. Bounded caches filled early
/// pass; a leak, or a cache that grows with the calls made, fails. `None` for a load window
/// shorter than [`MEMORY_JUDGED_FROM`].
pub fn memory_flat(samples: &[MemorySample], load: Duration) -> Option<Check> {
    if load < MEMORY_JUDGED_FROM {
        return None;
    }
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.at >= load / 3 && s.at <= load)
        .filter_map(|s| Some((s.at.as_secs_f64(), s.server_kib? as f64)))
        .collect();
    let name = "bc-server memory growing under load (over 10% an hour)";
    if points.len() < 4 {
        return Some(Check::new(name, [format!("only {} memory samples in the last two thirds", points.len())]));
    }
    let n = points.len() as f64;
    let (mean_t, mean_kib) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let covariance: f64 = points.iter().map(|(t, kib)| (t - mean_t) * (kib - mean_kib)).sum();
    let variance: f64 = points.iter().map(|(t, _)| (t - mean_t).powi(2)).sum();
    let per_hour = covariance / variance * 3600.0;
    let share = per_hour / mean_kib;
    println!(
        "  bc-server memory over the last two thirds: mean {:.1} MiB, trend {:+.1} MiB an hour ({:+.1}%)",
        mean_kib / 1024.0,
        per_hour / 1024.0,
        share * 100.0
    );
    let growing = (share > MEMORY_GROWTH_PER_HOUR).then(|| {
        format!(
            "{:+.1} MiB an hour over a mean of {:.1} MiB ({:+.1}%)",
            per_hour / 1024.0,
            mean_kib / 1024.0,
            share * 100.0
        )
    });
    Some(Check::new(name, growing))
}
