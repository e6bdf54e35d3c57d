//! Convergence at scale, measured as `bench/converge.rs` measures it: the workers, stopped
//! (SIGSTOP) while the clusters were created, are let go (SIGCONT); the time runs until every
//! cluster is `ready` in the store, and passes are the workers' records of a pass, counted by
//! the proxy they reach Postgres through. Meanwhile `bc-server`'s CPU and peak resident memory
//! are taken, since every `ready` event goes out to the open watches.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sqlx::Row;

use crate::common::cpu::CpuWindow;
use crate::common::pgwire::{CountingProxy, delta, matching, total};
use crate::common::procs::{Process, rss_kib};
use crate::common::stats::round;

/// The SQL that records a pass's result (`Store::work_complete`), executed once per pass; the
/// same needles as `bench/converge.rs`.
const PASS_RECORDED: &str = "last_pass_at = $6, last_pass_micros = $11";
const PASS_REMOVED: &str = "DELETE FROM work_items WHERE kind = $1 AND object_id = $2 AND lease_owner = $3";

/// How the clusters went to `ready`.
pub struct Converged {
    /// From SIGCONT to the last cluster `ready`.
    pub seconds: f64,
    /// Passes the workers recorded.
    pub passes: u64,
    /// Statements the workers executed.
    pub statements: u64,
    /// `bc-server`'s CPU over the same time, as a percentage of one core.
    pub server_cpu_percent: Option<f64>,
    /// `bc-server`'s largest resident memory seen meanwhile, in KiB.
    pub server_rss_peak_kib: Option<u64>,
}

impl Converged {
    pub fn passes_per_second(&self) -> f64 {
        self.passes as f64 / self.seconds.max(1e-9)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "seconds": round(self.seconds, 3),
            "passes": self.passes,
            "passesPerSecond": round(self.passes_per_second(), 1),
            "statementsPerPass": round(self.statements as f64 / self.passes.max(1) as f64, 2),
            "serverCpuPercentOfCore": self.server_cpu_percent.map(|p| round(p, 1)),
            "serverRssPeakKiB": self.server_rss_peak_kib,
        })
    }
}

/// Lets `workers` go and waits until all `clusters` live clusters are `ready` (failing on one
/// in `error`, or after `limit`).
pub async fn to_ready(
    workers: &[Process],
    proxy: &CountingProxy,
    pool: &sqlx::PgPool,
    server_pid: u32,
    clusters: usize,
    limit: Duration,
) -> Result<Converged, String> {
    let before = proxy.snapshot();
    let cpu = CpuWindow::open(server_pid).ok_or("bc-server is gone")?;
    let started = Instant::now();
    workers.iter().try_for_each(|worker| worker.signal("CONT"))?;
    let mut peak = rss_kib(server_pid);
    loop {
        let row = sqlx::query(
            "SELECT COUNT(*) FILTER (WHERE state = 'ready'), COUNT(*) FILTER (WHERE state = 'error') \
             FROM kubernetes_clusters WHERE deleted_at IS NULL",
        )
        .fetch_one(pool)
        .await
        .map_err(|e| e.to_string())?;
        let (ready, failed): (i64, i64) = (row.get(0), row.get(1));
        peak = peak.max(rss_kib(server_pid));
        if failed > 0 {
            return Err(format!("{failed} clusters went to error"));
        }
        if ready as usize >= clusters {
            break;
        }
        if started.elapsed() > limit {
            return Err(format!("{ready} of {clusters} clusters ready after {limit:?}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let server_cpu_percent = cpu.percent_of_core();
    let statements = delta(&before, &proxy.snapshot());
    let passes = matching(&statements, PASS_RECORDED) + matching(&statements, PASS_REMOVED);
    Ok(Converged { seconds, passes, statements: total(&statements), server_cpu_percent, server_rss_peak_kib: peak })
}
