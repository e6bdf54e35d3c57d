//! The store's baseline: what one create writes is measured (Postgres' per-table row counters
//! around a hundred creates), and `pgbench` then runs transactions that write as many rows the
//! same way (inserts, updates, deletes), with as many clients as the server has connections.
//! Its transactions per second are the most creates per second this Postgres could commit if
//! the control plane cost nothing else.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::pg::{Database, TableWrites, table_writes, writes_between};
use crate::common::stats::Sample;

/// The connections `bc-server` opens at most (`--database-max-connections`' default): pgbench
/// runs with no more clients than this, the most the server could use at once.
pub const SERVER_CONNECTIONS: usize = 16;

/// Rows one call writes, on average.
#[derive(Clone, Debug, Default)]
pub struct WriteProfile {
    /// Calls measured.
    pub calls: usize,
    /// Per table: rows inserted, updated, deleted per call.
    pub per_table: BTreeMap<String, [f64; 3]>,
}

impl WriteProfile {
    /// From the counters' change over `calls` calls.
    pub fn from_delta(delta: &TableWrites, calls: usize) -> WriteProfile {
        let per_table = delta
            .iter()
            .map(|(table, counts)| (table.clone(), counts.map(|n| n as f64 / calls.max(1) as f64)))
            .collect();
        WriteProfile { calls, per_table }
    }

    /// Inserts, updates and deletes per call, rounded to whole rows.
    pub fn rows(&self) -> [usize; 3] {
        let mut sums = [0f64; 3];
        for counts in self.per_table.values() {
            for i in 0..3 {
                sums[i] += counts[i];
            }
        }
        sums.map(|n| n.round() as usize)
    }

    /// As JSON.
    pub fn to_json(&self) -> Value {
        let [inserts, updates, deletes] = self.rows();
        json!({"calls": self.calls, "inserts": inserts, "updates": updates, "deletes": deletes,
            "perTable": self.per_table})
    }

    /// `insert 7 (kubernetes_clusters 1, ...), update 1 (event_head 1)`.
    pub fn describe(&self) -> String {
        let [inserts, updates, deletes] = self.rows();
        let part = |i: usize, total: usize, verb: &str| {
            let tables: Vec<String> = self
                .per_table
                .iter()
                .filter(|(_, c)| c[i] >= 0.05)
                .map(|(t, c)| format!("{t} {}", trim(c[i])))
                .collect();
            (total > 0).then(|| format!("{verb} {total} ({})", tables.join(", ")))
        };
        [part(0, inserts, "insert"), part(1, updates, "update"), part(2, deletes, "delete")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn trim(n: f64) -> String {
    if (n - n.round()).abs() < 0.05 { format!("{}", n.round()) } else { format!("{n:.2}") }
}

/// Reads the row counters, runs `calls`, waits for the counters to be flushed, and returns what
/// each call wrote.
pub async fn profile<F, Fut>(database: &Database, count: usize, calls: F) -> Result<WriteProfile, String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    // Backends publish their counters when idle, at the latest ten seconds after a change: wait
    // for what came before to be published, and again for what the calls wrote.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let mut connection = database.connect().await?;
    let before = table_writes(&mut connection).await?;
    calls().await?;
    tokio::time::sleep(Duration::from_secs(11)).await;
    let after = table_writes(&mut connection).await?;
    Ok(WriteProfile::from_delta(&writes_between(&before, &after), count))
}

/// Makes the baseline's tables in their own schema: rows to insert into, and 100,000 rows to
/// update and delete at random.
pub async fn prepare(database: &Database) -> Result<(), String> {
    let mut connection = database.connect().await?;
    for statement in [
        "CREATE SCHEMA IF NOT EXISTS baseline",
        "CREATE TABLE IF NOT EXISTS baseline.inserted (id BIGSERIAL PRIMARY KEY, k BIGINT NOT NULL, payload TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS baseline.updated (id BIGINT PRIMARY KEY, n BIGINT NOT NULL, payload TEXT NOT NULL)",
        "INSERT INTO baseline.updated SELECT g, 0, repeat('x', 200) FROM generate_series(1, 100000) g ON CONFLICT DO NOTHING",
        "VACUUM ANALYZE baseline.updated",
    ] {
        sqlx::query(statement).execute(&mut connection).await.map_err(|e| format!("{statement}: {e}"))?;
    }
    Ok(())
}

/// The pgbench script of one transaction writing `rows` (inserts, updates, deletes).
pub fn script(rows: [usize; 3]) -> String {
    let [inserts, updates, deletes] = rows;
    let mut text = String::new();
    for i in 0..updates + deletes {
        text.push_str(&format!("\\set r{i} random(1, 100000)\n"));
    }
    text.push_str("BEGIN;\n");
    for i in 0..inserts {
        text.push_str(&format!("INSERT INTO baseline.inserted (k, payload) VALUES ({i}, repeat('x', 300));\n"));
    }
    for i in 0..updates {
        text.push_str(&format!("UPDATE baseline.updated SET n = n + 1 WHERE id = :r{i};\n"));
    }
    for i in updates..updates + deletes {
        // Deletes of rows that may already be gone still cost a lookup, as a miss would.
        text.push_str(&format!("DELETE FROM baseline.updated WHERE id = :r{i};\n"));
    }
    text.push_str("END;\n");
    text
}

/// Runs `script` for `seconds` with `clients` clients: transactions per second and each
/// transaction's latency (from pgbench's per-transaction log).
pub fn run(database: &Database, script_text: &str, clients: usize, seconds: u64, dir: &Path) -> Result<Sample, String> {
    let pgbench = std::env::var("BC_BENCH_PGBENCH").unwrap_or_else(|_| "pgbench".to_owned());
    let run_dir = dir.join(format!("pgbench-{clients}-{}", rand::random::<u32>()));
    std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
    let script_path = run_dir.join("create.sql");
    std::fs::write(&script_path, script_text).map_err(|e| e.to_string())?;
    let output = Command::new(&pgbench)
        .args(["-n", "-M", "prepared", "-c", &clients.to_string(), "-j", &clients.clamp(1, 2).to_string()])
        .args(["-T", &seconds.to_string(), "-l", "--log-prefix"])
        .arg(run_dir.join("tx"))
        .arg("-f")
        .arg(&script_path)
        .arg(&database.url)
        .current_dir(&run_dir)
        .output()
        .map_err(|e| format!("{pgbench}: {e} (set BC_BENCH_PGBENCH to its path)"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("pgbench failed: {stdout}{}", String::from_utf8_lossy(&output.stderr)));
    }
    let mut sample = Sample { elapsed: Duration::from_secs(seconds), ..Sample::default() };
    for entry in std::fs::read_dir(&run_dir).map_err(|e| e.to_string())?.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("tx") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        // client_id transaction_no time script_no time_epoch time_us: `time` is the latency (µs).
        sample.latencies_us.extend(text.lines().filter_map(|line| line.split_whitespace().nth(2)?.parse::<u64>().ok()));
    }
    let failed = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("number of failed transactions: "))
        .and_then(|n| n.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    if failed > 0 {
        sample.failures.insert("pgbench failed".to_owned(), failed);
    }
    Ok(sample)
}
