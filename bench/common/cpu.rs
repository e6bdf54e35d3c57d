//! CPU time of a process, from `/proc/<pid>/stat` (user plus system time of all its threads),
//! and its use over a window as a share of one core: 100% is one core busy the whole window.

use std::process::Command;
use std::time::Instant;

/// User plus system time of `pid` so far, in clock ticks.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or `)`: count the fields
    // from the last `)`, after which field 3 (the state) comes first.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(14 - 3)?.parse().ok()?;
    let system: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(user + system)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100, Linux's usual, when it cannot be asked).
pub fn ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8_lossy(&output.stdout).trim().parse().ok())
        .filter(|ticks| *ticks > 0)
        .unwrap_or(100)
}

/// A window over which a process's CPU use is measured.
#[derive(Clone, Copy, Debug)]
pub struct CpuWindow {
    /// The process.
    pid: u32,
    /// Its ticks when the window opened.
    ticks: u64,
    /// When the window opened.
    opened: Instant,
}

impl CpuWindow {
    /// Opens a window on `pid` now; `None` when the process is gone.
    pub fn open(pid: u32) -> Option<CpuWindow> {
        Some(CpuWindow { pid, ticks: cpu_ticks(pid)?, opened: Instant::now() })
    }

    /// CPU used since the window opened, as a percentage of one core.
    pub fn percent_of_core(&self) -> Option<f64> {
        let used = cpu_ticks(self.pid)?.saturating_sub(self.ticks) as f64 / ticks_per_second() as f64;
        let seconds = self.opened.elapsed().as_secs_f64();
        (seconds > 0.0).then(|| used / seconds * 100.0)
    }
}
