//! The real processes: `bc-server` (migrated, bootstrapped with a known operator key) and
//! `bc-worker`, each with its log in the run's directory, killed when dropped; and their
//! resident memory, read from `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use better_compute::service::ApiKeyToken;

/// The binaries `cargo bench` built with the benchmark (same profile).
pub const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");
pub const BC_WORKER: &str = env!("CARGO_BIN_EXE_bc-worker");

/// A child process, killed (SIGKILL) and reaped when dropped.
pub struct Process {
    /// What it is, for messages (`bc-server`, `bc-worker#2`).
    pub name: String,
    /// The process.
    child: std::process::Child,
    /// Its stdout and stderr.
    pub log: PathBuf,
}

impl Process {
    /// Spawns `command` with its output in `log`.
    pub fn spawn(name: &str, mut command: Command, log: PathBuf) -> Result<Process, String> {
        let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err))
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        Ok(Process { name: name.to_owned(), child, log })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL, as a crash would end it, and reap it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits up to `grace` for it to exit; true if it exited by itself.
    pub fn terminate(&mut self, grace: Duration) -> bool {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    /// Sends `signal` (`STOP`, `CONT`, ...).
    pub fn signal(&self, signal: &str) -> Result<(), String> {
        let status = Command::new("kill").arg(format!("-{signal}")).arg(self.child.id().to_string()).status();
        match status {
            Ok(status) if status.success() => Ok(()),
            _ => Err(format!("cannot send SIG{signal} to {}", self.name)),
        }
    }

    /// Resident memory in KiB (`VmRSS`), if the process is alive.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.child.id())
    }

    /// The last `lines` lines of its log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Resident memory of `pid` in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// KiB as MiB with one decimal.
pub fn mib(kib: Option<u64>) -> String {
    kib.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "-".to_owned())
}

/// A free TCP port on 127.0.0.1 (bound and released: another process may take it first, which
/// the caller sees as a failure to start).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A running `bc-server`.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The operator key it was bootstrapped with.
    pub admin_token: String,
    /// The secret key it seals credentials with (workers need it).
    pub secret_key: String,
    /// The process.
    pub process: Process,
}

/// How a server is started.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Clusters a tenant may have (`--max-clusters-per-tenant`).
    pub max_clusters_per_tenant: i64,
    /// `RUST_LOG` of the process.
    pub rust_log: String,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self { max_clusters_per_tenant: 10, rust_log: std::env::var("BC_BENCH_RUST_LOG").unwrap_or("info".into()) }
    }
}

impl Server {
    /// Migrates `database_url`, then starts `bc-server` on a free port and waits for `/readyz`.
    pub async fn start(database_url: &str, dir: &Path, options: &ServerOptions) -> Result<Server, String> {
        let migrate = Command::new(BC_SERVER)
            .args(["migrate", "--database-url", database_url])
            .output()
            .map_err(|e| format!("bc-server migrate: {e}"))?;
        if !migrate.status.success() {
            return Err(format!("bc-server migrate failed: {}", String::from_utf8_lossy(&migrate.stderr)));
        }
        let port = free_port();
        let endpoint = format!("http://127.0.0.1:{port}");
        let admin_token = ApiKeyToken::generate().reveal();
        let secret_key = better_compute::secrets::SecretKey::generate_base64();
        let mut command = Command::new(BC_SERVER);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("BC_DATABASE_URL", database_url)
            .env("BC_LISTEN", format!("127.0.0.1:{port}"))
            .env("BC_SECRET_KEY", &secret_key)
            .env("BC_BOOTSTRAP_TOKEN", &admin_token)
            .env("BC_MAX_CLUSTERS_PER_TENANT", options.max_clusters_per_tenant.to_string())
            .env("RUST_LOG", &options.rust_log);
        let process = Process::spawn("bc-server", command, dir.join("bc-server.log"))?;
        let server = Server { endpoint, admin_token, secret_key, process };
        server.wait_ready().await?;
        Ok(server)
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self) -> Result<(), String> {
        let http = reqwest::Client::new();
        let url = format!("{}/readyz", self.endpoint);
        super::wait_for("bc-server ready", Duration::from_secs(30), Duration::from_millis(50), || {
            let request = http.get(&url).send();
            async move { request.await.ok().filter(|r| r.status().is_success()).map(|_| ()) }
        })
        .await
        .map_err(|e| format!("{e}\n{}", self.process.log_tail(20)))
    }
}

/// How workers are started.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// `--tick-ms`.
    pub tick_ms: u64,
    /// `--lease-ms`.
    pub lease_ms: u64,
    /// `--converging-ms`.
    pub converging_ms: u64,
    /// `--settled-ms`.
    pub settled_ms: u64,
    /// `--concurrency`.
    pub concurrency: usize,
    /// `RUST_LOG` of the process.
    pub rust_log: String,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        Self {
            tick_ms: 1000,
            lease_ms: 30_000,
            converging_ms: 30_000,
            settled_ms: 300_000,
            concurrency: 16,
            rust_log: std::env::var("BC_BENCH_RUST_LOG").unwrap_or("info".into()),
        }
    }
}

/// Starts a `bc-worker` number `n` on `database_url` with the servers' `secret_key`.
pub fn start_worker(
    n: usize,
    database_url: &str,
    secret_key: &str,
    dir: &Path,
    options: &WorkerOptions,
) -> Result<Process, String> {
    let mut command = Command::new(BC_WORKER);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("BC_DATABASE_URL", database_url)
        .env("BC_SECRET_KEY", secret_key)
        .env("RUST_LOG", &options.rust_log)
        .args(["--tick-ms", &options.tick_ms.to_string()])
        .args(["--lease-ms", &options.lease_ms.to_string()])
        .args(["--converging-ms", &options.converging_ms.to_string()])
        .args(["--settled-ms", &options.settled_ms.to_string()])
        .args(["--concurrency", &options.concurrency.to_string()]);
    // Each start gets its own log, so a killed worker's last lines stay readable.
    let mut log = dir.join(format!("bc-worker-{n}.log"));
    let mut restart = 1;
    while log.exists() {
        restart += 1;
        log = dir.join(format!("bc-worker-{n}.{restart}.log"));
    }
    Process::spawn(&format!("bc-worker#{n}"), command, log)
}
