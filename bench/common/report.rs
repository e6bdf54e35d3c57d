//! Output: aligned tables on stdout, and the same figures as JSON under `bench/results/`, with
//! what the machine was, so that figures from two runs can be told apart.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

/// A table printed with aligned columns.
pub struct Table {
    /// The column titles.
    headers: Vec<String>,
    /// The cells, row by row.
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(headers: &[&str]) -> Table {
        Table { headers: headers.iter().map(|h| (*h).to_owned()).collect(), rows: Vec::new() }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Prints it: text left-aligned, numbers right-aligned.
    pub fn print(&self) {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let numeric = |cell: &str| cell.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .take(columns)
                .map(|(i, cell)| {
                    if numeric(cell) && i > 0 {
                        format!("{cell:>width$}", width = widths[i])
                    } else {
                        format!("{cell:<width$}", width = widths[i])
                    }
                })
                .collect();
            println!("{}", parts.join("  ").trim_end());
        };
        line(&self.headers);
        println!("{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        for row in &self.rows {
            line(row);
        }
    }
}

/// `bench/results/` of the checkout.
pub fn results_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench").join("results")
}

/// Writes `value` to `bench/results/<name>.json` (pretty) and returns the path.
pub fn write_json(name: &str, value: &Value) -> Result<PathBuf, String> {
    let dir = results_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The machine and the build the figures come from.
pub fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_owned())
        .unwrap_or_default();
    let memory_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or_default();
    let commit = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    json!({
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "cpuModel": model,
        "memoryGiB": (memory_kib as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        "loadAverageAtStart": load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        "commit": commit,
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "at": chrono_like_now(),
    })
}

/// Now as `YYYY-MM-DDTHH:MM:SSZ`, without a date library.
pub fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let (h, m, s) = ((secs % 86_400) / 3600, (secs % 3600) / 60, secs % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}
